"""Restores are exact or say what they are (ui.session, ui.store): a session
over the store's cap is kept slim or without its model, and never as an
older snapshot; damaged files and refusing disks are said, not silent."""

from __future__ import annotations

import errno
from dataclasses import replace

import pytest
from app_helpers import assert_clean, page, prefill, texts
from test_app_session import reload

from ui import session, state, store
from ui.training import TrainSettings, train


def sidebar(at) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def kept_file(at):
    return store.store_dir() / f"{at.query_params['session']}.pkl"


def limit_between(monkeypatch, low: int, high: int) -> None:
    """The store's cap (``BUDGETDAG_STORE_MAX_MB``) halfway from ``low`` to
    ``high`` bytes."""
    assert low < high
    monkeypatch.setenv(store.ENV_MAX_MB, str((low + high) / 2 / 2**20))


@pytest.fixture(scope="module")
def other_run(pima):
    """A second model on pima: another cost scale, so another object."""
    settings = TrainSettings(cost_scale=0.02, cv=3, random_state=0)
    return train(pima, pima.spec, settings)


def test_a_model_over_the_cap_comes_back_slim_and_says_so(
    app, pima, pima_run, monkeypatch
):
    at = prefill(app, pima, pima_run).switch_page(page("train")).run()
    kept = store.decode(kept_file(at).read_bytes())
    full, slim = store.encode(kept), store.encode(kept, slim=True)
    assert "Kept for reloads (24 h)" in sidebar(at)
    limit_between(monkeypatch, len(slim), len(full))
    at.session_state[state.RUN] = replace(pima_run)  # a new model, as a training
    at.run()
    assert "but not its bank's training predictions" in sidebar(at)

    back = reload(at.query_params["session"])  # Explore DAG: routes test rows
    assert_clean(back)
    run = back.session_state[state.RUN]
    assert run.metrics == pima_run.metrics
    assert not hasattr(run.model.bank_, "oof_proba_")
    X = pima.X("test", pima.spec)
    assert (run.model.predict(X) == pima_run.model.predict(X)).all()
    welcome = " ".join(texts(back, "success"))
    assert "the model trained at" in welcome and "on pima (3 sensors" in welcome
    assert "Not kept: its bank's training predictions" in welcome


def test_a_model_too_big_even_slim_is_not_kept_nor_an_older_one(
    app, pima, pima_run, other_run, monkeypatch
):
    """The issue's case: the store held the previous model's session, and a
    reload brought that model back as current."""
    at = prefill(app, pima, pima_run).switch_page(page("train")).run()
    assert store.load(at.query_params["session"])["run"] is not None
    kept = store.decode(kept_file(at).read_bytes())
    bare = store.encode({**kept, "run": None, "sweep": None, "not_kept": "x" * 300})
    slim = store.encode({**kept, "run": other_run}, slim=True)
    limit_between(monkeypatch, len(bare), len(slim))
    at.session_state[state.RUN] = other_run
    at.run()
    assert_clean(at)
    assert at.session_state[state.RUN] is other_run  # still shown in this tab
    assert "but not the model trained at" in sidebar(at)

    back = reload(at.query_params["session"])
    assert_clean(back)
    assert back.session_state[state.RUN] is None  # neither model is current
    assert back.session_state[state.DATASET].token == pima.token
    assert "Model:** not trained yet" in sidebar(back)
    # The sidebar says why, for as long as no model is current.
    assert "the last model was too large to keep for reloads" in sidebar(back)
    assert "Kept for reloads (24 h)" in sidebar(back)  # what it holds now
    warning = " ".join(texts(back, "warning"))
    assert "Not kept for reloads: the model trained at" in warning
    assert "on pima (3 sensors, 8 DAG states)" in warning
    assert "No model is current" in warning
    assert "and the model" not in " ".join(texts(back, "success"))
    again = reload(back.query_params["session"])  # said once
    assert again.session_state[state.RUN] is None
    assert not any("Not kept" in t for t in texts(again, "warning"))


def test_a_training_over_the_cap_says_so_before_it_starts(app, pima, monkeypatch):
    at = prefill(app, pima).switch_page(page("train")).run()
    assert not any("per session for reloads" in t for t in texts(at, "warning"))
    monkeypatch.setenv(store.ENV_MAX_MB, "0.001")
    at.run()
    said = " ".join(texts(at, "warning"))
    assert "over the 0.001 MB this server keeps per session" in said
    assert "a reload will not bring it back" in said


@pytest.mark.parametrize("damage", ["truncated", "altered"])
def test_a_damaged_session_file_gives_a_fresh_session_with_a_notice(
    app, pima, pima_run, damage
):
    at = prefill(app, pima, pima_run).switch_page(page("train")).run()
    path = kept_file(at)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        middle = len(data) // 2
        path.write_bytes(
            data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]
        )
    back = reload(at.query_params["session"], where="data")
    assert_clean(back)
    assert back.session_state[state.DATASET].name == "landsat"  # fresh
    assert state.RUN not in back.session_state or back.session_state[state.RUN] is None
    warning = " ".join(texts(back, "warning"))
    assert "could not be restored" in warning and "damaged" in warning
    assert not path.exists()


@pytest.mark.parametrize(
    ("code", "words"),
    [(errno.ENOSPC, "the disk is full"), (errno.EROFS, "the disk is read-only")],
)
def test_a_refusing_disk_is_said_and_the_model_still_shown(
    app, pima, pima_run, monkeypatch, code, words
):
    def refuse(path, data):
        raise OSError(code, "refused")

    monkeypatch.setattr(store, "_write", refuse)
    at = prefill(app, pima, pima_run).switch_page(page("explore")).run()
    assert_clean(at)
    assert at.session_state[state.RUN] is pima_run
    assert "test error" in sidebar(at)  # the model, as before
    assert f"Not kept for reloads: the server could not write it ({words})" in (
        sidebar(at)
    )
    assert any(words in t.value for t in at.toast)


def test_a_snapshot_the_disk_can_neither_replace_nor_delete_is_not_restored(
    monkeypatch, tmp_path
):
    token = store.new_token()
    assert store.save(token, {"dataset": "older"}) is None

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "read-only")

    monkeypatch.setattr(store, "_write", refuse)
    monkeypatch.setattr(type(tmp_path), "unlink", refuse)
    why = store.save(token, {"dataset": "newer"})
    assert why is not None and "read-only" in why
    monkeypatch.undo()
    snapshot, problem = store.read(token)
    assert snapshot is None and "older than what this session showed last" in problem
    assert store.save(token, {"dataset": "newest"}) is None  # the disk is back
    assert store.load(token)["dataset"] == "newest"


def test_a_model_of_other_data_is_never_restored_as_current(pima, pima_run):
    token = store.new_token()
    stray = replace(pima_run, dataset_token="demo:landsat")
    kept = session.snapshot({state.DATASET: pima, state.RUN: stray})
    assert store.save(token, kept) is None
    back = reload(token)
    assert_clean(back)
    assert back.session_state[state.DATASET].token == pima.token
    assert back.session_state[state.RUN] is None


def test_a_job_lost_with_the_server_is_said_once_on_the_reload(pima, pima_run):
    """A snapshot kept while a training ran, and no such job on this server
    (it restarted): the reload says the training was interrupted."""
    from ui import jobs

    token = store.new_token()
    running = jobs.Job(what="train", label="Training on pima...", work=print)
    assert running.running  # queued nowhere: as the old server left it
    kept = session.snapshot({state.DATASET: pima, state.RUN: pima_run}, running)
    assert store.save(token, kept) is None
    back = reload(token)
    assert_clean(back)
    warning = " ".join(texts(back, "warning"))
    assert "Training on pima (started at" in warning
    assert "was interrupted: the server restarted" in warning
    assert back.session_state[state.RUN].metrics == pima_run.metrics  # the rest
    again = reload(back.query_params["session"])
    assert not any("interrupted" in t for t in texts(again, "warning"))


@pytest.mark.parametrize("kind", ["hist_gradient_boosting", "random_forest"])
def test_the_size_said_before_a_training_is_of_the_real_ones_order(
    pima, pima_run, kind
):
    """Never far below (the warning must come), at most some times above."""
    from ui import footprint

    settings = TrainSettings(cost_scale=0.0043, cv=3, classifier=kind)
    run = (
        pima_run
        if kind == "hist_gradient_boosting"
        else train(pima, pima.spec, settings)
    )
    real = len(store.encode({"run": run}))
    slim = len(store.encode({"run": run}, slim=True))
    guess = footprint.estimate(pima, settings, run.model.sensor_dag_.n_states)
    assert real / 2 <= guess.full <= 8 * real
    assert slim / 2 <= guess.slim <= 8 * slim
