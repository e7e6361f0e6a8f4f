"""A loaded model is the source of truth: its label and its re-runs use its own
parameters (issue 15). The files are those written by an older main
(``tests/data``), so this also checks that the app loads them."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from app_helpers import assert_clean, finish_jobs, page, prefill

from budgetdag_core import PolicyVersionWarning, load_policy, toy_dataset
from ui import state, sweep
from ui.data import demo_dataset
from ui.training import CLASSIFIERS, describe_model, run_from_model, train

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture(scope="module")
def toy():
    """The rows the files in ``tests/data`` were fitted on."""
    return demo_dataset(toy_dataset(400, 50, random_state=3))


def _skops(name: str) -> bytes:
    return (DATA / f"policy_{name}.skops").read_bytes()


def _load_skops(at, data: bytes, name: str):
    at.file_uploader(key=state.W_SKOPS_FILE).set_value(
        (name, data, "application/octet-stream")
    ).run()
    at.button(key=state.W_USE_LOADED).click().run()
    assert_clean(at)
    return at


def test_a_loaded_boosting_bank_model_is_labelled_with_its_bank(app, toy):
    at = prefill(app, toy).switch_page(page("export")).run()
    at = _load_skops(at, _skops("hgb"), "hgb.skops")
    run = at.session_state[state.RUN]
    assert run.source == "loaded from hgb.skops"
    assert run.settings.classifier == "hist_gradient_boosting"
    assert run.params["bank_kind"] == "hgb"
    at.switch_page(page("train")).run()
    assert_clean(at)
    captions = " ".join(c.value for c in at.caption)
    assert CLASSIFIERS["hist_gradient_boosting"] in captions
    assert CLASSIFIERS["logistic"] not in captions


def test_tracing_a_loaded_boosting_model_reuses_its_bank_kind(app, toy):
    at = prefill(app, toy).switch_page(page("export")).run()
    at = _load_skops(at, _skops("hgb"), "hgb.skops")
    at.switch_page(page("tradeoff")).run()
    at.slider(key=state.W_TRADE_POINTS).set_value(4).run()
    at.button(key=state.W_TRADE_RUN).click().run()
    finish_jobs(at)
    assert_clean(at)
    result = at.session_state[state.SWEEP]["result"]
    loaded = at.session_state[state.RUN].model
    for model in result.models:
        assert model.bank_kind == "hgb"
        assert model.get_params()["policy_degree"] == loaded.policy_degree
    # The bank the sweep fitted is gradient boosting, as the loaded one: the file
    # predates the cross-fitted LightGBM engine that bank kind "hgb" now uses.
    assert type(loaded.bank_.models_[-1]).__name__ == "HistGradientBoostingClassifier"
    swept = result.bank.models_[-1]
    assert isinstance(swept, list)  # cross-fitted: one model per fold
    assert {type(m).__name__ for m in swept} == {"LightGBMTrees"}


def _load_pickle(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PolicyVersionWarning)
        return load_policy(DATA / f"policy_{name}.pkl")


def test_a_loaded_model_keeps_its_policy_features_in_a_sweep(toy):
    model = _load_pickle("logistic")
    run = run_from_model(model, toy, "loaded from logistic.pkl")
    # Fitted with classifier=LogisticRegression(): a bank the form does not
    # offer as such, named by its class.
    assert run.settings.classifier == "custom"
    assert "LogisticRegression bank" in describe_model(run.model)
    assert "policy features sensors+confidence" in describe_model(run.model)
    result = sweep.compute_sweep(toy, run.spec, run.params, 3, previous=run)
    assert {m.policy_features for m in result.models} == {"sensors+confidence"}
    assert {m.bank_kind for m in result.models} == {"per_subset"}


def test_a_budget_fit_of_a_loaded_model_keeps_its_parameters(toy):
    model = _load_pickle("hgb")
    run = run_from_model(model, toy, "loaded from hgb.pkl")
    fitted = train(toy, run.spec, run.params, run, target_budget=1.5)
    assert fitted.params["bank_kind"] == "hgb"
    assert fitted.settings.target_budget == 1.5
    assert fitted.settings.classifier == "hist_gradient_boosting"
