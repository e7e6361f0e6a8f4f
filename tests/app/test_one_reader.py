"""One file, one reading: the library, the command line and the app agree.

Every file of the corpus in ``tests/data/tables`` (written by its
``make_tables.py``) is read by ``read_table``, by the command line
(``budgetdag check``, and the reader its commands share) and by the app's
Data page (an AppTest upload): the same frame (values, dtypes, column names)
and the same messages, refusals and findings alike. Each file also says
what it must read as, so the three cannot agree on something wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest
from app_helpers import APP, TIMEOUT, assert_clean, texts
from streamlit.testing.v1 import AppTest

from budgetdag_core import cli, read_table
from ui import state

CORPUS = Path(__file__).resolve().parents[1] / "data" / "tables"
FILES = sorted(p.name for p in CORPUS.iterdir() if p.suffix != ".py")
ABC = ["a", "b", "label"]

# What each file reads as: its columns and label (guessed), or the words of
# its refusal; and the kinds of the error findings.
EXPECTED: dict[str, dict] = {
    "comma.csv": {"columns": ABC},
    "semicolon_decimal_comma.csv": {"columns": ABC, "a": [1.5, 3.25, -0.5]},
    "tab.tsv": {"columns": ABC, "a": [1.5, 3.25, -0.5]},
    "pipe.csv": {"columns": ABC},
    "utf8_bom.csv": {"columns": ["café", "température", "label"]},
    "utf8_accents.csv": {"columns": ["poids", "größe", "saison"], "label": "saison"},
    "latin1.csv": {"columns": ["précision", "durée", "classe"], "a": [1.5, 3.0]},
    "utf16_excel.txt": {"columns": ABC, "a": [1.5, 3.25, -0.5]},
    "quoted_header.csv": {
        "columns": ["weight", "name, full", "label"],
        "errors": ["non_numeric"],
    },
    "blank_labels.csv": {"columns": ABC, "errors": ["label_missing"]},
    "blank_cells.csv": {"columns": ABC, "errors": ["missing"]},
    "non_numeric.csv": {"columns": ABC, "errors": ["non_numeric", "missing"]},
    "question_marks.csv": {"columns": ABC, "errors": ["missing"]},
    "duplicate_columns.csv": {"refused": "duplicate column names: 'a' (columns 1, 3)"},
    "one_column.csv": {"refused": "has only one column"},
    "empty.csv": {"refused": "is empty (0 bytes)"},
    "blank_lines_only.csv": {"refused": "is empty (no text)"},
    "header_only.csv": {"refused": "has a header but no data rows"},
    "trailing_separator.csv": {"columns": ABC, "a": [1.5, 3.25, -0.5]},
    "trailing_separator_rows.csv": {"columns": ABC, "a": [1.5, 3.25, -0.5]},
    "windows_line_ends.csv": {"columns": ABC, "label_values": ["yes", "no", "yes"]},
    "ragged_rows.csv": {"refused": "line 3 has 4 fields where the header has 3"},
    "spaces_in_header.csv": {"columns": ABC, "label_values": ["yes", "no"]},
    "label_named_class.csv": {"columns": ["Class", "x", "y"], "label": "Class"},
    "gzip.csv.gz": {"columns": ABC, "a": [1.5, 3.25, -0.5]},
    "excel_workbook.csv": {"refused": "is an Excel workbook"},
}


@dataclass
class Reading:
    """What a front end made of a file: a frame and findings, or a refusal."""

    refused: str | None = None
    frame: pd.DataFrame | None = None
    label: str | None = None
    findings: list[str] = field(default_factory=list)


def one_line(text: str) -> str:
    return " ".join(text.split())


def by_library(path: Path) -> Reading:
    try:
        table = read_table(path)
    except ValueError as exc:
        return Reading(refused=one_line(str(exc)))
    findings = [one_line(p.message) for p in table.findings()]
    return Reading(frame=table.frame, label=table.label, findings=findings)


def by_command_line(path: Path, capsys) -> Reading:
    capsys.readouterr()
    code = cli.main(["check", str(path)])
    out, err = capsys.readouterr()
    if code == 2:
        prefix = "budgetdag check: error: "
        assert err.startswith(prefix) and err.count("\n") == 1, err
        return Reading(refused=err[len(prefix) :].strip())
    report = json.loads(out)
    frame = cli.read_data(str(path)).frame  # what train, sweep, evaluate read
    assert report["columns"] == [str(c) for c in frame.columns]
    assert report["dtypes"] == [str(t) for t in frame.dtypes]
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert code == (1 if errors else 0), report
    findings = [one_line(f["message"]) for f in report["findings"]]
    return Reading(frame=frame, label=report["label"], findings=findings)


@pytest.fixture(scope="module")
def data_page() -> dict:
    """One app session for the whole corpus: each test uploads its file."""
    return {"at": AppTest.from_file(APP, default_timeout=TIMEOUT), "started": False}


def by_app(page: dict, path: Path) -> Reading:
    at = page["at"]
    if not page["started"]:
        at.run()
        at.radio(key=state.W_SOURCE).set_value("upload").run()
        page["started"] = True
    at.file_uploader(key=state.W_UPLOAD).set_value(
        (path.name, path.read_bytes(), "text/csv")
    )
    at.run()
    assert_clean(at)
    what_to_do = "\n\n**What to do:**"
    refusals = [e.split(what_to_do)[0] for e in texts(at, "error") if what_to_do in e]
    if refusals:
        assert len(refusals) == 1, refusals
        return Reading(refused=one_line(refusals[0]))
    upload = at.session_state[state.UPLOAD]
    assert upload.name == path.name
    # The Checks boxes: every error, warning and note but the banner that
    # says which table is in use.
    shown = [one_line(t) for t in texts(at, "error", "warning", "info")]
    return Reading(
        frame=upload.raw,
        label=at.session_state[state.W_LABEL],
        findings=[t for t in shown if "In use for training:" not in t],
    )


def test_the_corpus_covers_every_case():
    assert len(FILES) >= 20
    assert sorted(EXPECTED) == FILES


@pytest.mark.parametrize("name", FILES)
def test_every_front_end_reads_a_file_alike(name, capsys, data_page):
    path = CORPUS / name
    library = by_library(path)
    command_line = by_command_line(path, capsys)
    app = by_app(data_page, path)
    expected = EXPECTED[name]
    if "refused" in expected:
        assert library.refused is not None, name
        assert expected["refused"] in library.refused
        assert f"'{name}'" in library.refused  # the file is named
        assert command_line.refused == library.refused
        assert app.refused == library.refused
        return
    assert library.refused is None, library.refused
    assert command_line.refused is None and app.refused is None
    frame = library.frame
    assert list(frame.columns) == expected["columns"]
    assert library.label == expected.get("label", expected["columns"][-1])
    if "a" in expected:
        assert frame.iloc[:, 0].tolist() == expected["a"]
    if "label_values" in expected:
        assert frame[library.label].tolist() == expected["label_values"]
    errors = [p.kind for p in read_table(path).findings() if p.severity == "error"]
    for kind in expected.get("errors", []):
        assert kind in errors, (kind, errors)
    for other in (command_line, app):
        pd.testing.assert_frame_equal(other.frame, frame, check_exact=True)
        assert other.label == library.label
    assert command_line.findings == library.findings
    assert app.findings == library.findings  # shown in the same order
    if not library.findings:
        assert "The table is ready for training." in texts(data_page["at"], "success")
