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
PAGES = ["data", "sensors", "train", "explore", "tradeoff", "export"]
TIMEOUT = 180  # seconds per script run; generous for a loaded 2-core machine


def page(name: str) -> str:
    return f"pages/{name}.py"


def prefill(at: AppTest, dataset, run=None) -> AppTest:
    """Session state as if the user had chosen ``dataset`` (and trained ``run``)."""
    from budgetdag_core.spec_table import spec_to_table

    at.session_state[state.DATASET] = dataset
    at.session_state[state.SPEC_TABLE] = spec_to_table(dataset.default_spec)
    at.session_state[state.SPEC_BASE] = spec_to_table(dataset.default_spec)
    at.session_state[state.SPEC_VERSION] = 1
    at.session_state[state.RUN] = run
    if dataset.kind == "demo":
        at.session_state[state.W_DEMO] = dataset.name
    return at


def download_data(at: AppTest, media: dict[str, bytes], key: str) -> bytes:
    """The bytes behind the download button with ``key``."""
    url = at.download_button(key=key).proto.url
    return media[Path(url).stem]


def texts(at: AppTest, *kinds: str) -> list[str]:
    """The text of all error/warning/info/success elements (default: all four)."""
    kinds = kinds or ("error", "warning", "info", "success")
    return [el.value for kind in kinds for el in getattr(at, kind)]


def assert_clean(at: AppTest) -> None:
    """No exception element (no raw traceback) in the last run."""
    assert not at.exception, [e.value for e in at.exception]
