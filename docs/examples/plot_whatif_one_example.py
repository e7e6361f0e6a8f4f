"""
What-if on one example
======================

The app's What-if page walks one example through the policy as deployment
would: the policy asks for a sensor, sees only its value, and decides again.
:func:`~budgetdag_core.path_of` does the same in Python and records each
decision; editing the example's values shows how the path changes.

The toy data has two cheap, noisy sensors (cost 1) and one precise sensor
(cost 4), each measuring the same hidden value whose sign is the class. At
this cost scale the policy reads the precise sensor first, stops when its
value is far from 0, and pays for more only near the boundary.
"""

from budgetdag_core import BudgetDAGClassifier, path_of, toy_dataset
from budgetdag_core.plotting import dag_figure

demo = toy_dataset(n_train=600, n_test=200, random_state=0)
model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
model.fit(demo.X_train, demo.y_train)
print(model.evaluate(demo.X_test, demo.y_test))

# %%
# One example's path
# ------------------
# ``decisions`` lists every decision with what was held, what was bought, the
# cost so far and the prediction of the state's classifier.

row = demo.X_test.iloc[[0]]
print(row.to_string())
path = path_of(model, row)
print(path.decisions.to_string())
print("prediction", path.prediction, "at cost", path.cost)

# %%
# What if the first sensor had read a value near the boundary?
# -------------------------------------------------------------
# Only acquired sensors are ever read, so editing a value the policy never
# asks for changes nothing; editing the first sensor's reading can send the
# example further down the DAG.

first = path.acquired[0]
for value in (-2.0, -0.3, 0.0, 0.3, 2.0):
    edited = row.copy()
    edited[demo.spec.groups[first][0]] = value
    walk = path_of(model, edited)
    print(
        f"{first} = {value:5.1f}: bought {walk.acquired}, cost {walk.cost:g}, "
        f"predicts {walk.prediction} ({max(walk.proba.values()):.2f})"
    )

# %%
# The path on the DAG
# -------------------
# Node size is the number of test examples arriving at a state, colour the
# share that stops there; the example's path is highlighted.

near = row.copy()
near[demo.spec.groups[first][0]] = 0.0
fig = dag_figure(
    model,
    demo.X_test,
    demo.y_test,
    highlight_path=path_of(model, near).states,
    title="One example near the boundary",
)
fig.show()
