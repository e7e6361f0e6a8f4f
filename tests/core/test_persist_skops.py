"""The skops policy format: round trips, and files with foreign types refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.ensemble import RandomForestClassifier

from budgetdag_core import (
    BudgetDAGClassifier,
    BudgetDAGRegressor,
    PolicyVersionWarning,
    dumps_policy_skops,
    fit_for_budget,
    load_policy_skops,
    loads_policy_skops,
    save_policy_skops,
)
from budgetdag_core.persist import SKOPS_TRUSTED_TYPES
from budgetdag_core.persist import _io as persist_io

from ..conftest import SYNTH_SPEC, make_synthetic


@pytest.fixture(scope="module")
def data():
    X, y = make_synthetic(300, seed=1)
    labels = np.array(["red", "green", "blue"])[y]  # string classes survive too
    return X.iloc[:220], labels[:220], X.iloc[220:]


def _fit(data, **params):
    X, y, _ = data
    model = BudgetDAGClassifier(SYNTH_SPEC, cost_scale=0.05, cv=3, random_state=0)
    return model.set_params(**params).fit(X, y)


@pytest.mark.parametrize("learner", ["filter_tree", "cost_regression"])
def test_round_trip_predicts_the_same(data, tmp_path, learner):
    model = _fit(data, policy_learner=learner)
    X_test = data[2]
    path = save_policy_skops(model, tmp_path / "policy.skops")
    loaded = load_policy_skops(path)
    np.testing.assert_array_equal(loaded.predict(X_test), model.predict(X_test))
    np.testing.assert_array_equal(
        loaded.predict_proba(X_test), model.predict_proba(X_test)
    )
    assert loaded.trace(X_test).equals(model.trace(X_test))
    assert loaded.spec_.to_json() == model.spec_.to_json()
    assert loaded.metadata_["feature_columns"] == list(X_test.columns)
    assert list(loaded.metadata_["classes"]) == ["blue", "green", "red"]
    # The one-at-a-time session works on the loaded model.
    row = X_test.iloc[0]
    session = loaded.start()
    while (sensor := session.next_sensor()) is not None:
        session.observe(sensor, {c: row[c] for c in SYNTH_SPEC.groups[sensor]})
    assert session.predict() == model.predict(X_test.iloc[[0]])[0]


def test_tree_ensemble_bank_round_trips(data):
    forest = RandomForestClassifier(n_estimators=5, random_state=0)
    model = _fit(data, classifier=forest)
    loaded = loads_policy_skops(dumps_policy_skops(model))
    np.testing.assert_array_equal(
        loaded.predict_proba(data[2]), model.predict_proba(data[2])
    )


def test_every_type_in_a_policy_file_is_on_the_list(data):
    found = sio.get_untrusted_types(data=dumps_policy_skops(_fit(data)))
    assert "budgetdag_core.estimator._classifier.BudgetDAGClassifier" in found
    assert set(found) <= set(SKOPS_TRUSTED_TYPES)


class Intruder:
    """A type no policy holds."""

    def __init__(self) -> None:
        self.payload = "anything"


def test_a_file_with_a_foreign_type_is_refused(data):
    bundle = persist_io._skops_bundle(_fit(data), slim=True)
    bundle["extra"] = Intruder()
    blob = sio.dumps(bundle)
    with pytest.raises(ValueError, match="Intruder"):
        loads_policy_skops(blob)


def test_not_a_skops_file_is_a_value_error():
    with pytest.raises(ValueError, match="not a skops file"):
        loads_policy_skops(b"this is not a zip archive")


def test_other_library_version_warns(data, monkeypatch):
    blob = dumps_policy_skops(_fit(data))
    monkeypatch.setattr(persist_io, "__version__", "0.0.0-other")
    with pytest.warns(PolicyVersionWarning, match="budgetdag_core"):
        loads_policy_skops(blob)


def test_a_budget_model_keeps_its_report(data):
    X, y, X_test = data
    model = fit_for_budget(X, y, SYNTH_SPEC, 1.0, cv=3, random_state=0)
    loaded = loads_policy_skops(dumps_policy_skops(model))
    np.testing.assert_array_equal(loaded.predict(X_test), model.predict(X_test))
    assert hasattr(model, "budget_report_")  # the caller's model is untouched
    report, again = model.budget_report_, loaded.budget_report_
    assert again.cost_scale == report.cost_scale and again.met == report.met
    pd.testing.assert_frame_equal(again.history, report.history)
    assert "plain_attributes" not in loaded.metadata_


def test_a_subset_dag_and_a_regressor_round_trip(data):
    X, y, X_test = data
    model = _fit(data, n_subsets=3)
    loaded = loads_policy_skops(dumps_policy_skops(model))
    np.testing.assert_array_equal(loaded.predict(X_test), model.predict(X_test))
    pd.testing.assert_frame_equal(
        loaded.subset_selection_.history, model.subset_selection_.history
    )
    assert loaded.subset_selection_.subsets == model.subset_selection_.subsets
    # The bank's subsets come back too, so the loaded bank is reusable.
    assert loaded.bank_.subset_selection_ is loaded.subset_selection_
    assert model.bank_.subset_selection_ is model.subset_selection_  # untouched
    target = X["s1"] + X["w1"]
    regressor = BudgetDAGRegressor(SYNTH_SPEC, cost_scale=0.05, cv=3, random_state=0)
    regressor.fit(X.drop(columns=[]), target)
    again = loads_policy_skops(dumps_policy_skops(regressor))
    np.testing.assert_array_equal(again.predict(X_test), regressor.predict(X_test))
    assert again.metadata_["task"] == "regression"


def test_a_model_whose_graph_views_were_read_round_trips(data):
    X, y, X_test = data
    model = _fit(data)
    # networkx caches ``G.edges`` as a view referring back to the graph, which
    # skops cannot store (endless recursion); the export stores a clean copy.
    assert model.dag_.edges[0, 1] is not None
    loaded = loads_policy_skops(dumps_policy_skops(model))
    np.testing.assert_array_equal(loaded.predict(X_test), model.predict(X_test))
    assert sorted(loaded.dag_.edges) == sorted(model.dag_.edges)
    assert "edges" in vars(model.dag_)  # the caller's model is left alone


def test_the_dump_writes_skops_own_archive_with_a_quick_name_check(data):
    """skops checks each array's name against the archive's ``namelist()``
    before writing it, a list built each time: quadratic in the arrays.
    ``_skops_dumps`` writes the same archive through a zip file whose names
    answer ``in`` at once."""
    import io
    import json
    import zipfile
    from typing import Any

    bundle = persist_io._skops_bundle(_fit(data), True)
    ours = zipfile.ZipFile(io.BytesIO(persist_io._skops_dumps(bundle)))
    theirs = zipfile.ZipFile(
        io.BytesIO(sio.dumps(bundle, compression=zipfile.ZIP_DEFLATED))
    )
    assert ours.namelist() == theirs.namelist()
    assert len(ours.namelist()) > 10
    for name in ours.namelist():
        if name != "schema.json":
            assert ours.read(name) == theirs.read(name), name

    def schema(archive: zipfile.ZipFile) -> Any:
        # Memo ids of objects made while saving (a list of a tuple's items)
        # differ from one dump to the next.
        def plain(node: Any) -> Any:
            if isinstance(node, dict):
                return {k: plain(v) for k, v in node.items() if k != "__id__"}
            if isinstance(node, list):
                return [plain(v) for v in node]
            return node

        return plain(json.loads(archive.read("schema.json")))

    assert schema(ours) == schema(theirs)
    names = persist_io._IndexedZip(io.BytesIO(), "w")
    names.writestr("a.npy", b"")
    assert "a.npy" in names.namelist() and "b.npy" not in names.namelist()


def test_a_model_too_large_for_a_loadable_file_is_refused_when_saved(
    data, tmp_path, monkeypatch
):
    """A file the loader would refuse is not written: the save says why and
    what to use instead (a 2 048-state per-state booster's file had 177 943
    members and a 634 MB schema)."""
    from budgetdag_core.persist import _skops_checks

    model = _fit(data)
    monkeypatch.setattr(_skops_checks, "MAX_MEMBERS", 5)
    path = tmp_path / "policy.skops"
    with pytest.raises(ValueError, match=r"too large for a skops file.*members"):
        save_policy_skops(model, path)
    assert not path.exists()
    with pytest.raises(ValueError, match="save_policy"):
        dumps_policy_skops(model)
