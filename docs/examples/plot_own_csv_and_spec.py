"""
Your own CSV and sensor spec, end to end
========================================

Your data is a CSV file whose columns come from instruments of different
prices; the sensor spec, a JSON file, says which columns each instrument
measures and what it costs. This example writes both (a made-up clinic: a
free questionnaire, a blood panel and an imaging scan), then runs them the
two ways a user would: the library, and the ``budgetdag`` command line.
"""

import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from budgetdag_core import BudgetDAGClassifier, SensorSpec
from budgetdag_core.cli import main as budgetdag
from budgetdag_core.plotting import dag_figure

rng = np.random.default_rng(0)
n = 1200
risk = rng.normal(size=n)  # the hidden state the instruments measure
table = pd.DataFrame(
    {
        "age": 50 + 10 * (0.4 * risk + rng.normal(size=n)),
        "smoker": (0.5 * risk + rng.normal(size=n) > 0.5).astype(int),
        "crp": 0.6 * risk + rng.normal(size=n),
        "ldl": 0.5 * risk + rng.normal(size=n),
        "glucose": 0.4 * risk + rng.normal(size=n),
        "plaque": risk + 0.2 * rng.normal(size=n),
        "stenosis": risk + 0.3 * rng.normal(size=n),
        "label": (risk + 0.1 * rng.normal(size=n) > 0.3).astype(int),
    }
)
folder = Path(tempfile.mkdtemp())
table.iloc[:900].to_csv(folder / "train.csv", index=False)
table.iloc[900:].to_csv(folder / "test.csv", index=False)

# %%
# The sensor spec
# ---------------
# One entry per sensor: its name, the columns it reveals, its cost (here in
# euros). Columns not in the spec (the label) are never read as features.

spec_file = folder / "sensors.json"
spec_file.write_text(
    json.dumps(
        {
            "sensors": [
                {"name": "questionnaire", "columns": ["age", "smoker"], "cost": 1},
                {"name": "blood", "columns": ["crp", "ldl", "glucose"], "cost": 15},
                {"name": "imaging", "columns": ["plaque", "stenosis"], "cost": 120},
            ]
        },
        indent=2,
    )
)
spec = SensorSpec.from_file(spec_file)  # checked: names, columns, costs
print(spec)

# %%
# With the library
# ----------------
# ``cost_scale`` says what one misdiagnosis is worth in euros: at 0.002 an
# error weighs as much as 500 euros of tests.

train = pd.read_csv(folder / "train.csv")
test = pd.read_csv(folder / "test.csv")
model = BudgetDAGClassifier(spec, cost_scale=0.002, cv=3, random_state=0)
model.fit(train[spec.columns], train["label"])
print(model.evaluate(test[spec.columns], test["label"]))

# %%
# What each patient got: every one fills in the questionnaire; some stop
# there, some get the blood panel, and the scan is bought where the cheaper
# sensors leave doubt. The fixed alternatives, for comparison: everyone
# scanned errs less but costs 120 euros each.

trace = model.trace(test[spec.columns])
print(trace["acquired"].value_counts().to_string())
states = model.evaluate_states(test[spec.columns], test["label"])
print(states[["sensors", "avg_cost", "error"]].round(3).to_string(index=False))

# %%
# The DAG, coloured by how many test patients stopped at each state.

fig = dag_figure(model, test[spec.columns], test["label"])
fig.show()

# %%
# With the command line
# ---------------------
# The same files, the same settings: ``budgetdag train`` writes the model,
# ``budgetdag evaluate`` scores it (both print JSON). In a shell:
# ``budgetdag train train.csv --label label --sensors sensors.json ...``.

model_file = folder / "model.pkl"
budgetdag(
    [
        "train",
        str(folder / "train.csv"),
        "--label=label",
        f"--sensors={spec_file}",
        "--cost-scale=0.002",
        "--cv=3",
        f"--out={model_file}",
    ]
)
budgetdag(["evaluate", str(model_file), str(folder / "test.csv")])
