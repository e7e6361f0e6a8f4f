"""Policy files written by older code keep loading and predicting the same.

The files in ``tests/data/`` were written by main at commit 6f58714, before the
modules were moved around (issue 15); ``tests/data/make_policy_fixtures.py``
says how. A moved or renamed class must stay loadable through the loaders'
alias map (``budgetdag_core.persist``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from budgetdag_core import (
    BudgetDAGClassifier,
    PolicyVersionWarning,
    load_policy,
    load_policy_skops,
    toy_dataset,
)

DATA = Path(__file__).parent.parent / "data"
EXPECTED = json.loads((DATA / "policy_fixtures_expected.json").read_text())["models"]


def _test_rows():
    return toy_dataset(400, 50, random_state=3).X_test


def _load(name: str, fmt: str) -> BudgetDAGClassifier:
    with warnings.catch_warnings():
        # The files name the library version they were written with.
        warnings.simplefilter("ignore", PolicyVersionWarning)
        if fmt == "pickle":
            return load_policy(DATA / f"policy_{name}.pkl")
        return load_policy_skops(DATA / f"policy_{name}.skops")


@pytest.mark.parametrize("fmt", ["pickle", "skops"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_old_policy_file_predicts_the_same(name, fmt):
    model = _load(name, fmt)
    expected = EXPECTED[name]
    X_test = _test_rows()
    assert isinstance(model, BudgetDAGClassifier)
    assert type(model.bank_).__name__ == expected["bank"]
    np.testing.assert_array_equal(model.predict(X_test), expected["predict"])
    np.testing.assert_allclose(
        model.predict_proba(X_test), expected["predict_proba"], atol=1e-10
    )
    np.testing.assert_allclose(model.trace(X_test)["cost"], expected["cost"])


@pytest.mark.parametrize("fmt", ["pickle", "skops"])
def test_old_policy_file_keeps_its_parameters(fmt):
    hgb = _load("hgb", fmt).get_params()
    logistic = _load("logistic", fmt).get_params()
    assert hgb["bank_kind"] == "hgb" and hgb["classifier"] is None
    assert logistic["policy_features"] == "sensors+confidence"
    assert type(logistic["classifier"]).__name__ == "LogisticRegression"


def test_a_model_pickled_before_newer_parameters_loads_with_their_old_meaning():
    """Parameters added later (bank kind, confidence features, the soft subset
    reward) are filled in by the loader with the behaviour of the old model."""
    import pickle

    from sklearn.linear_model import LogisticRegression

    from budgetdag_core import loads_policy
    from budgetdag_core.persist import policy_bundle

    demo = toy_dataset(200, 30, random_state=5)
    model = BudgetDAGClassifier(
        demo.spec,
        cost_scale=0.03,
        cv=3,
        random_state=0,
        classifier=LogisticRegression(),
    ).fit(demo.X_train, demo.y_train)
    bundle = policy_bundle(model)
    old = bundle["model"] = pickle.loads(pickle.dumps(bundle["model"]))
    for name in ("bank_kind", "policy_features", "subset_reward", "loss_matrix"):
        delattr(old, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PolicyVersionWarning)
        loaded = loads_policy(pickle.dumps(bundle))
    params = loaded.get_params()
    assert params["bank_kind"] == "per_subset"
    assert params["policy_features"] == "sensors"
    assert params["subset_reward"] == "correct"
    assert params["loss_matrix"] is None
    np.testing.assert_array_equal(
        loaded.predict(demo.X_test), model.predict(demo.X_test)
    )
    assert loaded.uses_confidence_ is False
