"""Export page: download the policy, the spec and test traces; load a policy."""

from __future__ import annotations

import warnings

import streamlit as st

from budgetdag_core import dumps_policy, loads_policy
from budgetdag_core.reports import trace_for_export
from ui import state, widgets
from ui.training import run_from_model

widgets.enter_page()
ss = st.session_state

st.title("Export")
widgets.show_notice()
dataset = widgets.need_dataset()


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
    c1, c2, c3 = st.columns(3)
    with c1, st.container(border=True):
        st.markdown("**Trained policy** (pickle)")
        st.caption(
            "The model with its sensor spec, feature columns, classes and library "
            "versions. Python: `budgetdag_core.load_policy(path)`."
        )
        try:
            data = run.memo("policy_pickle", lambda: dumps_policy(run.model))
        except Exception as exc:
            widgets.show_unexpected(exc, "preparing the policy file")
        else:
            st.download_button(
                "Download policy (.pkl)",
                data=data,
                file_name=f"budgetdag_{name}.pkl",
                mime="application/octet-stream",
                key=f"{state.W_DOWNLOAD}policy",
                on_click="ignore",
                type="primary",
                icon=":material/download:",
            )
            st.caption(f"{len(data) / 2**20:.1f} MB")
    with c2, st.container(border=True):
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
    with c3, st.container(border=True):
        st.markdown("**Test-set traces** (CSV)")
        st.caption(
            "Per test example: prediction, true label, sensors acquired in order, "
            "cost, stop state, confidence."
        )
        if run.metrics is None:
            st.caption(run.note)
        else:
            X, y = dataset.X("test", run.spec), dataset.y("test")
            csv = run.memo(
                "traces_csv",
                lambda: trace_for_export(run.model.trace(X), y).to_csv(index=False),
            )
            st.download_button(
                "Download traces (.csv)",
                data=csv,
                file_name=f"budgetdag_{name}_test_traces.csv",
                mime="text/csv",
                key=f"{state.W_DOWNLOAD}traces",
                on_click="ignore",
                icon=":material/download:",
            )
    with st.expander("Use the policy in Python"):
        st.code(
            "from budgetdag_core import load_policy\n\n"
            f'model = load_policy("budgetdag_{name}.pkl")  # only files you trust\n'
            "model.predict(X)            # X: a DataFrame with the feature columns\n"
            "model.trace(X)              # what each example acquired and paid\n\n"
            "# In deployment, one example at a time:\n"
            "session = model.start()\n"
            "while (sensor := session.next_sensor()) is not None:\n"
            "    session.observe(sensor, measure(sensor))  # your measurement\n"
            "label = session.predict()",
            language="python",
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
    state.notice(f"Now using the policy from {loaded['name']}.", "success")


def load_section() -> None:
    st.subheader("Load a policy file")
    st.warning(
        "Opening a pickle file runs code from that file on the computer that runs "
        "this app: a file from an unknown source can delete data or install "
        "malware. Load only policy files that you or someone you trust made with "
        "BudgetDAG.",
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
        max_upload_size=200,
    )
    if file is None or not trusted:
        return
    loaded = ss.get(state.LOADED)
    if loaded is None or loaded["file_id"] != file.file_id:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model = loads_policy(file.getvalue())
            except Exception as exc:
                widgets.show_error(
                    f"{file.name!r} is not a usable BudgetDAG policy: "
                    f"{type(exc).__name__}: {exc}",
                    "choose a .pkl file downloaded from this page or written by "
                    "budgetdag_core.save_policy.",
                )
                return
        loaded = {
            "file_id": file.file_id,
            "name": file.name,
            "model": model,
            "warnings": [str(w.message) for w in caught],
        }
        ss[state.LOADED] = loaded
    for message in loaded["warnings"]:
        st.warning(message)
    meta = getattr(loaded["model"], "metadata_", {})
    spec = loaded["model"].spec_
    st.success(
        f"{loaded['name']}: {spec.n_sensors} sensors ({', '.join(spec.names)}), "
        f"{len(loaded['model'].classes_)} classes; saved with budgetdag_core "
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


downloads()
st.divider()
load_section()
