"""Hostile uploads in the app: a clear message for each, never a server path.

AppTest hands the bytes to the server as a browser would, without the
browser's own size check: what a client that misreports sizes can send.
"""

from __future__ import annotations

import tomllib

import pytest
from app_helpers import ROOT, assert_clean, page, prefill, texts

from ui import state, uploads

UNEXPECTED = "Something unexpected"


def sensors(app, dataset):
    return prefill(app, dataset).switch_page(page("sensors")).run()


def upload_spec(at, data: bytes, name: str = "spec.json"):
    at.file_uploader(key=state.W_SPEC_JSON).set_value((name, data, "application/json"))
    return at.run()


def refused(at) -> str:
    """The page's error messages, after checking nothing raw or unforeseen."""
    assert_clean(at)
    errors = texts(at, "error")
    assert errors, texts(at)
    joined = " ".join(errors)
    assert UNEXPECTED not in joined, joined
    return joined


def pima_spec_json(pima) -> str:
    return pima.spec.to_json()


def test_a_spec_saved_with_a_byte_order_mark_loads(app, pima):
    at = sensors(app, pima)
    at = upload_spec(at, "\ufeff".encode() + pima_spec_json(pima).encode())
    assert_clean(at)
    assert "Loaded the sensors from spec.json." in texts(at, "success")
    assert not at.error


BAD_SPECS = {
    # A path, an unknown path, a directory: read as text, never opened.
    "directory": (b"/etc", "does not start with '{'"),
    "server file": (b"/etc/passwd", "does not start with '{'"),
    "missing file": (b"/no/such/file", "does not start with '{'"),
    "home path": (b"  ~/.ssh/id_rsa\n", "does not start with '{'"),
    "top-level array": (
        b'[{"name": "a", "columns": ["glucose"]}]',
        "is a JSON array",
    ),
    "string": (b'"sensors"', "does not start with '{'"),
    "empty": (b"", "is empty"),
    "not UTF-8": (b"\xff\xfe{\x00}\x00", "not UTF-8 text"),
    "very deep": (
        b'{"sensors": ' + b"[" * 20_000 + b"]" * 20_000 + b"}",
        "levels deep",
    ),
    "deep": (b'{"sensors": ' + b"[" * 50 + b"]" * 50 + b"}", "levels deep"),
    "wrong type": (b'{"sensors": [{"name": "a", "columns": 3}]}', "columns"),
}


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """Paths the app reads through pathlib while the test runs."""
    import pathlib

    seen: list[str] = []
    for name in ("read_text", "read_bytes", "open"):
        original = getattr(pathlib.Path, name)

        def spy(self, *args, _original=original, **kwargs):
            seen.append(str(self))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(pathlib.Path, name, spy)
    return seen


@pytest.mark.parametrize("case", list(BAD_SPECS))
def test_a_bad_spec_upload_is_refused_in_words(app, pima, opened, case):
    content, expected = BAD_SPECS[case]
    at = upload_spec(sensors(app, pima), content)
    message = refused(at)
    assert expected in message, message
    for leak in ("Errno", "IsADirectory", "FileNotFound", "PermissionError", "root:"):
        assert leak not in message, message
    text = content.decode("latin-1").strip()
    assert text not in opened or not text  # the content never named a file
    # The table is unchanged.
    assert at.data_editor[0].value["sensor"].tolist() == list(pima.spec.names)


def test_a_device_path_in_a_spec_upload_is_not_read(app, pima, opened):
    # Before, this read /dev/zero until the memory ran out: run with care.
    message = refused(upload_spec(sensors(app, pima), b"/dev/zero"))
    assert "does not start with '{'" in message
    assert "/dev/zero" not in opened


def test_a_spec_over_its_cap_is_refused_on_the_server(app, pima):
    # Valid JSON, padded past 1 MB: only the size is wrong.
    padded = pima_spec_json(pima).encode() + b" " * (uploads.SPEC_MAX_MB * 2**20)
    message = refused(upload_spec(sensors(app, pima), padded, "big.json"))
    assert "over the 1 MB limit on sensor specs" in message


def test_a_csv_over_its_cap_is_refused_before_it_is_read(app):
    at = app.run()
    at.radio(key=state.W_SOURCE).set_value("upload").run()
    data = b"a,b,label\n" + b"0" * (uploads.CSV_MAX_MB * 2**20)
    at.file_uploader(key=state.W_UPLOAD).set_value(("big.csv", data, "text/csv"))
    message = refused(at.run())
    assert "'big.csv' is 50.0 MB, over the 50 MB limit on CSV files" in message


def test_a_test_csv_over_its_cap_is_refused(app):
    from test_app_data import small_csv, upload

    at = upload(app.run(), small_csv().to_csv(index=False).encode())
    at.radio(key=state.W_SPLIT).set_value("file").run()
    data = b"a,b,label\n" + b"0" * (uploads.CSV_MAX_MB * 2**20)
    at.file_uploader(key=state.W_UPLOAD_TEST).set_value(("t.csv", data, "text/csv"))
    assert "over the 50 MB limit on CSV files" in refused(at.run())


def test_a_policy_file_over_its_cap_is_refused_before_it_is_read(app, pima):
    at = prefill(app, pima).switch_page(page("export")).run()
    data = b"PK\x03\x04" + b"\0" * (uploads.MODEL_MAX_MB * 2**20)
    at.file_uploader(key=state.W_SKOPS_FILE).set_value(
        ("big.skops", data, "application/octet-stream")
    )
    message = refused(at.run())
    assert f"over the {uploads.MODEL_MAX_MB} MB limit on policy files" in message


def test_the_server_cap_is_the_largest_per_kind_cap():
    """Streamlit refuses anything over ``server.maxUploadSize`` itself; each
    kind's smaller cap is the app's check (above)."""
    with (ROOT / ".streamlit" / "config.toml").open("rb") as fh:
        config = tomllib.load(fh)
    assert config["server"]["maxUploadSize"] == uploads.SERVER_MAX_MB
    assert uploads.SERVER_MAX_MB == max(
        uploads.CSV_MAX_MB, uploads.SPEC_MAX_MB, uploads.MODEL_MAX_MB
    )
    assert uploads.MODEL_MAX_MB <= 100  # the app's own .skops files, not 200
