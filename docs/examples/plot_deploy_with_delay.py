"""
Deployment with slow sensors: one at a time, with acquisition delays
====================================================================

In deployment a sensor's values arrive only after it is measured, and
measuring takes time: a lab sends results back in hours, a satellite revisits
in days. A policy that acquires one sensor at a time saves cost *and*
waiting, since an example stops as soon as it is sure enough.

This example runs a fitted landsat policy in a loop like a deployment's:
:meth:`~budgetdag_core.BudgetDAGClassifier.start` a session per example, ask
``next_sensor()``, acquire it from a simulated instrument that takes a delay
per band, ``observe()`` the values and ``predict()`` once the session stops.
The delays are simulated on a clock (not slept), so the example runs in
seconds; in deployment ``acquire`` would call the instrument and wait.
"""

import pandas as pd
import plotly.express as px

from budgetdag_core import BudgetDAGClassifier, load_demo

demo = load_demo("landsat")
train = demo.train.sample(1500, random_state=0)
model = BudgetDAGClassifier(demo.spec, cost_scale=0.05, cv=3, random_state=0)
model.fit(train[demo.spec.columns], train[demo.label])

#: Hours until each band's values arrive once requested (made up).
DELAY_HOURS = {"band1": 2.0, "band2": 6.0, "band3": 12.0, "band4": 24.0}
print(model.spec_.names, DELAY_HOURS)

# %%
# A simulated instrument
# ----------------------
# ``acquire`` returns a sensor's values (a mapping column -> value, as
# ``observe`` expects) and advances the example's clock by that sensor's
# delay. Here the values come from a held-out row; the policy never sees a
# column before it is acquired.


class Instrument:
    """Measures one held-out row, one sensor at a time, on a simulated clock."""

    def __init__(self, row: pd.Series) -> None:
        self.row = row
        self.hours = 0.0

    def acquire(self, sensor: str) -> dict[str, float]:
        self.hours += DELAY_HOURS[sensor]
        return {c: float(self.row[c]) for c in model.spec_.groups[sensor]}


# %%
# The deployment loop
# -------------------
# One session per example. ``session.acquired`` and ``session.cost`` say what
# it bought; the instrument's clock says how long the example waited.

rows = []
for index, row in demo.X_test.head(300).iterrows():
    instrument = Instrument(row)
    session = model.start()
    while (sensor := session.next_sensor()) is not None:
        session.observe(sensor, instrument.acquire(sensor))
    rows.append(
        {
            "prediction": session.predict(),
            "truth": demo.y_test[index],
            "sensors": " > ".join(session.acquired) or "(none)",
            "cost": session.cost,
            "hours": instrument.hours,
        }
    )
served = pd.DataFrame(rows)
print(served.head(8).to_string(index=False))

# %%
# What the policy saved
# ---------------------
# Against acquiring every band for every example (cost 4, and the slowest
# band's 24 hours at best, 44 one after the other): the same decisions as
# ``model.trace`` makes on complete rows, here paid one sensor at a time.

error = (served["prediction"] != served["truth"]).mean()
hours = served["hours"]
print(
    f"error {error:.3f}, mean cost {served['cost'].mean():.2f} of 4, "
    f"mean wait {hours.mean():.1f} h (median {hours.median():.0f} h)"
)
print(served["sensors"].value_counts().head(6).to_string())
same = (model.trace(demo.X_test.head(300))["cost"].to_numpy() == served["cost"]).all()
print("same costs as trace:", same)

# %%
# How long examples waited: most are served by the fast bands.

fig = px.histogram(
    served,
    x="hours",
    nbins=24,
    labels={"hours": "hours until the prediction"},
    title="Waiting time per example under the policy (simulated delays)",
)
fig.show()
