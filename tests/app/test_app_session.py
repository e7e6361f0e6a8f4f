"""Reloading the tab keeps the work: the session token in the URL (ui.session)."""

from __future__ import annotations

from app_helpers import APP, TIMEOUT, assert_clean, finish_jobs, page, prefill, texts
from streamlit.testing.v1 import AppTest

from ui import state, store


def reload(token: str, where: str = "explore") -> AppTest:
    """A new browser session opening the same address (a reload)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["session"] = token
    return at.switch_page(page(where)).run()


def test_a_reload_brings_back_the_data_and_the_trained_model(app, pima):
    at = prefill(app, pima).switch_page(page("train")).run()
    token = at.query_params["session"]
    assert store.valid_token(token) and at.session_state[state.TOKEN] == token
    at.number_input(key=state.W_CV).set_value(3).run()
    at.button(key=state.W_TRAIN).click().run()
    run = finish_jobs(at).session_state[state.RUN]
    assert run is not None

    back = reload(token)
    assert_clean(back)
    assert back.session_state[state.DATASET].token == pima.token
    restored = back.session_state[state.RUN]
    assert restored.metrics == run.metrics
    assert restored.model.get_params()["cv"] == 3
    assert back.session_state[state.W_CV] == 3  # the form's settings too
    assert any("Welcome back" in t for t in texts(back, "success"))
    sidebar = " ".join(c.value for c in back.sidebar.caption)
    assert f"test error {run.metrics['error']:.1%}" in sidebar
    assert "Kept for reloads" in sidebar
    # The work moved to a fresh token: the old address no longer opens it.
    moved = back.query_params["session"]
    assert store.valid_token(moved) and moved != token
    assert store.load(token) is None and store.load(moved) is not None
    assert reload(token).session_state[state.DATASET].name == "landsat"


def test_another_or_a_malformed_token_starts_afresh(app, pima, pima_run):
    at = prefill(app, pima, pima_run).switch_page(page("train")).run()
    mine = at.query_params["session"]
    chosen = store.new_token()  # e.g. planted in a link by someone else
    other = reload(chosen)
    assert other.session_state[state.DATASET].name == "landsat"  # the default
    # Said, not silent: the address's session is not kept here.
    assert any("not kept on this server" in t for t in texts(other, "info"))
    assert other.query_params["session"] != chosen  # not adopted
    assert (
        state.RUN not in other.session_state or other.session_state[state.RUN] is None
    )
    bad = reload("../" + mine[3:])
    assert bad.query_params["session"] != "../" + mine[3:]
    assert store.valid_token(bad.query_params["session"])
    assert bad.session_state[state.DATASET].name == "landsat"
    assert any("not kept on this server" in t for t in texts(bad, "info"))


def test_a_reload_brings_back_an_uploaded_table_with_its_cleaning(app):
    from test_app_data import small_csv, upload, use_button

    at = upload(app.run(), small_csv(60).to_csv(index=False).encode(), "mine.csv")
    use_button(at).click().run()
    assert at.session_state[state.DATASET].name == "mine.csv"
    token = at.query_params["session"]
    back = reload(token, where="data")
    assert_clean(back)
    dataset = back.session_state[state.DATASET]
    assert (dataset.name, dataset.kind, len(dataset.train)) == (
        "mine.csv",
        "upload",
        45,
    )
    assert back.session_state[state.UPLOAD].name == "mine.csv"
    assert back.session_state[state.W_SOURCE] == "upload"
    assert "mine.csv" in " ".join(c.value for c in back.caption)


def test_a_reload_during_training_gets_the_model_when_it_ends(app, pima):
    from ui import jobs

    at = prefill(app, pima).switch_page(page("train")).run()
    at.number_input(key=state.W_CV).set_value(3).run()
    token = at.query_params["session"]
    at.button(key=state.W_TRAIN).click().run()  # and reload at once
    job = jobs.current(token)
    assert job is not None
    back = reload(token)
    # It followed the work to the new token (or, already done, was collected
    # by the reloaded page's first run).
    assert job.collected or jobs.current(back.query_params["session"]) is job
    assert jobs.current(token) is None
    back = finish_jobs(back)
    assert_clean(back)
    run = back.session_state[state.RUN]
    assert run is not None and run.model.get_params()["cv"] == 3
    assert any("Trained in" in t for t in texts(back, "success"))


def test_a_reload_keeps_the_traced_curve(app, pima, pima_run):
    at = prefill(app, pima, pima_run).switch_page(page("tradeoff")).run()
    at.slider(key=state.W_TRADE_POINTS).set_value(4).run()
    at.button(key=state.W_TRADE_RUN).click().run()
    result = finish_jobs(at).session_state[state.SWEEP]["result"]
    back = reload(at.query_params["session"], where="tradeoff")
    assert_clean(back)
    kept = back.session_state[state.SWEEP]["result"]
    assert list(kept.cost_scales) == list(result.cost_scales)
    assert back.button(key=state.W_TRADE_RUN).label == "Recompute"  # no retrace
    # The current model is still the curve's point of its scale.
    from ui.sweep import curve_point

    run = back.session_state[state.RUN]
    point = curve_point(run, kept)
    assert point is not None
    assert kept.cost_scales[point] == run.model.cost_scale


def test_a_fresh_visit_keeps_a_few_kilobytes_not_the_demo_rows(app):
    """A demo is kept as its name and split: about 1 000 anonymous visits
    used to fill the store's 2 GB with copies of the landsat rows."""
    at = app.run()
    assert at.session_state[state.DATASET].name == "landsat"
    kept = store.store_dir() / f"{at.query_params['session']}.pkl"
    assert kept.stat().st_size < 20_000
    back = reload(at.query_params["session"], where="data")
    assert_clean(back)
    restored = back.session_state[state.DATASET]
    original = at.session_state[state.DATASET]
    assert restored.token == original.token
    assert restored.train.equals(original.train) and restored.test.equals(original.test)


def test_a_demo_pickles_as_its_name_and_an_upload_as_its_recipe(pima):
    import pickle

    from test_app_data import small_csv

    from budgetdag_core.tables import Fix
    from ui.data import Upload

    data = pickle.dumps(pima)
    assert len(data) < 2_000
    back = pickle.loads(data)
    assert back.train.equals(pima.train) and back.spec == pima.spec
    frame = small_csv(60)
    frame.loc[0, "lab_a"] = None
    upload = Upload("mine.csv", frame, "test")
    upload.add_fix(Fix("impute", ("lab_a",)))
    again = pickle.loads(pickle.dumps(upload))
    assert again.work.equals(upload.work) and again.fixes == upload.fixes


def test_an_address_open_in_two_tabs_gives_the_training_to_both(app, pima, monkeypatch):
    """A duplicated tab mid-training: the first tab keeps its address and gets
    the model; the second is told, continues from a copy and gets it too."""
    from ui import jobs, session

    at = prefill(app, pima).switch_page(page("train")).run()
    at.number_input(key=state.W_CV).set_value(3).run()
    token = at.query_params["session"]
    at.button(key=state.W_TRAIN).click().run()
    job = jobs.current(token)
    assert job is not None
    # AppTest's sessions share one id: say the first tab is still connected.
    monkeypatch.setattr(session, "open_elsewhere", lambda name: name == token)
    twin = reload(token, where="train")
    assert_clean(twin)
    copy = twin.query_params["session"]
    assert copy != token
    # It follows the job (or, already done, collected it in its first run).
    assert jobs.current(copy) is job or twin.session_state[state.RUN] is not None
    assert jobs.current(token) is job  # the first tab still follows it
    assert any("also open in another tab" in t for t in texts(twin, "info"))
    assert store.load(token) is not None and store.load(copy) is not None

    twin, at = finish_jobs(twin), finish_jobs(at)
    for tab in (at, twin):
        assert_clean(tab)
        assert tab.session_state[state.RUN] is not None
        assert any("Trained in" in t for t in texts(tab, "success"))
    assert at.query_params["session"] == token
    assert jobs.current(token) is None and jobs.current(copy) is None
