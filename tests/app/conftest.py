"""Fixtures for the Streamlit app tests (streamlit.testing.v1.AppTest)."""

from __future__ import annotations

import pytest
from app_helpers import APP, MPA_RUNNER, TIMEOUT, run_app_py
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from budgetdag_core import load_demo
from ui.data import demo_dataset
from ui.training import TrainSettings, train


@pytest.fixture(autouse=True)
def _run_app_py_as_a_server_does(monkeypatch):
    """Run ``app.py`` itself on every AppTest run, as a live server does.

    A ``pages/`` folder next to ``app.py`` makes Streamlit start in its legacy
    multipage mode until ``st.navigation`` is first called. A server leaves that
    mode after its first run, but AppTest resets the mode before every run, so
    each test run would go through the legacy runner. Running the main script
    directly keeps the tests on the code path users get.
    """
    monkeypatch.setattr(MPA_RUNNER, run_app_py)


@pytest.fixture(autouse=True)
def _private_store(monkeypatch, tmp_path):
    """Each test keeps its sessions' work in its own folder (ui.store)."""
    monkeypatch.setenv("BUDGETDAG_STORE_DIR", str(tmp_path / "sessions"))


@pytest.fixture
def app() -> AppTest:
    """The app, not yet run."""
    return AppTest.from_file(APP, default_timeout=TIMEOUT)


@pytest.fixture(scope="session")
def pima():
    return demo_dataset(load_demo("pima"))


@pytest.fixture(scope="session")
def pima_run(pima):
    """A model trained on the pima demo with a fast setting (3 folds)."""
    spec = pima.spec
    return train(pima, spec, TrainSettings(cost_scale=0.0043, cv=3, random_state=0))


@pytest.fixture
def media(monkeypatch) -> dict[str, bytes]:
    """Data handed to Streamlit's media storage (downloads), by file id."""
    stored: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def spy(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        if isinstance(path_or_data, bytes):
            stored[file_id] = path_or_data
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    # A download built when clicked (data=callable) needs a server; here it
    # is built at once, as if clicked, and stored like the others.
    from streamlit.elements.widgets import button

    marshall = button.marshall_file

    def built(coordinates, data, *args, **kwargs):
        return marshall(
            coordinates, data() if callable(data) else data, *args, **kwargs
        )

    monkeypatch.setattr(button, "marshall_file", built)
    return stored
