"""Export page: download the policy, the spec and test traces; load a policy."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from budgetdag_core import (
    dumps_policy,
    dumps_policy_skops,
    loads_policy,
    loads_policy_skops,
)
from budgetdag_core.plotting import tradeoff_figure
from ui import dag_view, state, widgets
from ui.figures import PLOTLY_JS_MB, html_bytes, png_bytes, png_problem
from ui.reports import to_csv_safe, trace_for_export
from ui.snippets import deployment_snippet
from ui.spec_table import spec_to_table
from ui.training import TrainedRun, run_from_model
from ui.trust import TRUST_PICKLES_ENV, pickles_allowed
from ui.uploads import MODEL_MAX_MB, read_upload

widgets.enter_page()
ss = st.session_state

st.title("Export")
widgets.show_notice()
dataset = widgets.need_dataset()


FORMATS = {
    "skops": (dumps_policy_skops, "skops", ".skops (safe)"),
    "pickle": (dumps_policy, "pkl", ".pkl"),
}


def policy_download(run: TrainedRun, name: str, kind: str) -> None:
    """The policy file's button; the file is built when it is clicked (a
    skops file of a big bank takes seconds), once per model."""
    dump, ext, label = FORMATS[kind]
    built = run.cache.get(f"policy_{kind}")
    size = "" if built is None else f" · {len(built) / 2**20:.1f} MB"
    st.download_button(
        f"{label}{size}",
        data=lambda: run.memo(f"policy_{kind}", lambda: dump(run.model)),
        file_name=f"budgetdag_{name}.{ext}",
        mime="application/octet-stream",
        key=f"{state.W_DOWNLOAD}{'policy' if kind == 'pickle' else kind}",
        on_click="ignore",
        type="primary" if kind == "skops" else "secondary",
        icon=":material/download:",
        width="stretch",
    )


def downloads() -> None:
    run = state.get_run()
    if run is None:
        st.info(
            "Train a model first (Train page), or load a policy file below.",
            icon=":material/model_training:",
        )
        return
    name = dataset.name.split(".")[0]
    st.subheader("Download")
    # The policy on a row of its own: three cards in a row leave the spec and
    # traces buttons too narrow for their labels below ~1300 px.
    with st.container(border=True):
        st.markdown(
            "**Trained policy** with its sensor spec, columns and "
            + ("target (a regressor)" if run.task == "regression" else "classes")
        )
        st.caption(
            "**.skops** is the safe format: loading it runs no code from the file "
            "(`budgetdag_core.load_policy_skops`). The **.pkl** pickle loads with "
            "`budgetdag_core.load_policy`, from people you trust only."
        )
        b1, b2 = st.columns(2)
        with b1:
            policy_download(run, name, "skops")
        with b2:
            policy_download(run, name, "pickle")
    c2, c3 = st.columns(2)
    with c2, st.container(border=True, height="stretch"):
        st.markdown("**Sensor spec** (JSON)")
        st.caption("Sensor names, their columns and costs, as used by this model.")
        st.download_button(
            "Download spec (.json)",
            data=run.spec.to_json(),
            file_name=f"budgetdag_{name}_sensors.json",
            mime="application/json",
            key=f"{state.W_DOWNLOAD}spec",
            on_click="ignore",
            icon=":material/download:",
        )
    with c3, st.container(border=True, height="stretch"):
        st.markdown("**Test-set traces** (CSV)")
        st.caption(
            "Per test example (`row`: its number, as on the What-if page): "
            + (
                "predicted number, true target, error (prediction minus target), "
                "sensors acquired in order, cost, stop state."
                if run.task == "regression"
                else "prediction, true label, sensors acquired in order, cost, "
                "stop state, confidence."
            )
        )
        if run.metrics is None:
            st.caption(run.note)
        else:
            X, y = dataset.X("test", run.spec), dataset.y("test")
            st.download_button(
                "Download traces (.csv)",
                # Built when clicked: tracing a big test set takes seconds.
                data=lambda: run.memo(
                    "traces_csv",
                    lambda: to_csv_safe(
                        trace_for_export(
                            run.model.trace(X), y, regression=run.task == "regression"
                        )
                    ),
                ),
                file_name=f"budgetdag_{name}_test_traces.csv",
                mime="text/csv",
                key=f"{state.W_DOWNLOAD}traces",
                on_click="ignore",
                icon=":material/download:",
            )
    with st.expander("Use the policy in Python"):
        example = (
            dataset.test.iloc[0]
            if all(c in dataset.test.columns for c in run.spec.columns)
            and len(dataset.test)
            else None
        )
        st.code(
            deployment_snippet(run.spec, f"budgetdag_{name}.skops", example),
            language="python",
        )
        st.caption(
            "Runs as it is once the .skops file is downloaded; the example is the "
            "first test row. More: the deployment guide in the docs."
        )


@widgets.guarded("using the loaded policy")
def _use_loaded() -> None:
    loaded = ss.get(state.LOADED)
    try:
        run = run_from_model(loaded["model"], dataset, f"loaded from {loaded['name']}")
    except Exception as exc:  # a foreign pickle can hold anything
        state.notice(
            f"This policy cannot be used with the current data: {exc}", "error"
        )
        return
    state.set_run(run)
    if run.metrics is not None:  # the data has its columns: its sensors apply
        state.set_spec_table(spec_to_table(run.spec))
    state.notice(f"Now using the policy from {loaded['name']}.", "success")


def read_policy(file: UploadedFile, kind: str) -> dict | None:
    """The uploaded policy (cached per file), or None after showing why not."""
    loaded = ss.get(state.LOADED)
    if loaded is not None and loaded["file_id"] == file.file_id:
        return loaded
    if kind != "skops" and not pickles_allowed():
        # The uploader is not shown then; refuse anyway rather than unpickle.
        widgets.show_error(
            f"{file.name!r} was not opened: loading pickle files is turned off on "
            "this server.",
            "upload the .skops file of the policy instead.",
        )
        return None
    try:
        data = read_upload(file, MODEL_MAX_MB, "policy files")
    except ValueError as exc:
        widgets.show_error(
            str(exc),
            "choose the .skops file of the policy (a pickle is several times "
            "larger), or load the file in Python with "
            "`budgetdag_core.load_policy_skops`.",
        )
        return None
    read = loads_policy_skops if kind == "skops" else loads_policy
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = read(data)
        except Exception as exc:
            widgets.show_error(
                f"{file.name!r} is not a usable BudgetDAG policy: "
                f"{type(exc).__name__}: {exc}",
                f"choose a .{'skops' if kind == 'skops' else 'pkl'} file downloaded "
                "from this page or written by budgetdag_core."
                + ("save_policy_skops." if kind == "skops" else "save_policy."),
            )
            return None
    loaded = {
        "file_id": file.file_id,
        "name": file.name,
        "model": model,
        "warnings": [str(w.message) for w in caught],
    }
    ss[state.LOADED] = loaded
    return loaded


def show_loaded(loaded: dict) -> None:
    for message in loaded["warnings"]:
        st.warning(message)
    meta = getattr(loaded["model"], "metadata_", {})
    spec = loaded["model"].spec_
    st.success(
        f"{loaded['name']}: {spec.n_sensors} sensors ({', '.join(spec.names)}), "
        + (
            f"{len(loaded['model'].classes_)} classes"
            if hasattr(loaded["model"], "classes_")
            else "a regressor (predicts a number)"
        )
        + "; saved with budgetdag_core "
        f"{meta.get('budgetdag_core_version', '?')} and scikit-learn "
        f"{meta.get('sklearn_version', '?')}.",
        icon=":material/check_circle:",
    )
    st.button(
        "Use this policy in the app",
        key=state.W_USE_LOADED,
        on_click=_use_loaded,
        help="It replaces the current model; it is evaluated on the current test set "
        "if the data has its columns.",
    )


def pickle_uploader() -> UploadedFile | None:
    """The pickle uploader, if the operator allows pickles and the user ticks trust."""
    if not pickles_allowed():
        st.info(
            "Loading pickle files is turned off on this server: unpickling runs "
            "code from the file on the server, for whoever uploads it. Use the "
            ".skops file of the policy instead. Whoever runs the server can allow "
            f"pickles by starting it with `{TRUST_PICKLES_ENV}=1 streamlit run "
            "app.py`.",
            icon=":material/block:",
        )
        return None
    st.warning(
        "Opening a pickle file runs code from that file on the computer that "
        "runs this app: a file from an unknown source can delete data or "
        "install malware. Load only policy files that you or someone you trust "
        "made with BudgetDAG.",
        icon=":material/gpp_maybe:",
    )
    trusted = st.checkbox(
        "I trust this file: it was made with BudgetDAG by me or someone I trust",
        key=state.W_TRUST,
    )
    file = st.file_uploader(
        "Policy file (.pkl)",
        type=["pkl", "pickle"],
        key=state.W_POLICY_FILE,
        disabled=not trusted,
        max_upload_size=MODEL_MAX_MB,
    )
    return file if trusted else None


def load_section() -> None:
    st.subheader("Load a policy file")
    # Side by side at 1280 px, one under the other when narrower.
    cards = st.container(horizontal=True, gap="medium")
    with cards.container(border=True, width=380):
        st.markdown("**Safe format (.skops)**")
        st.caption(
            "Loading a skops file runs no code from it: only the types a BudgetDAG "
            "policy is made of (its own classes, scikit-learn, numpy, networkx) are "
            "rebuilt, and a file naming any other type is refused."
        )
        skops_file = st.file_uploader(
            "Policy file (.skops)",
            type=["skops"],
            key=state.W_SKOPS_FILE,
            max_upload_size=MODEL_MAX_MB,
        )
    with cards.container(border=True, width=380):
        st.markdown("**Pickle (.pkl)**")
        pickle_file = pickle_uploader()
    if skops_file is not None:
        loaded = read_policy(skops_file, "skops")
    elif pickle_file is not None:
        loaded = read_policy(pickle_file, "pickle")
    else:
        return
    if loaded is not None:
        show_loaded(loaded)


def figure_builders(run: TrainedRun) -> dict[str, tuple[str, Callable[[], go.Figure]]]:
    """Figure id -> (title, builder) of the figures this run can draw."""
    out: dict[str, tuple[str, Callable[[], go.Figure]]] = {}
    for part in ("test", "train"):
        title = f"The DAG with the flow of the {dag_view.PARTS[part].lower()}"
        out[f"dag_{part}"] = (
            title,
            lambda part=part, title=title: dag_view.figure(
                run, dag_view.flow(run, dataset, part), title=title
            ),
        )
    traced = state.sweep_of_dataset(dataset.token)
    if traced is not None:
        frame = traced.frame
        out["tradeoff"] = (
            "Trade-off curve (train and test)",
            lambda: tradeoff_figure(
                frame, split=["test", "train"], hull=True, title="Error against cost"
            ),
        )
    return out


def figures_section() -> None:
    run = state.get_run()
    if run is None or run.metrics is None:
        return
    st.subheader("Figures")
    offline = st.toggle(
        f"Embed plotly.js (the HTML works offline; +{PLOTLY_JS_MB:g} MB per file)",
        key=state.W_HTML_OFFLINE,
    )
    problem = png_problem()
    name = dataset.name.split(".")[0]
    builders = figure_builders(run)
    for fig_id, (title, build) in builders.items():
        c1, c2, c3 = st.columns([4, 2, 2], vertical_alignment="center")
        c1.markdown(title)
        # Built when downloaded: a big DAG's figure takes seconds to draw.
        html = (
            (lambda b=build: html_bytes(b(), offline=True))
            if offline
            else (
                lambda b=build, f=fig_id: run.memo(f"html_{f}", lambda: html_bytes(b()))
            )
        )
        file = f"budgetdag_{name}_{fig_id}"
        widgets.download(
            c2, "HTML", html, f"{file}.html", "text/html", f"html_{fig_id}", icon="code"
        )
        widgets.download(
            c3,
            "PNG",
            (lambda b=build: png_bytes(b())) if problem is None else b"",
            f"{file}.png",
            "image/png",
            f"png_{fig_id}",
            icon="image",
            disabled=problem is not None,
        )
    if "tradeoff" not in builders:
        st.caption("The trade-off curve is offered here once traced (Trade-off page).")
    if problem is not None:
        st.caption(
            f"{problem} To save a PNG, use the camera button in the toolbar above any "
            "figure of the app, or open the HTML file and use its camera button."
        )


downloads()
figures_section()
st.divider()
load_section()
