"""Export page: downloads carry the real model; loading needs explicit trust.

Uploaded pickles are unpickled only on a server started with
``BUDGETDAG_TRUST_PICKLES=1`` (the ``trust_pickles`` fixture sets it).
"""

from __future__ import annotations

import copy
import io
import json
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from app_helpers import assert_clean, download_data, page, prefill, texts

from budgetdag_core import (
    SensorSpec,
    dumps_policy,
    dumps_policy_skops,
    loads_policy,
    loads_policy_skops,
)
from budgetdag_core.persist import _io as persist_io
from tests.core.fuzz_model_files import tiny_model
from ui import state
from ui.data import demo_dataset, load_app_demo
from ui.figures import png_problem
from ui.training import TrainSettings, train
from ui.trust import TRUST_PICKLES_ENV


@pytest.fixture
def trust_pickles(monkeypatch):
    """A server whose operator allows pickle uploads."""
    monkeypatch.setenv(TRUST_PICKLES_ENV, "1")


def export_page(at):
    return at.switch_page(page("export")).run()


def test_pickle_download_predicts_like_the_app_model(app, pima, pima_run, media):
    at = export_page(prefill(app, pima, pima_run))
    assert_clean(at)
    button = at.download_button(key=f"{state.W_DOWNLOAD}policy")
    assert button.proto.ignore_rerun  # downloading does not rerun the page
    data = download_data(at, media, f"{state.W_DOWNLOAD}policy")
    model = loads_policy(data)
    X = pima.X("test", pima.spec)
    np.testing.assert_array_equal(model.predict(X), pima_run.model.predict(X))
    np.testing.assert_allclose(model.predict_proba(X), pima_run.model.predict_proba(X))
    pd.testing.assert_frame_equal(model.trace(X), pima_run.model.trace(X))
    assert model.metadata_["sensor_spec"] == pima.spec.to_dict()
    assert model.metadata_["classes"] == list(pima_run.model.classes_)


def test_spec_and_traces_downloads(app, pima, pima_run, media):
    at = export_page(prefill(app, pima, pima_run))
    spec = download_data(at, media, f"{state.W_DOWNLOAD}spec")
    assert SensorSpec.from_json(spec.decode()) == pima_run.model.spec_
    traces = pd.read_csv(
        io.BytesIO(download_data(at, media, f"{state.W_DOWNLOAD}traces"))
    )
    assert len(traces) == len(pima.test)
    assert list(traces.columns[:4]) == ["row", "prediction", "label", "correct"]
    assert traces["row"].tolist() == pima.test.index.tolist()
    assert traces["label"].tolist() == pima.test["label"].tolist()
    assert traces["correct"].mean() == pytest.approx(1 - pima_run.metrics["error"])
    assert traces["cost"].mean() == pytest.approx(pima_run.metrics["avg_cost"])
    trace = pima_run.model.trace(pima.X("test", pima.spec))
    expected = [" > ".join(a) for a in trace["acquired"]]
    assert traces["acquired"].fillna("").tolist() == expected


def test_traces_csv_escapes_formulas(app, pima, media):
    evil = {0: "=cmd|' /C calc'!A0", 1: "@SUM(1)"}
    train_part, test_part = (
        part.assign(label=part["label"].map(evil)) for part in (pima.train, pima.test)
    )
    dataset = type(pima)(
        "evil", train_part, test_part, "label", pima.spec, kind="upload"
    )
    run = train(dataset, dataset.spec, TrainSettings(cv=2, random_state=0))
    at = export_page(prefill(app, dataset, run))
    assert_clean(at)
    csv = download_data(at, media, f"{state.W_DOWNLOAD}traces").decode()
    traces = pd.read_csv(io.StringIO(csv))
    assert set(traces["label"]) == {"'=cmd|' /C calc'!A0", "'@SUM(1)"}
    assert not any(line.startswith(("=", "@")) for line in csv.splitlines())
    assert (traces["cost"] >= 0).all()


def test_export_without_a_model_still_offers_loading(app, pima, trust_pickles):
    at = export_page(prefill(app, pima))
    assert_clean(at)
    assert not at.download_button
    assert any("Train a model first" in t for t in texts(at, "info"))
    assert at.file_uploader(key=state.W_POLICY_FILE).disabled


def load(at, data: bytes, name: str = "policy.pkl"):
    at.checkbox(key=state.W_TRUST).check().run()
    uploader = at.file_uploader(key=state.W_POLICY_FILE)
    assert not uploader.disabled
    uploader.set_value((name, data, "application/octet-stream")).run()
    assert_clean(at)
    return at


def test_loading_a_policy_needs_trust_and_replaces_the_model(
    app, pima, pima_run, trust_pickles
):
    at = export_page(prefill(app, pima))
    warning = " ".join(texts(at, "warning"))
    assert "runs code from that file" in warning
    assert at.file_uploader(key=state.W_POLICY_FILE).disabled
    at = load(at, dumps_policy(pima_run.model), "mine.pkl")
    assert any(
        "mine.pkl: 3 sensors (patient, glucose, insulin)" in s
        for s in texts(at, "success")
    )
    assert at.session_state[state.RUN] is None  # not used until asked
    at.button(key=state.W_USE_LOADED).click().run()
    assert_clean(at)
    run = at.session_state[state.RUN]
    assert run.source == "loaded from mine.pkl"
    assert run.metrics == pima_run.metrics  # evaluated on the current test set
    assert "Now using the policy from mine.pkl." in texts(at, "success")
    # A loaded (slim) model cannot lend its bank: the next training refits.
    at.switch_page(page("train")).run()
    assert not any("already fitted" in t for t in texts(at, "info"))


def test_a_file_that_is_not_a_policy_gets_a_message(app, pima, trust_pickles):
    at = export_page(prefill(app, pima))
    at = load(at, b"definitely not a pickle", "junk.pkl")
    assert any(
        "'junk.pkl' is not a usable BudgetDAG policy" in e for e in texts(at, "error")
    )
    at = load(at, pickle.dumps({"something": "else"}), "dict.pkl")
    assert any("no model bundle" in e for e in texts(at, "error"))
    assert at.session_state[state.RUN] is None


def test_version_mismatch_is_shown(app, pima, pima_run, trust_pickles):
    bundle = pickle.loads(dumps_policy(pima_run.model))
    bundle["sklearn_version"] = "0.1"
    at = export_page(prefill(app, pima))
    at = load(at, pickle.dumps(bundle), "old.pkl")
    assert any("scikit-learn 0.1" in w for w in texts(at, "warning"))


def test_a_policy_for_other_columns_is_loaded_without_results(
    app, pima, pima_run, trust_pickles
):
    other = pima.test.rename(columns={"insulin": "ins"})
    dataset = type(pima)(
        "other", other, other, "label", SensorSpec.per_column(["ins"]), kind="upload"
    )
    at = export_page(prefill(app, dataset))
    at = load(at, dumps_policy(pima_run.model))
    at.button(key=state.W_USE_LOADED).click().run()
    assert_clean(at)
    run = at.session_state[state.RUN]
    assert run.metrics is None and "'insulin'" in run.note
    for name in ("train", "explore", "tradeoff", "export"):
        at.switch_page(page(name)).run()
        assert_clean(at)
        assert not at.error, (name, texts(at, "error"))
    assert json.loads(run.spec.to_json())["sensors"][2]["name"] == "insulin"
    # The sidebar describes the policy's own sensors, not the sensor table's.
    model_line = next(c.value for c in at.sidebar.caption if "**Model:**" in c.value)
    assert "loaded from" in model_line and "3 sensors · 8 DAG states" in model_line


def test_a_loaded_policy_brings_its_sensors_to_the_sidebar(app, trust_pickles):
    at = app.run()  # landsat: 4 sensors, 16 states in the sensor table
    toy = train(
        demo_dataset(load_app_demo("toy")),
        load_app_demo("toy").spec,
        TrainSettings(cv=2, random_state=0),
    )
    at = load(export_page(at), dumps_policy(toy.model), "toy.pkl")
    at.button(key=state.W_USE_LOADED).click().run()
    assert_clean(at)
    lines = [c.value for c in at.sidebar.caption]
    model_line = next(line for line in lines if "**Model:**" in line)
    assert "toy.pkl · 3 sensors · 8 DAG states" in model_line
    assert "not evaluated" in model_line  # landsat lacks its columns
    assert "**Sensors:** 4 · 16 DAG states" in lines  # the table, for training


def test_pickle_uploads_are_off_unless_the_operator_opts_in(
    app, pima, pima_run, monkeypatch
):
    monkeypatch.delenv(TRUST_PICKLES_ENV, raising=False)
    prefill(app, pima, pima_run)
    app.session_state[state.W_TRUST] = True  # a ticked box is not enough
    at = export_page(app)
    assert_clean(at)
    keys = [u.key for u in at.get("file_uploader")]
    assert keys == [state.W_SKOPS_FILE]  # the .skops uploader only
    info = " ".join(texts(at, "info"))
    assert "pickle files is turned off" in info and f"{TRUST_PICKLES_ENV}=1" in info
    # Downloading a pickle stays.
    assert at.download_button(key=f"{state.W_DOWNLOAD}policy")
    monkeypatch.setenv(TRUST_PICKLES_ENV, "0")
    at.run()
    assert [u.key for u in at.get("file_uploader")] == [state.W_SKOPS_FILE]
    monkeypatch.setenv(TRUST_PICKLES_ENV, "1")
    at.run()
    assert_clean(at)
    assert {u.key for u in at.get("file_uploader")} == {
        state.W_SKOPS_FILE,
        state.W_POLICY_FILE,
    }


# ------------------------------------------------------------------ skops
def test_skops_download_predicts_like_the_app_model(app, pima, pima_run, media):
    at = export_page(prefill(app, pima, pima_run))
    data = download_data(at, media, f"{state.W_DOWNLOAD}skops")
    model = loads_policy_skops(data)
    X = pima.X("test", pima.spec)
    np.testing.assert_array_equal(model.predict(X), pima_run.model.predict(X))
    np.testing.assert_array_equal(
        model.predict_proba(X), pima_run.model.predict_proba(X)
    )
    assert model.metadata_["sensor_spec"] == pima.spec.to_dict()


def test_a_skops_file_loads_without_the_trust_checkbox(app, pima, pima_run):
    at = export_page(prefill(app, pima))
    assert not at.checkbox  # no pickles on this server: no trust box either
    uploader = at.file_uploader(key=state.W_SKOPS_FILE)
    assert not uploader.disabled
    data = dumps_policy_skops(pima_run.model)
    uploader.set_value(("safe.skops", data, "application/octet-stream")).run()
    assert_clean(at)
    assert any("safe.skops: 3 sensors" in s for s in texts(at, "success"))
    at.button(key=state.W_USE_LOADED).click().run()
    run = at.session_state[state.RUN]
    assert run.source == "loaded from safe.skops"
    assert run.metrics == pima_run.metrics


def test_a_skops_file_with_foreign_types_is_refused(app, pima, pima_run):
    bundle = persist_io._skops_bundle(pima_run.model, slim=True)
    bundle["extra"] = Intruder()
    at = export_page(prefill(app, pima))
    uploader = at.file_uploader(key=state.W_SKOPS_FILE)
    uploader.set_value(("odd.skops", sio.dumps(bundle), "application/octet-stream"))
    at.run()
    assert_clean(at)
    assert any(
        "'odd.skops' is not a usable BudgetDAG policy" in e and "Intruder" in e
        for e in texts(at, "error")
    )
    assert at.session_state[state.RUN] is None


def test_a_skops_file_with_a_broken_tree_is_refused_not_run(app, pima):
    # Issue 12, case 2: allowed types only, but a boosting tree's child index
    # points past its node array; predicting with it crashed the server.
    broken, _ = tiny_model("hgb")  # gradient boosting per state
    broken = copy.deepcopy(broken)
    nodes = broken.bank_.models_[-1]._predictors[0][0].nodes
    nodes["left"][np.flatnonzero(nodes["is_leaf"] == 0)[0]] = 10**6
    at = export_page(prefill(app, pima))
    uploader = at.file_uploader(key=state.W_SKOPS_FILE)
    data = dumps_policy_skops(broken)
    uploader.set_value(("bad.skops", data, "application/octet-stream")).run()
    assert_clean(at)
    errors = " ".join(texts(at, "error"))
    assert "'bad.skops' is not a usable BudgetDAG policy" in errors
    assert "child index" in errors
    assert at.session_state[state.RUN] is None
    assert state.W_USE_LOADED not in [b.key for b in at.button]


class Intruder:
    """A type that no policy file holds."""


# ---------------------------------------------------------------- figures
def test_figures_download_as_html(app, pima, pima_run, media):
    at = export_page(prefill(app, pima, pima_run))
    html = download_data(at, media, f"{state.W_DOWNLOAD}html_dag_test").decode()
    assert html.lstrip().lower().startswith("<!doctype html>") and "cdn.plot.ly" in html
    assert '"name":"states"' in html.replace(" ", "")
    png = at.download_button(key=f"{state.W_DOWNLOAD}png_dag_test")
    problem = png_problem()
    assert png.disabled == (problem is not None)
    if problem is not None:  # say so instead of failing
        assert any(problem in c.value for c in at.caption)
    # No curve traced yet: only the DAG figures are offered.
    assert not [b for b in at.download_button if "html_tradeoff" in (b.key or "")]


def test_the_deployment_snippet_runs_as_shown(app, pima, pima_run, tmp_path):
    at = export_page(prefill(app, pima, pima_run))
    assert_clean(at)
    code = next(c.value for c in at.code if "session.observe" in c.value)
    assert "mapping column -> value" in code and "model.spec_.groups" in code
    (tmp_path / "budgetdag_pima.skops").write_bytes(dumps_policy_skops(pima_run.model))
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    # The example is the first test row: the session predicts what the model does.
    X = pima.X("test", pima.spec).iloc[:1]
    expected = pima_run.model.predict(X)[0]
    assert out.stdout.split()[0] == str(expected)
