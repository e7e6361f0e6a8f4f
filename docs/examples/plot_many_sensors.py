"""
Many sensors: the default DAG and how to read what it chose
===========================================================

The spam demo has 57 sensors (one per column, cost 1 each): a full DAG would
have 2^57 states. Beyond 12 sensors the classifier's default (``dag="auto"``)
builds two *strategies* on one any-subset bank instead, and keeps the
simpler whose loss on validation rows carved from the training data is within
one standard error of the lowest:

- ``"chain"``: one greedy order of the sensors (the confidence cascade's),
  where every row may stop after each sensor: few states, each learned from
  all the rows;
- ``"routed"``: the chain plus per-example routes: a *routing* sensor and an
  order of the other sensors per group of its values, and a tree of routes
  by the bank's posterior (from the chain's first sensor, rows split by their
  class probabilities, each part buying its own next sensor).

A third, ``dag="sparse"``, grows a **sparse DAG** of the sensor sets that
training rows reach when acquiring one sensor at a time (at most
``max_states`` states, default 1 000); ``"auto"`` leaves it out, as it cost
most of a fit for no measured gain.

This example fits the default and reads what it chose: the strategy and the
validation scores behind the choice, the states, which sensors come first,
and what each test email paid. To keep the documentation build fast it
subsamples the training rows, uses 3 folds and lowers ``max_states`` to 300;
the rest is the default.
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

# %%
# Which strategy, and why
# -----------------------
# ``strategy_`` names the DAG kept; ``strategy_choice_.scores`` holds each
# strategy built, with its validation stop loss (the error), average cost and
# their sum weighted by ``cost_scale``, the objective the choice minimises.

print("kept:", model.strategy_)
for strategy, (score,) in model.strategy_choice_.scores.items():
    print(
        f"{strategy:>6}: error {score['stop_loss']:.4f}, cost {score['cost']:.2f}, "
        f"objective {score['loss']:.4f}"
    )

# %%
# The states
# ----------
# Each state is a set of sensors. A chain has one state per number of
# sensors; a routed DAG adds the states of its routes (a grown DAG,
# ``dag="sparse"``, about ``max_states / n_sensors`` per number of sensors).

dag = model.sensor_dag_
sizes = [len(dag.sensors_in(k)) for k in range(dag.n_states)]
print(dag.n_states, "states; largest holds", max(sizes), "sensors")
print("states per number of sensors (first 10):", [sizes.count(n) for n in range(10)])

# %%
# What the policy does on the test emails
# ---------------------------------------
# ``trace`` lists, per email, the sensors acquired in order, their cost and
# where the policy stopped. On a chain every email follows the same order and
# the policy decides where to stop; the number of sensors varies with how
# hard the email is.

trace = model.trace(demo.X_test)
print(model.evaluate(demo.X_test, demo.y_test))
for acquired, cost in trace[["acquired", "cost"]].head(4).itertuples(index=False):
    print(f"cost {cost:2.0f}: " + " > ".join(acquired))

# %%
# The sensors bought most often, over all test emails.

bought = trace["acquired"].explode().value_counts().head(12)
print(bought.to_string())

# %%
# How many sensors each email paid for: a few for most, more for the hard
# ones. All 57 would cost 57 per email.

fig = px.histogram(
    trace,
    x="n_sensors",
    labels={"n_sensors": "sensors acquired per test email"},
    title=f"spam, dag='auto' ({model.strategy_}): sensors bought per email",
)
fig.show()

# %%
# Against fixed sensor sets
# -------------------------
# ``evaluate_states`` applies the classifier of chosen states to every email:
# here the empty set and the largest states. The adaptive policy spends its
# budget where an email needs it.

largest = sorted(range(dag.n_states), key=lambda k: sizes[k])[-3:]
baselines = model.evaluate_states(demo.X_test, demo.y_test, states=[0, *largest])
print(baselines[["n_sensors", "avg_cost", "error"]].round(4).to_string(index=False))
