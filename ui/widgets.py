"""Small Streamlit helpers shared by the pages: messages, guards, status."""

from __future__ import annotations

import functools
import logging
import math
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import streamlit as st

from budgetdag_core import Dataset, Progress, SensorSpec
from ui.spec_table import SpecCheck

from . import jobs, plan, session, state, store
from .data import demo_dataset, load_app_demo
from .estimate import (
    busy_factor,
    kernels_compiling,
    known_probe,
    press_to_result,
    progress_shares,
    roughly,
    settings_probe,
    stretched,
    training_parts,
    training_seconds,
)
from .jobs import Job
from .training import (
    Settings,
    TrainedRun,
    TrainSettings,
    app_n_jobs,
    reusable_bank,
    searches_scale,
    train,
    uses_subsets,
)

T = TypeVar("T")

log = logging.getLogger("budgetdag.app")

PAGES = {
    "data": "pages/data.py",
    "sensors": "pages/sensors.py",
    "train": "pages/train.py",
    "explore": "pages/explore.py",
    "whatif": "pages/whatif.py",
    "tradeoff": "pages/tradeoff.py",
    "teaching": "pages/teaching.py",
    "export": "pages/export.py",
}


def enter_page() -> None:
    """Route a page that runs outside ``app.py`` back through it.

    A fresh server whose first request is a page URL runs that ``pages/`` script
    on its own (Streamlit's legacy multipage mode), without the navigation, the
    default demo or the sidebar. Switching to ``app.py`` restores all three.
    Never cache this: it must look at each session's own state on every run.
    """
    if not st.session_state.get(state.IN_APP):
        st.switch_page("app.py", query_params=st.query_params.to_dict())


@st.cache_data(show_spinner="Loading the demo data...")
def cached_demo(name: str) -> Dataset:
    """A bundled demo, read from disk once per server (each caller gets a copy)."""
    return load_app_demo(name)


def default_dataset() -> Dataset:
    return demo_dataset(cached_demo(state.DEFAULTS[state.W_DEMO]))


@functools.cache
def help_texts() -> dict[str, str]:
    """The widgets' help texts by widget key (``ui/help.toml``)."""
    with (Path(__file__).parent / "help.toml").open("rb") as fh:
        return tomllib.load(fh)


def persisted(widget: Callable[..., Any], label: str, key: str, **kwargs: Any) -> Any:
    """``widget(label, key=key, **kwargs)`` whose value survives page switches.

    ``widget`` is a Streamlit input (``st.slider``, ``column.number_input``,
    ...); its value is kept while the user is on other pages. Its help text is
    ``ui/help.toml``'s entry for ``key`` unless ``help=`` is given.
    """
    kwargs.setdefault("help", help_texts().get(key))
    return widget(label, key=key, persist_state=state.PERSIST, **kwargs)


def choice(
    widget: Callable[..., Any],
    label: str,
    names: Mapping[Any, str],
    key: str,
    **kwargs: Any,
) -> Any:
    """A :func:`persisted` radio or selectbox over ``names`` (value -> words)."""
    return persisted(
        widget, label, key, options=list(names), format_func=names.get, **kwargs
    )


def budget_input(spec: SensorSpec, help_text: str = "") -> float:
    """The persisted target average cost per example, from 0 to every sensor."""
    return float(
        persisted(
            st.number_input,
            "Target average cost per example",
            state.W_BUDGET,
            min_value=0.0,
            max_value=float(spec.total_cost),
            format="%g",
            help=f"{help_text}Between 0 and {spec.total_cost:g} (every sensor for "
            "every example).",
        )
    )


def download(
    container: Any,
    label: str,
    data: Any,
    file_name: str,
    mime: str,
    key: str,
    *,
    icon: str = "download",
    **kwargs: Any,
) -> None:
    """A full-width download button (no rerun on click), keyed
    ``state.W_DOWNLOAD + key``.

    ``data``: bytes, or a callable building them when clicked; ``icon``: a
    Material icon name.
    """
    container.download_button(
        label,
        data=data,
        file_name=file_name,
        mime=mime,
        key=f"{state.W_DOWNLOAD}{key}",
        on_click="ignore",
        icon=f":material/{icon}:",
        width="stretch",
        **kwargs,
    )


def context_metric(
    container: Any, label: str, value: str, delta: str | None, **kwargs: Any
) -> None:
    """A bordered metric whose delta is context (grey, no arrow), not a verdict."""
    container.metric(
        label,
        value,
        delta=delta,
        delta_color="off",
        delta_arrow="off",
        border=True,
        **kwargs,
    )


def lower_is_better(change: float) -> dict[str, str]:
    """A metric's delta style for a shown ``change`` where less is better:
    green down, red up; no colour and no arrow when it shows as zero."""
    if change == 0 or not math.isfinite(change):
        return {"delta_color": "off", "delta_arrow": "off"}
    return {"delta_color": "inverse"}


def show_error(message: str, next_step: str | None = None) -> None:
    """An error in words, with what to do about it."""
    text = message if next_step is None else f"{message}\n\n**What to do:** {next_step}"
    st.error(text, icon=":material/error:")


def show_unexpected(exc: BaseException, doing: str) -> None:
    """A bug or an unforeseen input: a readable message; details in the server log."""
    log.exception("Unexpected error while %s", doing)
    show_error(
        f"Something unexpected went wrong while {doing}: {type(exc).__name__}: {exc}",
        "try again with other settings or data; the rest of the app still works. "
        "The full error is in the terminal that runs Streamlit.",
    )


def guarded(doing: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a widget callback: an exception becomes a message on the page.

    Callbacks run before the page script, outside the app's last-resort handler,
    so without this an unforeseen error would show a raw traceback. A
    ``ValueError`` (the core's way to name bad input) is shown as it is.
    """

    def wrap(callback: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(callback)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return callback(*args, **kwargs)
            except ValueError as exc:
                state.notice(str(exc), "error")
            except Exception as exc:
                log.exception("Unexpected error while %s", doing)
                state.notice(
                    f"Something unexpected went wrong while {doing}: "
                    f"{type(exc).__name__}: {exc}. The rest of the app still works.",
                    "error",
                )
            return None

        return run

    return wrap


def show_notice() -> None:
    """The message left by a callback or another page, if any."""
    for kind, message in state.pop_notice():
        if kind == "error":
            st.error(message, icon=":material/error:")
        elif kind == "warning":
            st.warning(message, icon=":material/warning:")
        elif kind == "success":
            st.success(message, icon=":material/check_circle:")
        else:
            st.info(message, icon=":material/info:")


def replace_data(apply: Callable[[], None], words: str) -> None:
    """Replace the data in use by calling ``apply`` (from a widget callback),
    or first ask (:func:`pending_replace`) when that would drop the model.

    ``words`` names the new data ("the toy demo").
    """
    if state.get_run() is None:
        apply()
        return
    st.session_state[state.PENDING_DATA] = (words, apply)


def _answer_replace(yes: bool, cancel: Callable[[], None] | None) -> None:
    words, apply = st.session_state.pop(state.PENDING_DATA)
    if yes:
        guarded(f"switching to {words}")(apply)()
    elif cancel is not None:
        cancel()


def pending_replace(cancel: Callable[[], None] | None = None) -> None:
    """The question of :func:`replace_data`, if one waits: switch, or keep.

    ``cancel`` undoes the choice that asked (e.g. a selectbox's value).
    """
    pending = st.session_state.get(state.PENDING_DATA)
    run, dataset = state.get_run(), state.get_dataset()
    if pending is None:
        return
    if run is None or dataset is None:  # nothing to lose any more
        _answer_replace(True, None)
        st.rerun()
    words = pending[0]
    sc = run.scoring
    result = "" if run.metrics is None else f" (test {sc.name} {sc.fmt(run.error)})"
    with st.container(border=True):
        st.warning(
            f"Switching to {words} drops the model {run.source} on "
            f"{dataset.name}{result}. To keep it, download it first (Export page).",
            icon=":material/swap_horiz:",
        )
        row = st.container(horizontal=True)
        row.button(
            f"Switch to {words}",
            key=state.W_REPLACE_YES,
            type="primary",
            on_click=_answer_replace,
            args=(True, None),
        )
        row.button(
            f"Keep {dataset.name} and its model",
            key=state.W_REPLACE_NO,
            on_click=_answer_replace,
            args=(False, cancel),
        )


def how_long(dataset: Dataset, spec: SensorSpec, settings: TrainSettings) -> str:
    """A training's estimated time in words, with what it counts: the
    Sensors page and the Train page say it with this one function."""
    seconds = training_seconds(dataset, spec, settings, busy=1.0)
    threads = app_n_jobs()
    busy = busy_factor(threads)
    text = f"roughly {roughly(stretched(seconds, busy))}"
    text += " on one core" if threads == 1 else f" on {threads} cores"
    if stretched(seconds, busy) >= 1.5 * seconds:
        text += f", the machine being busy: {roughly(seconds)} when idle"
    if kernels_compiling():
        text += "; a first training after an install also compiles the library"
    wait = jobs.pool().wait_seconds()
    # While this session's own job runs, the wait is for it: nothing to say.
    if wait >= 1 and running_job() is None:
        text += f"; it starts after the jobs ahead, in about {roughly(wait)}"
    return text


def training_outlook(
    dataset: Dataset, spec: SensorSpec, settings: TrainSettings
) -> tuple[str, str]:
    """The DAG a training with ``settings`` builds and its estimated time,
    in words (``"2,048 DAG states (the full DAG: ...)"``, ``"roughly 40 s
    on 2 cores"``): what the Sensors page says before training, from the
    same probe and estimate as the Train page's."""
    words = plan.dag_words(spec, settings, settings_probe(dataset, spec, settings))
    try:
        return words, how_long(dataset, spec, settings)
    except ValueError:  # settings the fit refuses: the Train page says why
        return words, "its time is estimated once the Train page's settings fit"


def need_dataset() -> Dataset:
    dataset = state.get_dataset()
    if dataset is None:
        st.warning("No data yet: choose a demo or upload a CSV on the Data page.")
        st.page_link(PAGES["data"], label="Go to Data", icon=":material/table_chart:")
        st.stop()
    return dataset


def need_spec() -> SpecCheck:
    check = state.spec_check()
    if check is None or not check.ok:
        st.warning(
            "The sensor table has problems: fix them on the Sensors page first.",
            icon=":material/sensors:",
        )
        if check is not None:
            for err in check.errors:
                st.markdown(f"- {err}")
        st.page_link(PAGES["sensors"], label="Go to Sensors", icon=":material/sensors:")
        st.stop()
    return check


def need_run(what: str) -> TrainedRun:
    run = state.get_run()
    busy = running_job()
    if run is None and busy is not None:
        st.info(
            f"{busy.label} (sidebar): the model appears here when it is done. "
            f"{what[0].upper()}{what[1:]}",
            icon=":material/hourglass_top:",
        )
        st.stop()
    if run is None:
        st.info(f"Train a model first: {what}", icon=":material/model_training:")
        st.page_link(
            PAGES["train"], label="Go to Train", icon=":material/model_training:"
        )
        st.stop()
    return run


def long_work(
    work: Callable[[Progress], T],
    *,
    what: str,
    label: str,
    failed: str,
    doing: str,
    fix: str,
    apply: Callable[[T], str],
    bank_reused: bool,
    subsets: bool,
    shared: tuple[Any, ...] = (),
    estimate: float | None = None,
    stages: dict[str, Any] | None = None,
) -> Job | None:
    """Start ``work(progress)`` beside the page; the job, or None if refused.

    The one widget for long work (training, sweeps, budget fits): the work
    runs in the session's background job, in a worker process of the
    server's pool (:mod:`ui.jobs`), and the sidebar (:func:`job_panel`) shows
    its place in the queue, then its progress, elapsed time, an estimate and
    a Stop button on every page; switching pages does not stop it. ``work``
    is sent to the worker: a module-level function with its arguments
    (``functools.partial``), plain values only, no session state. When it ends,
    the next script run of the session (:func:`collect_job`) calls
    ``apply(result)`` (which may update the session state) and shows its
    return value as a success message; errors are shown in words (``failed``
    and ``fix``, or ``doing`` for an unforeseen one). ``what`` names the kind
    of work; objects of ``shared`` that ``work`` reuses (a model's bank) come
    back in its result as themselves, not copies. ``estimate``: the seconds
    the work should take (the sidebar's first "time left"); ``stages``: how
    its progress bar is shared (:class:`ui.training.ProgressReporter`).
    """
    job = Job(
        what=what,
        label=label,
        work=work,
        bank_reused=bank_reused,
        subsets=subsets,
        context={"failed": failed, "doing": doing, "fix": fix, "apply": apply},
        shared=shared,
        estimate=estimate,
        stages=stages or {},
    )
    try:
        jobs.submit(session.token(), job)
    except ValueError as exc:
        show_error(str(exc))
        return None
    st.session_state.pop(state.JOB_RETRY, None)
    refresh_job_panel()
    return job


def start_workers() -> None:
    """Start the server's worker processes if they are not running yet
    (``app.py``, every run; at once after the first): the first training
    then does not wait for a worker to import the library."""
    jobs.pool().warm()


def running_job() -> Job | None:
    """The session's job while it runs (pages disable their start buttons)."""
    job = jobs.current(session.token())
    return job if job is not None and job.running else None


def collect_job() -> None:
    """Apply the session's finished job, once (``app.py``, every run)."""
    token = session.token()
    job = jobs.current(token)
    if job is None or job.running:
        return
    # Once per session: a job shared by two tabs is collected by each.
    job.collected = True
    jobs.forget(token, job)
    took = seconds(job.elapsed())
    ctx = job.context
    if job.status == jobs.STOPPED:
        when = (
            "before it started (it was waiting for a free worker)"
            if job.started is None
            else f"after {took}"
        )
        outcome = (
            "info",
            f"{job.label.rstrip('.')} was stopped {when}: nothing changed "
            "(the previous model, if any, is kept).",
        )
    elif job.status == jobs.FAILED:
        exc = job.error
        if isinstance(exc, jobs.WorkerLost):
            # Not the work's fault: the same work may well finish next time.
            st.session_state[state.JOB_RETRY] = job
            text = (
                f"{job.label.rstrip('.')} did not finish: {exc}. Nothing changed "
                "(the previous model, if any, is kept). Retry, or ask for less "
                "(fewer folds or sensor subsets, a lighter classifier)."
            )
        elif isinstance(exc, ValueError):
            text = f"{ctx['failed']}: {exc}\n\n**What to do:** {ctx['fix']}"
        else:
            log.error(
                "Unexpected error while %s\n%s", ctx["doing"], job.trace, exc_info=exc
            )
            text = (
                f"Something unexpected went wrong while {ctx['doing']}: "
                f"{type(exc).__name__}: {exc}. The rest of the app still works; "
                "the full error is in the terminal that runs Streamlit."
            )
        outcome = ("error", text)
    else:
        if isinstance(job.result, TrainedRun):
            # Press to result: the queue, the fit, the evaluation, the return.
            job.result.seconds = time.monotonic() - job.submitted
            job.result.waited = job.waited()
        try:
            outcome = ("success", ctx["apply"](job.result))
        except ValueError as exc:
            outcome = ("error", str(exc))
    # Shown in the sidebar (every page) until dismissed or the next job.
    st.session_state[state.JOB_OUTCOME] = outcome


def _dismiss_outcome() -> None:
    st.session_state.pop(state.JOB_OUTCOME, None)
    st.session_state.pop(state.JOB_RETRY, None)


def retry_job() -> None:
    """Run the job whose worker process was lost again (a button callback)."""
    lost = st.session_state.pop(state.JOB_RETRY, None)
    st.session_state.pop(state.JOB_OUTCOME, None)
    if lost is None:
        return
    jobs.submit(session.token(), lost.again())


def _redraw(slot_key: str, draw: Callable[[], None]) -> None:
    """Draw ``draw`` again in the sidebar slot kept under ``slot_key``."""
    slot = st.session_state.get(slot_key)
    if slot is not None:
        with slot.container():
            draw()


def refresh_job_panel() -> None:
    """(Re)draw the sidebar job panel in its slot, e.g. after starting a job."""
    _redraw(state.JOB_SLOT, job_panel)


#: Seconds between the sidebar's looks at a running job ...
POLL_SECONDS = 1.0
#: ... and at one with at most :data:`FAST_POLL_WITHIN` seconds left: its end
#: is then noticed up to this late, where a second would be a large share of
#: a short job (or of a long one's end) on its progress bar.
FAST_POLL_SECONDS = 0.25
FAST_POLL_WITHIN = 30.0
#: Of each look at a job that is almost done (under a poll's time left), the
#: share spent waiting for its end: the result is then shown as soon as it
#: is back rather than up to a poll later, and clicks wait at most so long.
END_WAIT_SHARE = 0.75


def poll_seconds(job: Job) -> float:
    """How often the sidebar looks at ``job`` (:func:`job_panel`): more often
    when it should end soon; as rarely as possible when its length is
    unknown."""
    if job.estimate is not None and job.left_at_most() <= FAST_POLL_WITHIN:
        return FAST_POLL_SECONDS
    return POLL_SECONDS


def job_panel() -> None:
    """The running job in the sidebar: progress, time, estimate, Stop.

    A fragment that redraws itself every :func:`poll_seconds` while the job
    runs (chosen at each run of the whole app, e.g. when a job starts); when
    the job ends it reruns the whole app, whose :func:`collect_job` applies
    it.
    """
    job = running_job()
    if job is not None:
        st.session_state.pop(state.JOB_OUTCOME, None)
        st.session_state.pop(state.JOB_RETRY, None)
        every = poll_seconds(job)
        st.fragment(_job_panel, run_every=every)(every)
        return
    outcome = st.session_state.get(state.JOB_OUTCOME)
    if outcome is None:
        return
    kind, text = outcome
    {"error": st.error, "success": st.success}.get(kind, st.info)(text)
    if st.session_state.get(state.JOB_RETRY) is not None:
        st.button(
            "Retry",
            key=state.W_JOB_RETRY,
            on_click=guarded("retrying the work")(retry_job),
            icon=":material/replay:",
            type="primary",
        )
    st.button(
        "Dismiss",
        key=state.W_JOB_DISMISS,
        on_click=_dismiss_outcome,
        type="tertiary",
        icon=":material/close:",
    )


def _job_panel(every: float) -> None:
    """The panel of :func:`job_panel`, drawn every ``every`` seconds."""
    job = jobs.current(session.token())
    if job is None:
        return
    if not job.running:
        st.rerun()  # the whole app: the page under it picks up the result
    with st.container(border=True):
        st.markdown(f"**{job.label}**")
        place = job.position
        if place is not None:
            pool = jobs.pool()
            st.progress(
                0.0, text=f"Waiting for a free worker: number {place} in the queue"
            )
            start = pool.wait_seconds(job)
            st.caption(
                f"{seconds(job.waited())} waiting"
                + (f" · starts in about {roughly(start)}" if start >= 1 else "")
                + f" · this server runs {pool.size} job"
                + f"{'s' if pool.size > 1 else ''} at a time, {pool.waiting} "
                "waiting · it starts by itself"
            )
        else:
            st.progress(job.fraction, text=job.text)
            st.caption(
                f"{seconds(job.elapsed())} so far · {time_left(job)} · runs on "
                "while you switch pages"
            )
        st.button(
            "Stopping..." if job.stopping else "Stop",
            key=state.W_STOP,
            on_click=job.stop,
            disabled=job.stopping,
            icon=":material/stop_circle:",
            width="stretch",
            help="Leaves the queue, or stops at the next progress step; the "
            "previous model is kept.",
        )
    if ends_before_next_look(job, every) and job.wait(END_WAIT_SHARE * every):
        st.rerun()


def ends_before_next_look(job: Job, every: float) -> bool:
    """Whether ``job`` says it is done within ``every`` seconds (the
    sidebar's next look): :func:`_job_panel` then waits for its end."""
    left = job.remaining()
    return left is not None and left < every


def time_left(job: Job) -> str:
    """The running job's time left in words (monotone, see ``Job.remaining``)."""
    left = job.remaining()
    if left is None:
        return "estimating the time left"
    text = "almost done" if left < 1 else f"about {roughly(left)} left"
    return text + (" (slower than estimated)" if job.revised else "")


def trained_label(run: TrainedRun, data: str) -> str:
    """The message of a finished training on the data named ``data``, from
    pressing Train to the result (a switch to other data, which clears the
    model, clears it from the sidebar too)."""
    how = "policies only, bank reused" if run.bank_reused else "bank and policies"
    waited = run.waited or 0.0
    queue = f"; {seconds(waited)} of it in the queue" if waited >= 1 else ""
    return f"Trained in {seconds(run.seconds or 0.0)} on {data} ({how}{queue})."


def seconds(value: float) -> str:
    """A duration: ``"0.42 s"`` under a second, else ``"12.3 s"``."""
    return f"{value:.1f} s" if value >= 1 else f"{value:.2f} s"


def train_with_progress(
    dataset: Dataset,
    spec: SensorSpec,
    settings: Settings,
    *,
    target_budget: float | None = None,
    fix: str = "change the settings on the Train page and retry.",
    done: Callable[[TrainedRun], str] | None = None,
) -> Job | None:
    """Start training beside the page (:func:`long_work`); the job, or None.

    ``settings``: the Train form or a model's parameters (``run.params``), as
    for :func:`ui.training.train`. The finished run becomes the app's current
    model (if the data in use is still the one it was trained on);
    ``done(run)`` is the message then (default: :func:`trained_label`).
    """
    previous = state.get_run()
    reused = (
        target_budget is None
        and reusable_bank(previous, dataset, spec, settings) is not None
    )

    def apply(run: TrainedRun) -> str:
        current = state.get_dataset()
        if current is None or current.token != run.dataset_token:
            raise ValueError(
                f"The model trained on {dataset.name} was not kept: other data is "
                "in use now. Train again."
            )
        state.set_run(run)
        return done(run) if done else trained_label(run, dataset.name)

    parts = training_parts(
        dataset, spec, settings, bank_reused=reused, target_budget=target_budget
    )
    return long_work(
        # The previous run (its bank, without the page's memo) only when reused.
        functools.partial(
            train,
            dataset,
            spec,
            settings,
            replace(previous, cache={}) if reused else None,
            target_budget=target_budget,
        ),
        what="train",
        label=f"Training on {dataset.name}..."
        if target_budget is None
        else f"Fitting for an average cost of {target_budget:g} on {dataset.name}...",
        failed="Training failed",
        doing="training",
        fix=fix,
        apply=apply,
        bank_reused=reused,
        subsets=uses_subsets(settings),
        shared=(previous.model.bank_,) if reused else (),
        estimate=press_to_result(*parts),
        stages={
            "sparse": bool(plan.strategies_of(spec, settings)),
            "scale_search": target_budget is None and searches_scale(settings),
            **progress_shares(*parts),
        },
    )


def need_model(what: str) -> tuple[TrainedRun, Dataset]:
    """The current run, with results on the current data, and that data.

    Stops the page with a message saying ``what`` needs them otherwise.
    """
    run = need_run(what)
    need_results(run)
    return run, need_dataset()


def need_results(run: TrainedRun) -> None:
    if run.metrics is None:
        st.warning(run.note or "This model has no results on the current data.")
        st.stop()


def model_status(run: TrainedRun, check: SpecCheck | None) -> str:
    """The sidebar's line on the model: where from, its own sensors when they
    are not the sensor table's (a loaded policy), its results."""
    spec = run.spec
    source = "" if run.source == "trained" else f" {run.source} ·"
    own = ""
    if check is None or not check.ok or check.spec.to_json() != spec.to_json():
        n_states = run.model.sensor_dag_.n_states
        own = (
            f" {spec.n_sensors} sensor{'s' if spec.n_sensors != 1 else ''} · "
            f"{n_states} DAG states ·"
        )
    if run.metrics is None:
        return f"**Model:**{source}{own} not evaluated on this data"
    return (
        f"**Model:**{source}{own} test {run.scoring.name} "
        f"{run.scoring.fmt(run.error)} · "
        f"avg cost {run.metrics['avg_cost']:.3g}"
    )


def refresh_status() -> None:
    """(Re)draw the sidebar status in its slot, e.g. after training."""
    _redraw(state.STATUS_SLOT, sidebar_status)


def sidebar_status() -> None:
    """Where the user stands: data, sensors, model."""
    dataset, check, run = state.get_dataset(), state.spec_check(), state.get_run()
    if dataset is not None:
        st.caption(
            f"**Data:** {dataset.name} · {len(dataset.train)} train / "
            f"{len(dataset.test)} test rows"
        )
    if check is not None:
        if check.ok and dataset is not None:
            spec, settings = check.spec, state.train_settings(check)
            words = plan.states_words(
                spec, settings, known_probe(dataset, spec, settings)
            )
            st.caption(f"**Sensors:** {spec.n_sensors} · {words}")
        else:
            st.caption("**Sensors:** table has problems")
    not_kept = st.session_state.get(state.MODEL_NOT_KEPT)
    if run is None and not_kept:
        st.caption(
            "**Model:** not trained yet since the reload: the last model was "
            "too large to keep for reloads; train again (or download the "
            "model before a reload, Export page)",
            help=f"Not kept: {not_kept}.",
        )
    elif run is None:
        st.caption("**Model:** not trained yet")
    else:
        try:
            line = model_status(run, check)
        except Exception:  # a foreign model: the page that uses it says why
            log.exception("describing the model in the sidebar")
            line = "**Model:** cannot be described"
        st.caption(line)
    problem = st.session_state.get(state.STORE_PROBLEM)
    partial = st.session_state.get(state.STORE_PARTIAL)
    if problem:
        st.caption(f":material/warning: Not kept for reloads: {problem}.")
    elif partial:
        st.caption(
            f":material/warning: Kept for reloads ({store.EXPIRY_HOURS} h), but "
            f"not {partial}.",
            help=session.KEPT_WHAT,
        )
    else:
        st.caption(
            f":material/save: Kept for reloads ({store.EXPIRY_HOURS} h)",
            help=session.KEPT_WHAT,
        )
