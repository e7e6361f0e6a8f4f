"""The session token in the URL, and the session's work kept across reloads.

:func:`begin` (first thing of every app run) gives a new browser session a
random token in the URL (``?session=...``) or, when the URL already holds a
valid one, restores what :func:`keep` saved under it (:mod:`ui.store`): the
data in use, an uploaded table with its cleaning steps, the sensor table, the
last model, the last traced curve and the form's settings. :func:`keep` (last
thing of every run) saves them again when one of them changed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import streamlit as st

from . import jobs, state, store
from .training import TrainedRun

log = logging.getLogger("budgetdag.app")

PARAM = "session"  # the query parameter holding the token
KEPT_WHAT = (
    f"The data in use (demo or uploaded, with its cleaning steps), the sensor table, "
    f"the last model with its results, the last traced trade-off curve and the Train "
    f"settings are kept on this server "
    f"for {store.EXPIRY_HOURS} hours after your last change, under the `{PARAM}=` "
    "part of the address: reloading the tab brings them back. That part is private "
    "to you: remove it from a link you share."
)


def token() -> str | None:
    """This session's token (None before :func:`begin`)."""
    return st.session_state.get(state.TOKEN)


def begin() -> None:
    """Give the session its token, in the URL; on the session's first run,
    restore the work kept under the URL's token, if any.

    A session always gets a fresh token, so a token is never shared by two
    people, even when one hands the other an address. The kept work (and a
    job not yet collected) moves from the URL's token to it (a reload), or,
    when that address is still open in another tab (a duplicated tab, the
    address pasted into a second window), is copied: the other tab keeps its
    work, this one continues from a copy, and both follow the same job and
    get its result.
    """
    ss = st.session_state
    if state.TOKEN in ss:
        if st.query_params.get(PARAM) != ss[state.TOKEN]:
            st.query_params[PARAM] = ss[state.TOKEN]  # e.g. a page link dropped it
        return
    given = st.query_params.get(PARAM)
    fresh = store.new_token()
    if store.valid_token(given):
        snapshot, damaged = store.read(given)
        twin = open_elsewhere(given)
        # Whoever handed out the address (e.g. a link with a token of their
        # own) cannot read what follows: it goes under the fresh token.
        if twin:
            store.copy(given, fresh)
            jobs.share(given, fresh)
        else:
            if snapshot is not None:
                store.rename(given, fresh)
            jobs.rekey(given, fresh)
        _hold(fresh)
        if snapshot is not None:
            _restore(snapshot, fresh)
        elif damaged is not None:
            _tell_damaged(damaged)
        elif not twin and jobs.current(fresh) is None:
            _tell_unknown()
        if twin:
            _tell_twin(fresh)
    else:
        _hold(fresh)
        if given:
            _tell_unknown()
    st.query_params[PARAM] = fresh


def _tell_unknown() -> None:
    """The address named a session this server does not keep (any more)."""
    state.notice(
        "The session in this address is not kept on this server: work is kept "
        f"for {store.EXPIRY_HOURS} hours after its last change, on the server "
        "that did it, and the address may be older, from another server or "
        "mistyped. This is a fresh session, on a bundled demo.",
        "info",
    )


def _tell_damaged(why: str) -> None:
    """The address's kept work exists but cannot be restored as it was."""
    log.warning("A session's kept work was not restored: %s", why)
    state.notice(
        f"The work kept for this address could not be restored: {why}. This is "
        "a fresh session, on a bundled demo.",
        "warning",
    )


# Which browser session holds each token handed out by this server process.
_HOLDERS: dict[str, str] = {}
_MAX_HOLDERS = 10_000  # then the entries of closed sessions are dropped


def _session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def _connected(session_id: str) -> bool:
    """Whether a browser is connected to the Streamlit session now."""
    from streamlit.runtime import Runtime

    return Runtime.exists() and Runtime.instance().is_active_session(session_id)


def _hold(name: str) -> None:
    st.session_state[state.TOKEN] = name
    holder = _session_id()
    if holder is None:
        return
    if len(_HOLDERS) >= _MAX_HOLDERS:
        for old, sid in list(_HOLDERS.items()):
            if not _connected(sid):
                del _HOLDERS[old]
    _HOLDERS[name] = holder


def open_elsewhere(name: str) -> bool:
    """Whether another browser session, still connected, holds token ``name``
    (the same address open in another tab). A reloaded tab's old session
    has disconnected by then."""
    holder = _HOLDERS.get(name)
    return holder is not None and holder != _session_id() and _connected(holder)


def _tell_twin(name: str) -> None:
    job = jobs.current(name)
    following = (
        f" {job.label.rstrip('.')} runs there: it shows here too, and its result "
        "comes to both tabs."
        if job is not None and job.running
        else ""
    )
    state.notice(
        "This address is also open in another tab or window. This tab continues "
        "from a copy of the work kept there, under an address of its own; what "
        f"you do here from now on does not change the other tab.{following}",
        "info",
    )


def describe_run(run: TrainedRun, data: str) -> str:
    """The model in words, as restore notices name it: how and when it came,
    its data and its sensors ("the model trained at 05:41 UTC on 28 Nov on
    pima (3 sensors, 8 DAG states)")."""
    when = (
        ""
        if run.trained_at is None
        else time.strftime(" at %H:%M UTC on %d %b", time.gmtime(run.trained_at))
    )
    spec = run.spec
    return (
        f"the model {run.source}{when} on {data} ({spec.n_sensors} sensor"
        f"{'s' if spec.n_sensors != 1 else ''}, {run.model.sensor_dag_.n_states} "
        "DAG states)"
    )


def _restore(snapshot: dict[str, Any], name: str) -> None:
    ss = st.session_state
    dataset = snapshot.get("dataset")
    if dataset is None:
        return
    ss[state.DATASET] = dataset
    ss[state.UPLOAD] = snapshot.get("upload")
    if snapshot.get("spec_table") is not None:
        state.set_spec_table(snapshot["spec_table"])
    run = snapshot.get("run")
    if run is not None and run.dataset_token != dataset.token:
        run = None  # never beside data it was not trained on
    ss[state.RUN] = run
    if snapshot.get("sweep") is not None:
        ss[state.SWEEP] = snapshot["sweep"]
    for key, value in snapshot.get("settings", {}).items():
        if key in state.DEFAULTS:
            ss[key] = value
    ss[state.LINK_READ] = True  # the kept work wins over the link's demo set-up
    told = snapshot.get("not_kept") or snapshot.get("job")
    # Said once: then kept again without what was just said.
    ss[state.KEPT] = None if told else _fingerprint(jobs.current(name))
    model = "" if run is None else f" and {describe_run(run, dataset.name)}"
    slim = snapshot.get("slim")
    state.notice(
        f"Welcome back: restored {dataset.name}{model} (kept for "
        f"{store.EXPIRY_HOURS} hours)."
        + ("" if run is None or not slim else f" Not kept: {slim}."),
        "success",
    )
    if snapshot.get("not_kept"):
        ss[state.MODEL_NOT_KEPT] = snapshot["not_kept"]  # the sidebar says why
        state.notice(
            f"Not kept for reloads: {snapshot['not_kept']}. No model is current: "
            "train again on the Train page.",
            "warning",
        )
    job = snapshot.get("job")
    if job is not None and jobs.current(name) is None:
        since = time.strftime("%H:%M UTC", time.gmtime(job["since"]))
        state.notice(
            f"{job['label'].rstrip('.')} (started at {since}) was interrupted: the "
            "server restarted while it ran, and nothing of it was kept. Start it "
            "again; the rest of your work is restored.",
            "warning",
        )


def _settings(ss: Mapping[str, Any]) -> dict[str, Any]:
    return {key: ss[key] for key in state.DEFAULTS if key in ss}


def _fingerprint(job: jobs.Job | None) -> tuple:
    ss = st.session_state
    upload = ss.get(state.UPLOAD)
    return (
        id(ss.get(state.DATASET)),
        id(upload),
        None if upload is None else len(upload.fixes),
        id(ss.get(state.SPEC_TABLE)),
        id(ss.get(state.RUN)),
        id(getattr(ss.get(state.RUN), "replay_bank", None)),  # Teaching's refit
        id(ss.get(state.SWEEP)),
        repr(sorted(_settings(ss).items())),
        id(job) if job is not None and job.running else None,
    )


def snapshot(ss: Mapping[str, Any], job: jobs.Job | None = None) -> dict[str, Any]:
    """What :func:`keep` saves of the session state ``ss`` (and of its
    ``job``, while it runs: a reload after a server restart says it was
    interrupted)."""
    run = ss.get(state.RUN)
    running = None
    if job is not None and job.running:
        since = time.time() - (time.monotonic() - job.submitted)
        running = {"what": job.what, "label": job.label, "since": since}
    return {
        "dataset": ss.get(state.DATASET),
        "upload": ss.get(state.UPLOAD),
        "spec_table": ss.get(state.SPEC_TABLE),
        # Without its memo of figures and downloads: they are rebuilt on demand.
        "run": None if run is None else replace(run, cache={}),
        # In the same pickle as the run: a model picked on the curve stays
        # the very object of the curve (ui.sweep.curve_point).
        "sweep": ss.get(state.SWEEP),
        "settings": _settings(ss),
        "job": running,
    }


def save(name: str, kept: dict[str, Any]) -> tuple[str | None, str | None]:
    """Keep the snapshot ``kept`` under token ``name``, or what of it fits.

    Returns why nothing was kept (or None), and what was left out (or None):
    over :func:`ui.store.max_bytes`, the model is kept slim (its bank
    without the training predictions that only learn new policies: every
    page still works), else without the model and its curve, the snapshot
    then saying which model was not kept. Never the older snapshot.
    """
    data = store.encode(kept)
    run = kept.get("run")
    full = store.over_limit(data)
    if run is None or full is None:
        return store.write(name, data), None
    left = (
        f"its bank's training predictions ({full} with them): every page "
        "works, a retrain refits the bank"
    )
    # Teaching's replay bank too would be slim: its page refits one then.
    lean = replace(run, replay_bank=None)
    data = store.encode({**kept, "run": lean, "slim": left}, slim=True)
    slim = store.over_limit(data)
    if slim is not None:
        dataset = kept.get("dataset")
        curve = "" if kept.get("sweep") is None else " and its trade-off curve"
        left = (
            f"{describe_run(run, getattr(dataset, 'name', 'the data'))}{curve}: "
            f"{slim} even without its bank's training predictions; download the "
            "model on the Export page to keep it"
        )
        data = store.encode({**kept, "run": None, "sweep": None, "not_kept": left})
    problem = store.write(name, data)
    return problem, None if problem is not None else left


def keep() -> bool:
    """Save the session's work when it changed since the last save; whether
    what the sidebar says of it changed (the caller redraws it).

    A snapshot over the size cap is kept slim or without the model
    (:func:`save`); one the disk refuses is not kept: the sidebar says so,
    and a toast when it starts.
    """
    ss = st.session_state
    name = token()
    if name is None or ss.get(state.DATASET) is None:
        return False
    job = jobs.current(name)
    mark = _fingerprint(job)
    if ss.get(state.KEPT) == mark:
        return False
    before = (ss.get(state.STORE_PROBLEM), ss.get(state.STORE_PARTIAL))
    try:
        problem, partial = save(name, snapshot(ss, job))
    except Exception as exc:  # a bug must not stop the page
        log.exception("Could not keep the session's work")
        problem, partial = f"it could not be written ({type(exc).__name__})", None
    ss[state.STORE_PROBLEM], ss[state.STORE_PARTIAL] = problem, partial
    ss[state.KEPT] = mark
    if problem is not None and problem != before[0]:
        log.warning("A session's work was not kept: %s", problem)
        st.toast(f"Your work is not kept for reloads: {problem}.", icon="⚠️")
    return (problem, partial) != before
