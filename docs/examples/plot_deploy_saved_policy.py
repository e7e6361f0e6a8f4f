"""
Deploying a saved policy, one sensor at a time
==============================================

Where the policy runs, sensor values do not exist until they are acquired. This
example trains a policy, saves it in the safe skops format, loads it as a
deployment would, and runs the loop: ask ``next_sensor()``, measure that
sensor, pass its values to ``observe()`` as a mapping column -> value, and
``predict()`` once the policy stops.
"""

import tempfile
from pathlib import Path

from budgetdag_core import (
    BudgetDAGClassifier,
    load_demo,
    load_policy_skops,
    path_of,
    save_policy_skops,
)
from budgetdag_core.plotting import dag_figure

demo = load_demo("landsat")
train = demo.train.sample(1000, random_state=0)
model = BudgetDAGClassifier(demo.spec, cost_scale=0.05, cv=3, random_state=0)
model.fit(train[demo.spec.columns], train[demo.label])

folder = Path(tempfile.mkdtemp())
path = save_policy_skops(model, folder / "landsat.skops")
print(path.name, f"{path.stat().st_size / 1e6:.1f} MB")

# %%
# Load it where the sensors are
# -----------------------------
# ``load_policy_skops`` rebuilds only the types a policy is made of and checks
# the model's arrays before returning it. The fitted spec, ``spec_``, says
# which columns each sensor reveals: ``spec_.groups[sensor]``.

deployed = load_policy_skops(path)
for sensor, columns in deployed.spec_.groups.items():
    print(f"{sensor}: cost {deployed.spec_.costs[sensor]:g}, columns {columns}")

# %%
# The loop
# --------
# Here "measuring" a sensor reads its columns from a held-out row; in
# deployment ``acquire`` calls the instrument, the lab or the user.

row = demo.X_test.iloc[7]


def acquire(sensor):
    """Measure one sensor: a mapping column -> value for its columns."""
    return {column: float(row[column]) for column in deployed.spec_.groups[sensor]}


session = deployed.start()
while (sensor := session.next_sensor()) is not None:
    values = acquire(sensor)
    print(f"the policy asks for {sensor}; observed {len(values)} values")
    session.observe(sensor, values)
print("acquired", session.acquired, "cost", session.cost)
print("prediction", session.predict(), "true label", demo.y_test.iloc[7])
print({str(k): round(p, 3) for k, p in session.predict_proba().items()})

# %%
# The example's path on the DAG, among the flow of 500 test examples:
# :func:`~budgetdag_core.path_of` takes the same decisions as the session.

sample = demo.test.sample(500, random_state=0)
fig = dag_figure(
    deployed,
    sample[demo.spec.columns],
    sample[demo.label],
    highlight_path=path_of(deployed, row).states,
    title="The deployed example's path",
)
fig.show()

# %%
# Wrong calls are refused with a message
# --------------------------------------
# A sensor the policy did not ask for, or a mapping that lacks a column, raises
# ``ValueError`` naming the problem; the session keeps waiting for the sensor
# it asked for.

session = deployed.start()
asked = session.next_sensor()
other = next(s for s in deployed.spec_.names if s != asked)
for sensor, values in [(other, acquire(other)), (asked, {"f0": 1.0})]:
    try:
        session.observe(sensor, values)
    except ValueError as error:
        print("ValueError:", error)
print("still waiting for", session.next_sensor())

# %%
# The same decisions as the batch API
# -----------------------------------
# ``predict`` and ``trace`` route whole tables through the same policies; a
# session gives the same answer, row by row.

rows = demo.X_test.iloc[:50]
batch = deployed.predict(rows)
one_by_one = [deployed.start().run(r.to_dict()) for _, r in rows.iterrows()]
print("sessions agree with predict on", sum(batch == one_by_one), "of", len(rows))
print(deployed.trace(rows)[["acquired", "cost", "prediction"]].head())
