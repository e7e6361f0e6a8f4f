"""
Many sensors: the sparse DAG and how to read what it chose
==========================================================

The spam demo has 57 sensors (one per column, cost 1 each): a full DAG would
have 2^57 states. Beyond 12 sensors the classifier's default (``dag="auto"``)
grows a **sparse DAG** instead: the sensor sets that training rows reach when
acquiring one sensor at a time, at most ``max_states`` of them (default
1 000). This example fits it and reads what it chose: how many states of each
size, which sensors come first, and what each test email paid.

To keep the documentation build fast it subsamples the training rows, uses 3
folds and lowers ``max_states`` to 300; the rest is the default.
"""

import plotly.express as px

from budgetdag_core import BudgetDAGClassifier, load_demo

demo = load_demo("spam")
train = demo.train.sample(1500, random_state=0)
X_train, y_train = train[demo.spec.columns], train[demo.label]
print(demo.spec.n_sensors, "sensors, total cost", demo.spec.total_cost)

model = BudgetDAGClassifier(
    demo.spec, cost_scale=0.002, cv=3, max_states=300, random_state=0
)
model.fit(X_train, y_train)
dag = model.sensor_dag_
print(type(dag).__name__, dag.n_states, "states")

# %%
# The states it grew
# ------------------
# Each state is a set of sensors; the sparse DAG keeps about
# ``max_states / n_sensors`` states per number of sensors, those most training
# rows reached, so it goes deep rather than wide.

sizes = [len(dag.sensors_in(k)) for k in range(dag.n_states)]
per_size = {size: sizes.count(size) for size in sorted(set(sizes))}
print("states per number of sensors:", per_size)

# %%
# What the policy does on the test emails
# ---------------------------------------
# ``trace`` lists, per email, the sensors acquired in order, their cost and
# where the policy stopped. The first sensor is the policy's opening move; the
# number of sensors varies with how hard the email is.

trace = model.trace(demo.X_test)
print(model.evaluate(demo.X_test, demo.y_test))
first = trace["acquired"].map(lambda acquired: acquired[0] if acquired else "(none)")
print("first sensor:", first.value_counts().head(5).to_dict())
for acquired, cost in trace[["acquired", "cost"]].head(4).itertuples(index=False):
    print(f"cost {cost:2.0f}: " + " > ".join(acquired))

# %%
# The sensors bought most often, over all test emails.

bought = trace["acquired"].explode().value_counts().head(12)
print(bought.to_string())

# %%
# How many sensors each email paid for: a few for most, many for the hard
# ones. All 57 would cost 57 per email.

fig = px.histogram(
    trace,
    x="n_sensors",
    labels={"n_sensors": "sensors acquired per test email"},
    title="Sparse DAG on spam: sensors bought per email",
)
fig.show()

# %%
# Against fixed sensor sets
# -------------------------
# ``evaluate_states`` applies the classifier of chosen states to every email:
# here the empty set and the largest states grown. The adaptive policy spends
# its budget where an email needs it.

largest = sorted(range(dag.n_states), key=lambda k: sizes[k])[-3:]
baselines = model.evaluate_states(demo.X_test, demo.y_test, states=[0, *largest])
print(baselines[["n_sensors", "avg_cost", "error"]].round(4).to_string(index=False))
