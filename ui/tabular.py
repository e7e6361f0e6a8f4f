"""Read, diagnose and clean an uploaded table before training (pure pandas).

The app's Data page is a thin layer over these functions:

- :func:`read_csv_bytes` turns uploaded bytes into a DataFrame, detecting gzip,
  the text encoding, the delimiter and a decimal comma, and raises ``ValueError``
  with a message a user can act on for every input it cannot use (not a CSV,
  empty, one column, duplicate column names, ragged rows).
- :func:`diagnose` lists what stands between a table and training (label with
  one class, non-numeric or missing feature values, rare classes, very many
  columns, ...) as :class:`Problem` records with the fixes that apply.
- :func:`apply_fix` applies one fix (drop or one-hot columns, impute, drop rows,
  ...). A cleaning recipe is a list of :class:`Fix`, replayed on the raw table by
  :func:`apply_fixes`, so a second (test) file gets exactly the same treatment.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from budgetdag_core.validation import MAX_ABS_VALUE, MAX_FULL_DAG_SENSORS

MAX_UPLOAD_MB = 50
"""Upload size limit stated in the app (megabytes, compressed size)."""

MAX_TABLE_MB = 2 * MAX_UPLOAD_MB
"""Default cap on a table after gzip decompression (megabytes); see
:func:`max_table_bytes`."""

MAX_TABLE_BYTES = MAX_TABLE_MB * 2**20
""":data:`MAX_TABLE_MB` in bytes."""

MAX_TABLE_ENV = "BUDGETDAG_MAX_TABLE_MB"
"""Environment variable that raises (or lowers) the cap on tables, in MB."""

_CHUNK = 2**20  # gunzip this many bytes at a time
_SNIFF_BYTES = 8192  # bytes looked at to recognise binary files and encodings

DELIMITERS = (",", ";", "\t", "|")
ENCODINGS = ("utf-8-sig", "cp1252", "latin-1")
EXTRA_NA_VALUES = ("?",)  # UCI files mark missing values with "?"
MANY_CATEGORIES = 50
LABEL_NAMES = ("label", "class", "target", "y", "outcome", "diagnosis", "category")

_MAGIC = {
    b"PK\x03\x04": "an Excel workbook (.xlsx) or a ZIP archive",
    b"\xd0\xcf\x11\xe0": "an old-style Excel workbook (.xls)",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"PAR1": "a Parquet file",
    b"SQLite format 3": "an SQLite database",
    b"\x80\x04": "a Python pickle",
    b"\x80\x05": "a Python pickle",
}
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}


@dataclass
class CsvTable:
    """A parsed upload and how it was read."""

    frame: pd.DataFrame
    encoding: str
    delimiter: str
    decimal: str = "."
    compressed: bool = False

    @property
    def description(self) -> str:
        """One line for the user: encoding, delimiter, decimal mark."""
        parts = [
            f"{len(self.frame)} rows x {self.frame.shape[1]} columns",
            f"encoding {self.encoding}",
            f"{_DELIMITER_NAMES.get(self.delimiter, repr(self.delimiter))}-separated",
        ]
        if self.decimal != ".":
            parts.append("decimal comma")
        if self.compressed:
            parts.append("gzip-compressed")
        return ", ".join(parts)


# --------------------------------------------------------------------- reading
def max_table_bytes() -> int:
    """The cap on a table's size after decompression, in bytes.

    :data:`MAX_TABLE_MB` megabytes unless the environment variable
    ``BUDGETDAG_MAX_TABLE_MB`` sets another number (for a server with the memory).
    """
    raw = os.environ.get(MAX_TABLE_ENV, "").strip()
    if not raw:
        return MAX_TABLE_BYTES
    try:
        megabytes = float(raw)
    except ValueError:
        megabytes = -1.0
    if not megabytes > 0 or not np.isfinite(megabytes):
        raise ValueError(
            f"{MAX_TABLE_ENV}={raw!r} is not a positive number of megabytes."
        )
    return int(megabytes * 2**20)


def _too_large(name: str, max_bytes: int, what: str) -> ValueError:
    return ValueError(
        f"{name} is larger than {max_bytes / 2**20:g} MB{what}, the cap on tables: "
        "use a sample of the rows, or raise the cap (Python: "
        "read_csv_bytes(..., max_bytes=...); app: start the server with "
        f"{MAX_TABLE_ENV}=<megabytes>)."
    )


def _decompress(data: bytes, name: str, max_bytes: int) -> bytes:
    """Gunzip in chunks, stopping as soon as the output passes ``max_bytes``.

    A small file can expand a thousandfold (a "gzip bomb"): memory stays within
    the cap plus one chunk.
    """
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            while chunk := fh.read(_CHUNK):
                out += chunk
                if len(out) > max_bytes:
                    raise _too_large(name, max_bytes, " once decompressed")
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(
            f"{name} looks gzip-compressed but is damaged: {exc}."
        ) from None
    return bytes(out)


def _nul_rates(data: bytes) -> np.ndarray:
    """Share of NUL bytes at each position modulo 4 in the first bytes."""
    sample = np.frombuffer(data[: _SNIFF_BYTES - _SNIFF_BYTES % 4], np.uint8)
    sample = sample[: len(sample) - len(sample) % 4].reshape(-1, 4)
    if len(sample) == 0:
        return np.zeros(4)
    return (sample == 0).mean(axis=0)


def wide_encoding(data: bytes) -> str | None:
    """UTF-32 or UTF-16 recognised by a byte-order mark or by where NULs fall.

    Text that is mostly ASCII, written in UTF-16 without a byte-order mark, has
    a NUL in every other byte (``a\0b\0``, little-endian); in UTF-32 three
    bytes of four are NUL. Returns a codec name (``"utf-32"``, ``"utf-16-le"``,
    ...) or ``None`` for a byte-oriented encoding.
    """
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if len(data) < 4 or b"\x00" not in data[:_SNIFF_BYTES]:
        return None
    rates = _nul_rates(data)
    high, low = rates > 0.9, rates < 0.1
    if low[0] and high[1:].all():
        return "utf-32-le"
    if high[:3].all() and low[3]:
        return "utf-32-be"
    if low[0] and low[2] and high[1] and high[3]:
        return "utf-16-le"
    if high[0] and high[2] and low[1] and low[3]:
        return "utf-16-be"
    return None


def _check_not_binary(data: bytes, name: str) -> None:
    for magic, what in _MAGIC.items():
        if data.startswith(magic):
            hint = (
                " Open it in your spreadsheet program and save it as CSV."
                if "Excel" in what
                else ""
            )
            raise ValueError(f"{name} is {what}, not a CSV text file.{hint}")
    if b"\x00" in data[:_SNIFF_BYTES] and wide_encoding(data) is None:
        raise ValueError(
            f"{name} is a binary file, not a CSV text file: upload a table saved as "
            "CSV (comma, semicolon, tab or pipe separated). If it is text, its "
            "encoding was not recognised: save it as UTF-8."
        )


def decode_text(data: bytes, name: str = "The file") -> tuple[str, str]:
    """Decode bytes as text; return ``(text, encoding)``.

    UTF-32 and UTF-16 are recognised by their byte-order mark or, without one,
    by the pattern of NUL bytes (:func:`wide_encoding`); otherwise UTF-8 (with
    or without BOM) is tried first, then Windows-1252 and Latin-1 (which always
    succeeds). Raises ``ValueError`` naming the encoding when wide text does not
    decode or decodes to NUL characters.
    """
    wide = wide_encoding(data)
    if wide is not None:
        label = (
            wide.upper().replace("-LE", " little-endian").replace("-BE", " big-endian")
        )
        try:
            text = data.decode(wide)
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{name} looks like {label} text but does not decode as {label} "
                f"({exc.reason} at byte {exc.start}): save it as UTF-8."
            ) from None
        if wide.startswith("utf-16") and text[:1] == "\ufeff":
            text = text[1:]
        if "\x00" in text:
            raise ValueError(
                f"{name} decodes as {label} with NUL characters in it: its encoding "
                "was not recognised. Save it as UTF-8."
            )
        return text, wide.split("-le")[0].split("-be")[0]
    for encoding in ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        return text, encoding.replace("-sig", "")
    raise AssertionError("latin-1 decodes any bytes")  # pragma: no cover


def _sample_lines(text: str, n: int = 50) -> list[str]:
    lines = [ln for ln in text.splitlines()[: 4 * n] if ln.strip()]
    return lines[:n]


def detect_delimiter(text: str, candidates: Sequence[str] = DELIMITERS) -> str:
    """The delimiter that splits the first lines into the same number (>1) of fields.

    Lines are parsed with :mod:`csv` so quoted delimiters do not count. Ties go to
    more fields, then to the earlier candidate. Falls back to ``","``.
    """
    lines = _sample_lines(text)
    if not lines:
        return ","
    best, best_score = ",", (-1.0, 0)
    for delim in candidates:
        counts = [len(row) for row in csv.reader(lines, delimiter=delim)]
        if not counts:
            continue
        mode, freq = Counter(counts).most_common(1)[0]
        if mode < 2:
            continue
        # The header must agree: a decimal comma splits data rows but not the header.
        consistency = freq / len(counts) + (counts[0] == mode)
        score = (consistency, mode)
        if score > best_score:
            best, best_score = delim, score
    return best


_COMMA_NUMBER = re.compile(r"^\s*[+-]?\d+,\d+\s*$")
_DOT_NUMBER = re.compile(r"^\s*[+-]?\d*\.\d+\s*$")


def detect_decimal(text: str, delimiter: str) -> str:
    """``","`` when a non-comma-separated sample writes numbers as ``1,5``."""
    if delimiter == ",":
        return "."
    cells = [
        cell
        for row in csv.reader(_sample_lines(text)[1:], delimiter=delimiter)
        for cell in row
    ]
    commas = sum(bool(_COMMA_NUMBER.match(c)) for c in cells)
    dots = sum(bool(_DOT_NUMBER.match(c)) for c in cells)
    return "," if commas > 0 and dots == 0 else "."


def _header(text: str, delimiter: str) -> list[str]:
    for row in csv.reader(_sample_lines(text, 1), delimiter=delimiter):
        return [c.strip() for c in row]
    return []


def check_header(names: Sequence[str], name: str = "The file") -> None:
    """Raise ``ValueError`` naming duplicate column names and their positions."""
    positions: dict[str, list[int]] = {}
    for i, col in enumerate(names, start=1):
        if col:
            positions.setdefault(col, []).append(i)
    dups = {c: p for c, p in positions.items() if len(p) > 1}
    if dups:
        listed = "; ".join(
            f"{c!r} (columns {', '.join(map(str, p))})" for c, p in dups.items()
        )
        raise ValueError(
            f"{name} has duplicate column names: {listed}. Give every column a "
            "unique name and upload it again."
        )


def read_csv_bytes(
    data: bytes, *, name: str = "The file", max_bytes: int | None = None
) -> CsvTable:
    """Parse an uploaded CSV, or raise ``ValueError`` saying what is wrong.

    Parameters
    ----------
    data : bytes
        The file's content; gzip-compressed content is decompressed.
    name : str
        How to call the file in messages (e.g. its file name).
    max_bytes : int, optional
        Largest accepted size, after decompression (default:
        :func:`max_table_bytes`, 100 MB unless ``BUDGETDAG_MAX_TABLE_MB`` says
        otherwise). Gzip content is decompressed in chunks and refused as soon
        as it passes the cap.

    Returns
    -------
    CsvTable
        The frame (column names stripped of surrounding spaces; ``?`` read as
        missing) and the detected encoding, delimiter and decimal mark.

    Examples
    --------
    >>> t = read_csv_bytes(b"a;b;label\\n1,5;2;x\\n3,0;4;y\\n")
    >>> t.delimiter, t.decimal, t.frame["a"].tolist()
    (';', ',', [1.5, 3.0])
    """
    if len(data) == 0:
        raise ValueError(f"{name} is empty (0 bytes).")
    if max_bytes is None:
        max_bytes = max_table_bytes()
    compressed = data[:2] == b"\x1f\x8b"
    if compressed:
        data = _decompress(data, name, max_bytes)
    if len(data) > max_bytes:
        raise _too_large(name, max_bytes, "")
    _check_not_binary(data, name)
    text, encoding = decode_text(data, name)
    if not text.strip():
        raise ValueError(f"{name} is empty (no text).")
    delimiter = detect_delimiter(text)
    decimal = detect_decimal(text, delimiter)
    header = _header(text, delimiter)
    if len(header) < 2:
        raise ValueError(
            f"{name} has only one column (tried comma, semicolon, tab and pipe as "
            "separators). A table for BudgetDAG needs a label column and at least "
            "one feature column, separated by one of these characters."
        )
    check_header(header, name)
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            sep=delimiter,
            decimal=decimal,
            na_values=list(EXTRA_NA_VALUES),
            skipinitialspace=True,
        )
    except pd.errors.ParserError as exc:
        detail = str(exc).strip().splitlines()[-1]
        raise ValueError(
            f"{name} could not be read as a "
            f"{_DELIMITER_NAMES.get(delimiter, delimiter)}-separated table: {detail}. "
            "Check that every row has as many fields as the header."
        ) from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{name} is empty (no columns).") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    if len(frame) == 0:
        raise ValueError(f"{name} has a header but no data rows.")
    return CsvTable(frame, encoding, delimiter, decimal, compressed)


# ------------------------------------------------------------------- summaries
def is_numeric(series: pd.Series) -> bool:
    """Numeric or boolean dtype (what the estimator accepts as features)."""
    return bool(
        pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)
    )


def _missing_mask(series: pd.Series) -> pd.Series:
    """Missing, infinite or too large values (training rejects those three)."""
    mask = series.isna()
    if pd.api.types.is_float_dtype(series):
        values = np.abs(series.to_numpy(dtype=float, na_value=np.nan))
        mask |= np.isinf(values) | (values >= MAX_ABS_VALUE)
    return mask


def column_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per column: dtype, numeric, missing count, distinct values, example."""
    rows = []
    for col in frame.columns:
        s = frame[col]
        present = s.dropna()
        rows.append(
            {
                "column": str(col),
                "type": str(s.dtype),
                "numeric": is_numeric(s),
                "missing": int(_missing_mask(s).sum()),
                "distinct": int(present.nunique()),
                "example": str(present.iloc[0]) if len(present) else "",
            }
        )
    return pd.DataFrame(rows)


def class_balance(y: pd.Series) -> pd.DataFrame:
    """Rows and share per class, largest first."""
    counts = y.value_counts(dropna=True)
    return pd.DataFrame(
        {
            "class": counts.index.astype(str),
            "rows": counts.to_numpy(),
            "share": (counts / max(counts.sum(), 1)).to_numpy(),
        }
    )


def suggest_label(columns: Sequence[str]) -> str:
    """A column named like a label (``label``, ``class``, ``target``, ...), else the
    last column."""
    lowered = {str(c).lower(): str(c) for c in columns}
    for cand in LABEL_NAMES:
        if cand in lowered:
            return lowered[cand]
    return str(columns[-1])


# ------------------------------------------------------------------- diagnosis
@dataclass(frozen=True)
class Problem:
    """Something to fix (``severity="error"``) or to know before training.

    ``fixes`` names the :func:`apply_fix` operations that address it, applied to
    ``columns``.
    """

    kind: str
    severity: str  # "error" blocks training; "warning" and "info" do not
    message: str
    columns: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()


def _listing(items: Iterable[str], limit: int = 8) -> str:
    items = list(items)
    shown = ", ".join(repr(i) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def diagnose(
    frame: pd.DataFrame,
    label: str,
    *,
    cv: int = 5,
    max_sensors: int = MAX_FULL_DAG_SENSORS,
) -> list[Problem]:
    """What stands between ``frame`` and training with ``label`` as the target.

    Parameters
    ----------
    frame : DataFrame
        The table: the label column and feature columns.
    label : str
        The label column.
    cv : int
        Cross-validation folds planned for training (each class needs ``cv`` rows).
    max_sensors : int
        Largest number of sensors for a full DAG; more feature columns than this
        get a note on grouping columns into sensors.

    Returns
    -------
    list of Problem
        Errors first, then warnings, then notes. Empty when all is well.
    """
    if label not in frame.columns:
        return [
            Problem("no_label", "error", f"There is no column {label!r} in the table.")
        ]
    features = [str(c) for c in frame.columns if c != label]
    out: list[Problem] = []
    if not features:
        out.append(
            Problem(
                "no_features",
                "error",
                "The table has no feature columns besides the label.",
            )
        )
    out += _label_problems(frame[label], label, cv)
    non_numeric = [c for c in features if not is_numeric(frame[c])]
    if non_numeric:
        out.append(_non_numeric_problem(frame, non_numeric))
    missing = _missing_problem(frame, features)
    out += [missing] if missing is not None else []
    out += _size_problems(frame, features, cv, max_sensors)
    constant = [
        c
        for c in features
        if c not in non_numeric and frame[c].nunique(dropna=True) <= 1
    ]
    if constant:
        out.append(
            Problem(
                "constant",
                "info",
                f"Column(s) {_listing(constant)} hold a single value and carry no "
                "information; you may drop them.",
                tuple(constant),
                ("drop_columns",),
            )
        )
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda p: order[p.severity])


def _label_problems(y: pd.Series, label: str, cv: int) -> list[Problem]:
    """Missing labels, a single class, too many classes, classes too rare."""
    out = []
    n_missing_label = int(y.isna().sum())
    if n_missing_label:
        out.append(
            Problem(
                "label_missing",
                "error",
                f"{n_missing_label} row(s) have no value in the label column "
                f"{label!r}.",
                (label,),
                ("drop_missing_label",),
            )
        )
    counts = y.value_counts(dropna=True)
    if len(counts) == 1:
        out.append(
            Problem(
                "one_class",
                "error",
                f"The label column {label!r} has a single value ({counts.index[0]!r}): "
                "a classifier needs at least two classes. Choose another label column.",
                (label,),
            )
        )
    elif len(counts) > 1:
        if len(counts) > max(20, len(y) // 2):
            out.append(
                Problem(
                    "many_classes",
                    "warning",
                    f"The label {label!r} has {len(counts)} distinct values in "
                    f"{len(y)} rows: it looks like a measurement or an identifier, not "
                    "a class. BudgetDAG classifies: choose a categorical label.",
                    (label,),
                )
            )
        rare = counts[counts < cv]
        if len(rare):
            out.append(
                Problem(
                    "rare_classes",
                    "error",
                    f"Class(es) {_listing(map(str, rare.index))} have fewer than {cv} "
                    f"rows (smallest: {int(rare.min())}); training with {cv} "
                    "cross-validation folds needs at least that many rows per class. "
                    "Drop those rows, or lower the number of folds on the Train page.",
                    (label,),
                    ("drop_rare_classes",),
                )
            )
    return out


def _non_numeric_problem(frame: pd.DataFrame, non_numeric: list[str]) -> Problem:
    """Feature columns that are not numbers, with an example value each."""
    examples = []
    for c in non_numeric[:8]:
        present = frame[c].dropna()
        bad = present[pd.to_numeric(present, errors="coerce").isna()]
        example = bad.iloc[0] if len(bad) else (present.iloc[0] if len(present) else "")
        examples.append(f"{c!r} (e.g. {str(example)!r})")
    more = f" and {len(non_numeric) - 8} more" if len(non_numeric) > 8 else ""
    fixes = ["drop_columns", "one_hot"]
    if any(_mostly_numeric(frame[c]) for c in non_numeric):
        fixes.append("to_numeric")
    return Problem(
        "non_numeric",
        "error",
        f"Feature column(s) {', '.join(examples)}{more} are not numeric. "
        "Drop them, or one-hot encode them (one 0/1 column per category)"
        + (
            ", or convert them to numbers (values that are not numbers become missing)."
            if "to_numeric" in fixes
            else "."
        ),
        tuple(non_numeric),
        tuple(fixes),
    )


def _missing_problem(frame: pd.DataFrame, features: list[str]) -> Problem | None:
    """Rows with missing, infinite or huge feature values, if any."""
    missing = {c: int(_missing_mask(frame[c]).sum()) for c in features}
    missing = {c: k for c, k in missing.items() if k}
    if not missing:
        return None
    rows = int(
        pd.concat([_missing_mask(frame[c]) for c in missing], axis=1).any(axis=1).sum()
    )
    listed = ", ".join(f"{c!r} ({k})" for c, k in list(missing.items())[:8])
    more = f" and {len(missing) - 8} more columns" if len(missing) > 8 else ""
    return Problem(
        "missing",
        "error",
        f"{rows} row(s) have missing, infinite or huge (>= "
        f"{MAX_ABS_VALUE:g}) values, in column(s) "
        f"{listed}{more}. Drop those rows, or fill them in (median of the "
        "column; most frequent value for text columns).",
        tuple(missing),
        ("drop_missing_rows", "impute"),
    )


def _size_problems(
    frame: pd.DataFrame, features: list[str], cv: int, max_sensors: int
) -> list[Problem]:
    """Too few rows to train reliably; too many columns for a full DAG."""
    out = []
    if 0 < len(frame) < 4 * cv:
        out.append(
            Problem(
                "few_rows",
                "warning",
                f"Only {len(frame)} rows: the classifiers and policies will be "
                "unreliable; results will vary a lot with the random seed.",
            )
        )
    if len(features) > max_sensors:
        out.append(
            Problem(
                "many_columns",
                "warning",
                f"{len(features)} feature columns. One sensor per column would need "
                f"a DAG over 2^{len(features)} sensor subsets; the full DAG allows "
                f"at most {max_sensors} sensors. On the Sensors page, group columns "
                "into sensors (by a shared word in their names, a pattern, an "
                "image grid or in blocks), or keep fewer columns "
                "here; with many sensors, sensor-subset selection (n_subsets) builds "
                "the DAG over a few selected subsets instead.",
                tuple(features),
            )
        )
    return out


def _mostly_numeric(series: pd.Series, share: float = 0.8) -> bool:
    present = series.dropna()
    if not len(present):
        return False
    return float(pd.to_numeric(present, errors="coerce").notna().mean()) >= share


def has_errors(problems: Iterable[Problem]) -> bool:
    return any(p.severity == "error" for p in problems)


# ----------------------------------------------------------------------- fixes
FIXES = {
    "drop_columns": "Drop the columns",
    "one_hot": "One-hot encode (one 0/1 column per category)",
    "to_numeric": "Convert to numbers (non-numbers become missing)",
    "drop_missing_rows": "Drop rows with missing values",
    "impute": "Fill in missing values (median, or most frequent value)",
    "drop_missing_label": "Drop rows without a label",
    "drop_rare_classes": "Drop rows of the rare classes",
}


@dataclass(frozen=True)
class Fix:
    """One cleaning step: an operation of :data:`FIXES` on some columns."""

    op: str
    columns: tuple[str, ...] = ()
    label: str | None = None
    min_count: int = 0

    def describe(self) -> str:
        what = FIXES.get(self.op, self.op)
        cols = f": {_listing(self.columns, 5)}" if self.columns else ""
        if self.op == "drop_rare_classes":
            cols = f" (fewer than {self.min_count} rows)"
        return what + cols


def one_hot(
    frame: pd.DataFrame,
    columns: Sequence[str],
    *,
    max_categories: int = MANY_CATEGORIES,
) -> pd.DataFrame:
    """Replace each column by 0/1 columns ``<column>_<category>``.

    Missing values get all zeros. Raises ``ValueError`` for a column with more than
    ``max_categories`` distinct values (likely an identifier: drop it instead).
    """
    for col in columns:
        k = frame[col].nunique(dropna=True)
        if k > max_categories:
            raise ValueError(
                f"Column {col!r} has {k} distinct values: one-hot encoding would add "
                f"{k} columns (limit {max_categories}). It is probably an identifier "
                "or free text: drop it instead."
            )
    encoded = pd.get_dummies(
        frame[list(columns)].astype("string"), prefix_sep="_", dtype=float
    )
    clash = [c for c in encoded.columns if c in frame.columns]
    if clash:
        raise ValueError(
            f"One-hot encoding would create column(s) {_listing(clash)} that already "
            "exist: rename them first."
        )
    out = frame.drop(columns=list(columns))
    return pd.concat([out, encoded], axis=1)


def impute(
    frame: pd.DataFrame, columns: Sequence[str], *, fit_rows: pd.Series | None = None
) -> pd.DataFrame:
    """Fill missing (and infinite or huge) values: median of numeric columns, most
    frequent value otherwise, computed on ``fit_rows`` (a boolean mask; default all
    rows)."""
    out = frame.copy()
    for col in columns:
        s = out[col]
        if pd.api.types.is_float_dtype(s):
            s = s.mask(_missing_mask(s))
        ref = s if fit_rows is None else s[fit_rows.reindex(s.index, fill_value=False)]
        ref = ref.dropna()
        if not len(ref):
            raise ValueError(
                f"Column {col!r} has no values to impute from: drop the column."
            )
        fill = ref.median() if is_numeric(s) else ref.mode().iloc[0]
        out[col] = s.fillna(fill)
    return out


def drop_missing_rows(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Rows with a missing, infinite or huge value in any of ``columns`` removed."""
    if not columns:
        return frame
    mask = pd.concat([_missing_mask(frame[c]) for c in columns], axis=1).any(axis=1)
    return frame[~mask]


def drop_rare_classes(frame: pd.DataFrame, label: str, min_count: int) -> pd.DataFrame:
    """Rows whose class has fewer than ``min_count`` rows removed."""
    counts = frame[label].value_counts()
    keep = counts[counts >= min_count].index
    return frame[frame[label].isin(keep)]


def apply_fix(
    frame: pd.DataFrame, fix: Fix, *, fit_rows: pd.Series | None = None
) -> pd.DataFrame:
    """Apply one :class:`Fix`; the row index is kept (rows are tracked by it)."""
    missing_cols = [c for c in fix.columns if c not in frame.columns]
    if missing_cols:
        raise ValueError(
            f"Cannot {fix.describe().lower()}: column(s) {_listing(missing_cols)} are "
            "not in the table."
        )
    cols = list(fix.columns)
    if fix.op == "drop_columns":
        return frame.drop(columns=cols)
    if fix.op == "one_hot":
        return one_hot(frame, cols)
    if fix.op == "to_numeric":
        out = frame.copy()
        for c in cols:
            out[c] = pd.to_numeric(out[c], errors="coerce")
        return out
    if fix.op == "drop_missing_rows":
        return drop_missing_rows(frame, cols)
    if fix.op == "impute":
        return impute(frame, cols, fit_rows=fit_rows)
    if fix.op == "drop_missing_label":
        return frame[frame[fix.label].notna()]
    if fix.op == "drop_rare_classes":
        return drop_rare_classes(frame, fix.label, fix.min_count)
    raise ValueError(f"Unknown fix {fix.op!r}; choose from {sorted(FIXES)}.")


def apply_fixes(
    frame: pd.DataFrame,
    fixes: Sequence[Fix],
    *,
    fit_rows: pd.Series | None = None,
) -> pd.DataFrame:
    """Replay a cleaning recipe on a raw table."""
    for fix in fixes:
        frame = apply_fix(frame, fix, fit_rows=fit_rows)
    if len(frame) == 0:
        raise ValueError("No rows are left after cleaning: undo the last step.")
    return frame


def one_hot_groups(
    fixes: Sequence[Fix], columns: Sequence[str]
) -> dict[str, list[str]]:
    """For each one-hot encoded column, the 0/1 columns it became (in ``columns``).

    Used to suggest one sensor per original column.
    """
    out: dict[str, list[str]] = {}
    for fix in fixes:
        if fix.op != "one_hot":
            continue
        for col in fix.columns:
            made = [c for c in columns if str(c).startswith(f"{col}_")]
            if made:
                out[col] = made
    return out


def fix_for(problem: Problem, op: str, label: str, cv: int = 5) -> Fix:
    """The :class:`Fix` that applies ``op`` to ``problem``."""
    if op == "drop_missing_label":
        return Fix(op, label=label)
    if op == "drop_rare_classes":
        return Fix(op, label=label, min_count=cv)
    return Fix(op, tuple(problem.columns))


# ----------------------------------------------------------------- splitting
def combine_train_test(
    train: pd.DataFrame, test: pd.DataFrame, *, name: str = "The test file"
) -> tuple[pd.DataFrame, pd.Series]:
    """Stack a train and a test table with the same columns.

    Returns the stacked frame (fresh 0..n-1 index) and a boolean Series, True for
    training rows, aligned on that index. Raises ``ValueError`` naming missing or
    extra columns.
    """
    missing = [c for c in train.columns if c not in test.columns]
    extra = [c for c in test.columns if c not in train.columns]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"lacks column(s) {_listing(missing)}")
        if extra:
            parts.append(f"has extra column(s) {_listing(extra)}")
        raise ValueError(
            f"{name} {' and '.join(parts)}: the test table needs the same columns "
            "as the training table."
        )
    both = pd.concat([train, test[list(train.columns)]], ignore_index=True)
    is_train = pd.Series(np.arange(len(both)) < len(train), index=both.index)
    return both, is_train


def split_train_test(
    frame: pd.DataFrame,
    label: str,
    *,
    test_fraction: float = 0.25,
    random_state: int | None = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Random train/test split, stratified by ``label`` when every class allows it.

    Both parts get a fresh 0..n-1 index.
    """
    from sklearn.model_selection import train_test_split

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be between 0 and 1; got {test_fraction}.")
    n_test = int(np.ceil(test_fraction * len(frame)))
    if n_test < 1 or len(frame) - n_test < 2:
        raise ValueError(
            f"{len(frame)} rows are too few for a {test_fraction:.0%} test split."
        )
    counts = frame[label].value_counts()
    stratify = frame[label] if counts.min() >= 2 and n_test >= len(counts) else None
    train, test = train_test_split(
        frame, test_size=test_fraction, random_state=random_state, stratify=stratify
    )
    return train.reset_index(drop=True), test.reset_index(drop=True)
