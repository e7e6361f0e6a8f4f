"""
A regression and its loss table
===============================

:class:`~budgetdag_core.BudgetDAGRegressor` learns which sensors to acquire
for a regression target, with the squared (or absolute) error as the loss of
stopping. Its bank keeps each training row's out-of-fold loss at every state:
that **loss table** is all Graph-Reduce needs (section 2.4 of the paper), and
:class:`~budgetdag_core.LossTablePolicy` learns policies from such a table
alone, without labels or a model (e.g. from a human expert's errors per
sensor subset).

The data: scikit-learn's Friedman #1 (``y`` depends on the first five of ten
features), grouped into three sensors of different costs.
"""

import numpy as np
import pandas as pd
import plotly.express as px
from sklearn.datasets import make_friedman1

from budgetdag_core import BudgetDAGRegressor, LossTablePolicy, SensorSpec

X, y = make_friedman1(n_samples=900, noise=1.0, random_state=0)
X = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
spec = SensorSpec(
    {"cheap": ["x3", "x4"], "medium": ["x0", "x1"], "costly": ["x2", "x5", "x6"]},
    {"cheap": 1.0, "medium": 2.0, "costly": 4.0},
)
X_train, X_test = X.iloc[:600][spec.columns], X.iloc[600:][spec.columns]
y_train, y_test = y[:600], y[600:]

# %%
# Errors and costs across cost scales
# -----------------------------------
# ``cost_scale`` prices one unit of sensor cost in units of squared error. The
# bank does not depend on it: ``refit_policies`` returns a model with new
# policies learned on the same bank.

model = BudgetDAGRegressor(
    spec, cost_scale=0.0, regressor="ridge", cv=3, random_state=0
).fit(X_train, y_train)
rows = []
for scale in (0.0, 1.0, 5.0, 10.0, 20.0):
    scaled = model.refit_policies(X_train, y_train, cost_scale=scale)
    rows.append({"cost_scale": scale, **scaled.evaluate(X_test, y_test)})
table = pd.DataFrame(rows)[["cost_scale", "mse", "mae", "avg_cost", "avg_sensors"]]
print(table.round(3).to_string(index=False))

fig = px.line(
    table,
    x="avg_cost",
    y="mse",
    markers=True,
    hover_data=["cost_scale", "avg_sensors"],
    title="Test MSE against average acquisition cost",
)
fig.show()

# %%
# The loss table
# --------------
# One row per training example, one column per DAG state (sensor subset): the
# out-of-fold squared error of that state's regressor. The empty state
# predicts the mean.

model = model.refit_policies(X_train, y_train, cost_scale=1.0)
losses = model.bank_.oof_losses(np.asarray(y_train), loss="squared")
dag = model.sensor_dag_
labels = ["+".join(dag.state_names(k)) or "{}" for k in range(dag.n_states)]
loss_table = pd.DataFrame(losses, columns=labels)
print(loss_table.mean().round(2).to_string())

# %%
# Policies from the loss table alone
# ----------------------------------
# :class:`~budgetdag_core.LossTablePolicy` sees the feature values (to decide
# from) and the losses, nothing else. With the same learner settings it
# learns the regressor's own policies.

policy = LossTablePolicy(spec, cost_scale=1.0, policy_degree=model.policy_degree)
policy.fit(X_train, losses)  # columns in the order of policy.state_labels()
same = (policy.predict_state(X_test) == model.predict_state(X_test)).mean()
print(f"same stop state as the regressor for {same:.0%} of the test rows")
