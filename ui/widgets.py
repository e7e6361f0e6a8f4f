"""Small Streamlit helpers shared by the pages: messages, guards, status."""

from __future__ import annotations

import functools
import logging
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import streamlit as st

from budgetdag_core import SensorSpec, load_demo
from budgetdag_core.datasets import Demo
from ui.spec_table import SpecCheck

from . import state
from .data import Dataset, demo_dataset
from .formatting import pct
from .training import (
    ProgressReporter,
    Settings,
    TrainedRun,
    reusable_bank,
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
def cached_demo(name: str) -> Demo:
    """A bundled demo, read from disk once per server (each caller gets a copy)."""
    return load_demo(name)


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
    found = state.pop_notice()
    if found is None:
        return
    kind, message = found
    if kind == "error":
        st.error(message, icon=":material/error:")
    elif kind == "success":
        st.success(message, icon=":material/check_circle:")
    else:
        st.info(message, icon=":material/info:")


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
    if run is None:
        st.info(f"Train a model first: {what}", icon=":material/model_training:")
        st.page_link(
            PAGES["train"], label="Go to Train", icon=":material/model_training:"
        )
        st.stop()
    return run


def long_work(
    work: Callable[[ProgressReporter], T],
    *,
    label: str,
    failed: str,
    doing: str,
    fix: str,
    done: Callable[[T], str],
    bank_reused: bool,
    subsets: bool,
    stop_slot: Any = None,
) -> T | None:
    """Run ``work(progress)`` in a status box with a progress bar; its result.

    The one widget for long work (training, sweeps, budget fits). With a
    ``stop_slot`` (an empty container) a Stop button is drawn there while the
    work runs: Streamlit stops the script at the next progress update, and
    ``state.TRAINING`` stays set so the next page run can say so. Errors are
    shown in words (``failed`` on the status; ``fix`` says what to do) and give
    None; ``done(result)`` labels the status on success.
    """
    stop = None
    if stop_slot is not None:
        st.session_state[state.TRAINING] = True
        stop = stop_slot.empty()
        stop.button(
            "Stop",
            key=state.W_STOP,
            icon=":material/stop_circle:",
            help="Stops at the next progress step; the previous model is kept.",
        )
    result = None
    with st.status(label, expanded=True) as status:
        bar = st.progress(0.0, text="Starting")
        reporter = ProgressReporter(
            lambda fraction, text: bar.progress(fraction, text=text),
            bank_reused=bank_reused,
            subsets=subsets,
        )
        try:
            result = work(reporter)
        except ValueError as exc:
            status.update(label=failed, state="error")
            show_error(str(exc), fix)
        except Exception as exc:
            status.update(label=failed, state="error")
            show_unexpected(exc, doing)
        else:
            status.update(label=done(result), state="complete", expanded=False)
    if stop is not None:
        stop.empty()
        st.session_state[state.TRAINING] = False
    return result


def trained_label(run: TrainedRun) -> str:
    """The status label of a finished training."""
    how = "policies only, bank reused" if run.bank_reused else "bank and policies"
    return f"Trained in {seconds(run.seconds or 0.0)} ({how})"


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
    stop_slot: Any = None,
) -> TrainedRun | None:
    """Train inside :func:`long_work`; the new run, or None.

    ``settings``: the Train form or a model's parameters (``run.params``), as
    for :func:`ui.training.train`. The run becomes the app's current model.
    """
    previous = state.get_run()
    reused = (
        target_budget is None
        and reusable_bank(previous, dataset, spec, settings) is not None
    )
    run = long_work(
        lambda progress: train(
            dataset,
            spec,
            settings,
            previous,
            progress=progress,
            target_budget=target_budget,
        ),
        label=f"Training on {dataset.name}...",
        failed="Training failed",
        doing="training",
        fix=fix,
        done=trained_label,
        bank_reused=reused,
        subsets=uses_subsets(settings),
        stop_slot=stop_slot,
    )
    if run is not None:
        state.set_run(run)
        refresh_status()
    return run


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


def refresh_status() -> None:
    """(Re)draw the sidebar status in its slot, e.g. after training."""
    slot = st.session_state.get(state.STATUS_SLOT)
    if slot is not None:
        with slot.container():
            sidebar_status()


def sidebar_status() -> None:
    """Where the user stands: data, sensors, model."""
    dataset, check, run = state.get_dataset(), state.spec_check(), state.get_run()
    if dataset is not None:
        st.caption(
            f"**Data:** {dataset.name} · {len(dataset.train)} train / "
            f"{len(dataset.test)} test rows"
        )
    if check is not None:
        if check.ok and state.subsets_in_use(check):
            t = int(st.session_state[state.W_N_SUBSETS])
            st.caption(
                f"**Sensors:** {check.spec.n_sensors} · {t} subsets, at most "
                f"{2**t} DAG states"
            )
        elif check.ok:
            n = check.spec.n_sensors
            st.caption(f"**Sensors:** {n} · {2**n} DAG states")
        else:
            st.caption("**Sensors:** table has problems")
    if run is not None and run.metrics is not None:
        st.caption(
            f"**Model:** test error {pct(run.metrics['error'])} · "
            f"avg cost {run.metrics['avg_cost']:.3g}"
        )
    elif run is not None:
        st.caption("**Model:** loaded (not evaluated)")
    else:
        st.caption("**Model:** not trained yet")
