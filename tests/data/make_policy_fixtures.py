"""Write the policy files that ``tests/core/test_policy_fixtures.py`` loads.

Run once, from the repository root, with the code whose file format the test
pins (the fixtures were written by main at commit 6f58714, before the
core/app boundary moves of issue 15)::

    PYTHONPATH=$PWD python tests/data/make_policy_fixtures.py

Each model is fitted on the first 400 rows of the teaching toy and saved as a
pickle and a skops file, with its predictions and probabilities on the first
50 test rows in ``policy_fixtures_expected.json``. Do not re-run it to make the
test pass: the point of the files is that they were written by older code.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from sklearn.linear_model import LogisticRegression

from budgetdag_core import (
    BudgetDAGClassifier,
    save_policy,
    save_policy_skops,
    toy_dataset,
)

HERE = Path(__file__).parent
N_ROWS = 50


def main() -> None:
    demo = toy_dataset(400, N_ROWS, random_state=3)
    X = demo.X_train
    y = demo.y_train
    X_test = demo.X_test
    models = {
        "hgb": BudgetDAGClassifier(
            demo.spec, cost_scale=0.03, cv=3, random_state=0, bank_kind="hgb"
        ),
        "logistic": BudgetDAGClassifier(
            demo.spec,
            cost_scale=0.03,
            cv=3,
            random_state=0,
            classifier=LogisticRegression(),
            policy_features="sensors+confidence",
        ),
    }
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    expected: dict[str, object] = {"written_by_commit": commit, "models": {}}
    for name, model in models.items():
        model.fit(X, y)
        save_policy(model, HERE / f"policy_{name}.pkl")
        save_policy_skops(model, HERE / f"policy_{name}.skops")
        expected["models"][name] = {
            "bank": type(model.bank_).__name__,
            "predict": model.predict(X_test).tolist(),
            "predict_proba": model.predict_proba(X_test).round(12).tolist(),
            "cost": model.trace(X_test)["cost"].tolist(),
        }
    (HERE / "policy_fixtures_expected.json").write_text(_dumps(expected))


def _dumps(expected: dict) -> str:
    """JSON with one line per list, so the file diffs readably."""
    models = ",\n".join(
        f"  {json.dumps(name)}: {{\n"
        + ",\n".join(f"   {json.dumps(k)}: {json.dumps(v)}" for k, v in fields.items())
        + "\n  }"
        for name, fields in expected["models"].items()
    )
    commit = json.dumps(expected["written_by_commit"])
    return f'{{\n "written_by_commit": {commit},\n "models": {{\n{models}\n }}\n}}\n'


if __name__ == "__main__":
    main()
