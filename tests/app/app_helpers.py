"""Helpers for the Streamlit app tests (imported by conftest and the tests)."""

from __future__ import annotations

import sys
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the app imports its `ui` package from the root
    sys.path.insert(0, str(ROOT))

from ui import state  # noqa: E402

APP = str(ROOT / "app.py")
PAGES = [
    "data",
    "sensors",
    "train",
    "explore",
    "whatif",
    "tradeoff",
    "teaching",
    "export",
]
TIMEOUT = 180  # seconds per script run; generous for a loaded 2-core machine


MPA_RUNNER = "streamlit.runtime.scriptrunner.script_runner._mpa_v1"


def run_app_py(main_script_path: str) -> None:
    """What replaces Streamlit's legacy multipage runner in the tests (conftest)."""
    import runpy

    runpy.run_path(main_script_path, run_name="__main__")


def page(name: str) -> str:
    return f"pages/{name}.py"


def prefill(at: AppTest, dataset, run=None) -> AppTest:
    """Session state as if the user had chosen ``dataset`` (and trained ``run``)."""
    from ui.spec_table import spec_to_table

    at.session_state[state.DATASET] = dataset
    at.session_state[state.SPEC_TABLE] = spec_to_table(dataset.spec)
    at.session_state[state.SPEC_BASE] = spec_to_table(dataset.spec)
    at.session_state[state.SPEC_VERSION] = 1
    at.session_state[state.RUN] = run
    if dataset.kind == "demo":
        at.session_state[state.W_DEMO] = dataset.name
    return at


def download_data(at: AppTest, media: dict[str, bytes], key: str) -> bytes:
    """The bytes behind the download button with ``key``."""
    url = at.download_button(key=key).proto.url
    return media[Path(url).stem]


def values(array) -> list:
    """A trace array from the figure JSON (plotly 7 may pack it as typed data)."""
    if isinstance(array, dict) and "bdata" in array:
        import base64

        import numpy as np

        raw = np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
        if "shape" in array:
            shape = [int(n) for n in str(array["shape"]).split(",")]
            raw = raw.reshape(shape)
        return raw.tolist()
    return list(array)


def finish_jobs(at: AppTest, timeout: float = TIMEOUT) -> AppTest:
    """Wait for the session's background job (training, sweep), then rerun, as
    the sidebar's job panel does once the job ends."""
    from ui import jobs

    job = jobs.current(at.session_state[state.TOKEN])
    if job is not None:
        assert job.wait(timeout), f"{job.label} still runs after {timeout} s"
    return at.run()


def texts(at: AppTest, *kinds: str) -> list[str]:
    """The text of all error/warning/info/success elements (default: all four)."""
    kinds = kinds or ("error", "warning", "info", "success")
    return [el.value for kind in kinds for el in getattr(at, kind)]


def assert_clean(at: AppTest) -> None:
    """No exception element (no raw traceback) in the last run."""
    assert not at.exception, [e.value for e in at.exception]


def click_chart(at: AppTest, key: str, ids: list, typed: bool = True) -> AppTest:
    """Rerun as if the points with ``customdata[0]`` in ``ids`` were clicked.

    AppTest has no API for plotly charts (they are "unknown" elements), so this
    sends the selection the browser would send: the chart's widget state as
    JSON, next to the other widgets' states. A numeric customdata row is a
    typed array in the browser and arrives as ``{"0": id, ...}`` (``typed``);
    an object one (the trade-off figure's row labels) as a list.
    """
    import json

    from streamlit.proto.WidgetStates_pb2 import WidgetState

    charts = [c for c in at.get("plotly_chart") if c.key == key]
    assert charts, f"no plotly chart with key {key!r}"
    points = [
        {
            "customdata": {"0": i} if typed else [i],
            "curve_number": 0,
            "point_number": n,
            "point_index": n,
        }
        for n, i in enumerate(ids)
    ]
    selection = {
        "selection": {
            "points": points,
            "point_indices": list(range(len(ids))),
            "box": [],
            "lasso": [],
        }
    }
    states = at._tree.get_widget_states()
    states.widgets.append(
        WidgetState(id=charts[0].proto.id, string_value=json.dumps(selection))
    )
    return at._tree._runner._run(states)
