"""The one reader of data files: :func:`read_table` (library, CLI and app).

Bytes become text (:mod:`._text`: caps, gzip, encodings), the first lines
decide the separator and the decimal mark, the header is checked, pandas
parses the rest, and the label column is the one named or a guessed one. Every
refusal is a ``ValueError`` whose message names the file and what to change.
"""

from __future__ import annotations

import csv
import io
import os
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from .._bounded_io import read_regular_file, short_repr
from ..datasets import Dataset
from ..sensors import SensorSpec
from ..validation import check_params, int_in, real_in
from ._clean import split_train_test
from ._diagnose import Problem, diagnose, is_numeric, listing
from ._leaks import id_reason, year_like
from ._text import check_not_binary, decode_text, decompress, max_table_bytes, too_large

DELIMITERS = (",", ";", "\t", "|")
"""Separators a data file may use; the first lines decide which."""
EXTRA_NA_VALUES = ("?",)
"""Cells read as missing besides pandas' own (``""``, ``NA``, ...): UCI files
mark missing values with ``?``."""
LABEL_NAMES = (
    "label",
    "class",
    "target",
    "y",
    "species",
    "outcome",
    "diagnosis",
    "category",
)
"""Column names taken for the label when none is given (any case)."""

_SAMPLE_LINES = 50  # lines that decide the separator and the decimal mark
_SAMPLE_CHARS = 1 << 22  # ... and at most these many characters of them
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_COMMA_NUMBER = re.compile(r"^\s*[+-]?\d+,\d+\s*$")
_DOT_NUMBER = re.compile(r"^\s*[+-]?\d*\.\d+\s*$")
_FIELD_COUNTS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


@dataclass
class Table:
    """A data file as read by :func:`read_table`: its frame and how it was read.

    Attributes
    ----------
    frame : DataFrame
        The rows, column names stripped of surrounding spaces, ``?`` and empty
        cells read as missing; the index is the data row (0 = the row below
        the header).
    label : str or None
        The label column: the one named, or guessed (``label_guessed``);
        None when read without one (``features_only=True``).
    name : str
        How messages name the file (``"The file 'data.csv'"``).
    encoding, delimiter, decimal : str
        What was detected.
    compressed : bool
        Whether the file was gzip-compressed.
    label_guessed : bool
        Whether ``label`` was guessed from the column names
        (``suggest_label``) rather than given.

    Examples
    --------
    >>> from budgetdag_core import read_table
    >>> table = read_table(b"a;b;class\\n1,5;2;x\\n3,0;;y\\n")
    >>> table.description
    '2 rows x 3 columns, encoding utf-8, semicolon-separated, decimal comma'
    >>> table.label, table.label_guessed, table.X.columns.tolist()
    ('class', True, ['a', 'b'])
    """

    frame: pd.DataFrame
    label: str | None
    name: str
    encoding: str
    delimiter: str
    decimal: str = "."
    compressed: bool = False
    label_guessed: bool = False

    @property
    def description(self) -> str:
        """One line for the user: size, encoding, separator, decimal mark."""
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

    @property
    def X(self) -> pd.DataFrame:
        """The columns other than the label."""
        return self.frame[[c for c in self.frame.columns if c != self.label]]

    @property
    def y(self) -> pd.Series:
        """The label column (``ValueError`` for a table read without one)."""
        if self.label is None:
            raise ValueError(f"{self.name} was read without a label column.")
        return self.frame[self.label]

    def findings(
        self, *, cv: int = 5, columns: Sequence[str] | None = None
    ) -> list[Problem]:
        """What stands between the table and training: ``diagnose`` on
        the frame with ``label`` (blank and non-numeric cells by column
        and row, label problems, ...), errors first.

        ``columns`` restricts the checks of feature columns to those (e.g. a
        sensor spec's columns); ``cv`` is the folds training will use.
        """
        return diagnose(self.frame, self.label, cv=cv, features=columns)

    def check(self, *, cv: int = 5, columns: Sequence[str] | None = None) -> None:
        """Raise ``ValueError`` with the messages of the error findings, if any."""
        errors = [
            p.message
            for p in self.findings(cv=cv, columns=columns)
            if p.severity == "error"
        ]
        if errors:
            raise ValueError(f"{self.name}: " + " ".join(errors))

    def to_dataset(
        self,
        spec: SensorSpec | None = None,
        *,
        test_fraction: float = 0.25,
        random_state: int | None = 0,
        cv: int = 5,
    ) -> Dataset:
        """A seeded train/test split (stratified when the classes allow it) as
        a :class:`~budgetdag_core.Dataset`, after :meth:`check` (of the
        spec's columns, for ``cv`` folds); ``spec`` defaults to one sensor of
        cost 1 per feature column."""
        check_params(
            "Table.to_dataset",
            {
                "test_fraction": [real_in(0.0, 1.0, closed="neither")],
                "random_state": [int_in(0), None],
            },
            test_fraction=test_fraction,
            random_state=random_state,
        )
        if self.label is None:
            raise ValueError(f"{self.name} was read without a label column.")
        self.check(cv=cv, columns=None if spec is None else spec.columns)
        train, test = split_train_test(
            self.frame,
            self.label,
            test_fraction=test_fraction,
            random_state=random_state,
        )
        if spec is None:
            spec = SensorSpec.per_column([str(c) for c in self.X.columns], cost=1.0)
        return Dataset(
            _subject_name(self.name),
            train,
            test,
            self.label,
            spec,
            f"{self.name}: {self.description}.",
            kind="table",
        )


# ------------------------------------------------------------------ detection
def _sample_lines(
    text: str, n: int = _SAMPLE_LINES, limit: int = _SAMPLE_CHARS
) -> list[str]:
    """The first ``n`` non-blank lines among the first ``4 n`` lines and
    ``limit`` characters, found without copying or splitting the whole text
    (``\\n``, ``\\r\\n`` and ``\\r`` end lines)."""
    end = 0
    for _ in range(4 * n):
        found = text.find("\n", end, limit)
        if found < 0:
            end = min(len(text), limit)
            break
        end = found + 1
    return [line for line in text[:end].splitlines() if line.strip()][:n]


def _rows(lines: list[str], delimiter: str) -> list[list[str]]:
    """``lines`` split by :mod:`csv` (quoted separators do not split); a field
    over :mod:`csv`'s size limit leaves the rows before it."""
    rows: list[list[str]] = []
    try:
        rows.extend(csv.reader(lines, delimiter=delimiter))
    except csv.Error:
        pass
    return rows


def detect_delimiter(text: str, candidates: Sequence[str] = DELIMITERS) -> str:
    """The delimiter that splits the first lines into the same number (>1) of fields.

    Lines are parsed with :mod:`csv` so quoted delimiters do not count. Ties go to
    more fields, then to the earlier candidate. Falls back to ``","``.

    Examples
    --------
    >>> detect_delimiter("a;b\\n1,5;2,5\\n")
    ';'
    """
    lines = _sample_lines(text)
    if not lines:
        return ","
    best, best_score = ",", (-1.0, 0)
    for delim in candidates:
        counts = [len(row) for row in _rows(lines, delim)]
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


def detect_decimal(text: str, delimiter: str) -> str:
    """``","`` when a non-comma-separated sample writes numbers as ``1,5``."""
    if delimiter == ",":
        return "."
    cells = [cell for row in _rows(_sample_lines(text)[1:], delimiter) for cell in row]
    commas = sum(bool(_COMMA_NUMBER.match(c)) for c in cells)
    dots = sum(bool(_DOT_NUMBER.match(c)) for c in cells)
    return "," if commas > 0 and dots == 0 else "."


def _header(text: str, delimiter: str) -> list[str]:
    """The first non-blank line's names, however long it is."""
    for row in _rows(_sample_lines(text, 1, len(text)), delimiter):
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
            f"{short_repr(c)} (columns {listing(map(str, p), quote=False)})"
            for c, p in list(dups.items())[:5]
        )
        if len(dups) > 5:
            listed += f"; and {len(dups) - 5} more names"
        raise ValueError(
            f"{name} has duplicate column names: {listed}. Give every column a "
            "unique name and read it again."
        )


def suggest_label(columns: Sequence[str] | pd.DataFrame) -> str:
    """The label column a table most likely has, from its names or its frame.

    From names only: one named like a label (``LABEL_NAMES``, any case),
    else the last column. From a frame, never a column of row numbers or
    identifiers, nor one of whole numbers that read as years (unless named
    like a label): a column named like a label, else one whose name holds
    such a word (``target_class``), else the last text column, else the
    last other column with at least two values.

    Examples
    --------
    >>> suggest_label(["a", "Class", "b"]), suggest_label(["u", "v"])
    ('Class', 'v')
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"rownames": range(1, 31),
    ...                       "kind": ["a", "b", "c"] * 10,
    ...                       "mass": [float(i % 7) for i in range(30)],
    ...                       "year": [2007, 2008, 2009] * 10})
    >>> suggest_label(frame)
    'kind'
    """
    if not isinstance(columns, pd.DataFrame):
        names = [str(c) for c in columns]
        lowered = {c.lower(): c for c in names}
        for cand in LABEL_NAMES:
            if cand in lowered:
                return lowered[cand]
        return names[-1]
    frame = columns
    names = [str(c) for c in frame.columns]
    lowered = {c.lower(): c for c in names}
    for cand in LABEL_NAMES:  # named so: taken (a single class is refused later)
        if cand in lowered:
            return lowered[cand]
    usable = [
        c for c in names if frame[c].nunique() >= 2 and id_reason(frame[c]) is None
    ]
    words = set(LABEL_NAMES) - {"y"}  # "pos_y" is a coordinate
    for c in usable:
        tokens = set(re.split(r"[^a-z0-9]+", c.lower()))
        if tokens & words and "id" not in tokens:
            return c
    text = [c for c in usable if not is_numeric(frame[c])]
    if text:
        return text[-1]
    plain = [c for c in usable if not year_like(frame[c])]
    return plain[-1] if plain else names[-1]


# -------------------------------------------------------------------- reading
def _source_bytes(source: Any, max_bytes: int) -> tuple[bytes, str]:
    """The bytes of a path, bytes or an open file, at most ``max_bytes`` + 1
    of them, and the file's name for messages."""
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source), "The file"
    if isinstance(source, str | os.PathLike):
        name = f"The file {Path(source).name or str(source)!r}"
        try:
            data = read_regular_file(source, max_bytes, "data file")
        except ValueError as exc:
            if "is larger than" in str(exc):  # the cap's one message
                raise too_large(name, max_bytes, "") from None
            raise
        return data, name
    read = getattr(source, "read", None)
    if not callable(read):
        raise TypeError(
            "read_table reads a path, bytes or an open file; got "
            f"{type(source).__name__}."
        )
    data = read(max_bytes + 1)
    if isinstance(data, str):
        data = data.encode("utf-8")
    shown = Path(str(getattr(source, "name", ""))).name
    return bytes(data), f"The file {shown!r}" if shown else "The file"


def _parse(
    text: str, delimiter: str, decimal: str, header: Sequence[str], name: str
) -> pd.DataFrame:
    """pandas' C parser on the whole text, with rows of more fields than the
    header refused (``index_col=False``: never shifted into an index) and the
    empty column of a trailing separator on every line left out."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.StringIO(text),
                sep=delimiter,
                decimal=decimal,
                na_values=list(EXTRA_NA_VALUES),
                skipinitialspace=True,
                index_col=False,
            )
    except pd.errors.ParserError as exc:
        detail = str(exc).strip().splitlines()[-1].rstrip(".")
        fields = _FIELD_COUNTS.search(detail)
        if fields is not None:
            expected, line, saw = fields.groups()
            detail = f"line {line} has {saw} fields where the header has {expected}"
        raise ValueError(
            f"{name} could not be read as a "
            f"{_DELIMITER_NAMES.get(delimiter, delimiter)}-separated table: {detail}. "
            "Check that every row has as many fields as the header."
        ) from None
    except pd.errors.EmptyDataError:
        raise ValueError(f"{name} is empty (no columns).") from None
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        raise ValueError(
            f"{name} has rows with more fields than the header's "
            f"{frame.shape[1]}. Check that every row has as many fields as the "
            "header."
        )
    frame.columns = [str(c).strip() for c in frame.columns]
    if len(header) > 1 and not header[-1] and frame.iloc[:, -1].isna().all():
        frame = frame.iloc[:, :-1]
    return frame


def _choose_label(
    frame: pd.DataFrame, label: str | None, name: str
) -> tuple[str, bool]:
    """The label column asked for, or a guessed one; a table with a label
    needs at least one other column."""
    columns = [str(c) for c in frame.columns]
    if label is not None and label not in columns:
        raise ValueError(
            f"Label column {short_repr(label)} is not in {_lower(name)}; its columns: "
            f"{listing(columns)}."
        )
    if len(columns) < 2:
        raise ValueError(
            f"{name} has only one column (tried comma, semicolon, tab and pipe as "
            "separators). A table for BudgetDAG needs a label column and at least "
            "one feature column, separated by one of these characters."
        )
    return (label, False) if label is not None else (suggest_label(frame), True)


def read_table(
    source: str | os.PathLike | bytes | IO,
    *,
    label: str | None = None,
    features_only: bool = False,
    name: str | None = None,
    max_bytes: int | None = None,
) -> Table:
    """Read a CSV data file as the library, the command line and the app do.

    Detects gzip compression, the encoding (UTF-8 with or without a byte-order
    mark, UTF-16/32, Windows-1252, Latin-1), the separator (comma, semicolon,
    tab or pipe; quoted separators do not count) and a decimal comma. Empty
    cells, ``NA`` and ``?`` are missing; column names are stripped of spaces;
    a trailing separator on every line adds no column; Windows line ends
    read as any other. Work and memory are bounded by ``max_bytes``.

    Parameters
    ----------
    source : path, bytes or binary file
        A path of a regular file (never a FIFO or device), the file's bytes,
        or an open file (at most ``max_bytes`` + 1 bytes are read).
    label : str, optional
        The label column; refused, naming the columns, when absent. Default:
        guessed from the names (``LABEL_NAMES``), else the last column.
    features_only : bool
        Read a table of feature columns only (to predict): no label is
        chosen and one column is enough.
    name : str, optional
        How messages name the file (default ``"The file '<file name>'"``).
    max_bytes : int, optional
        Largest accepted size after decompression (default:
        ``budgetdag_core.tables.max_table_bytes``, 100 MB unless
        ``BUDGETDAG_MAX_TABLE_MB`` says otherwise).

    Returns
    -------
    Table
        The frame, its label column and how the file was read;
        :meth:`Table.findings` lists blank and non-numeric cells by column
        and row, and the label's problems.

    Raises
    ------
    ValueError
        For every file it cannot use, in one sentence naming the file and
        what to change: empty, binary (a spreadsheet, a PDF, ...), over the
        cap, an encoding that does not decode, duplicate column names, rows
        longer than the header, a header without rows, one column, an absent
        label column.

    Examples
    --------
    >>> from budgetdag_core import read_table
    >>> table = read_table(b"x;y;label\\n1,5;2;a\\n3,0;?;b\\n", name="The file 'm.csv'")
    >>> table.frame
         x    y label
    0  1.5  2.0     a
    1  3.0  NaN     b
    >>> print(table.findings(cv=1)[0].message)  # doctest: +NORMALIZE_WHITESPACE
    1 row(s) have missing, infinite or huge (>= 1e+150) values, in column(s)
    'y' (1): 'y' row 3 (the header is row 1). Drop those rows, or fill them in
    (median of the column; most frequent value for text columns).
    >>> read_table(b"a,b,a\\n1,2,3\\n", name="The file 'd.csv'")
    Traceback (most recent call last):
    ...
    ValueError: The file 'd.csv' has duplicate column names: 'a' (columns 1, 3). \
Give every column a unique name and read it again.
    """
    limit = max_table_bytes() if max_bytes is None else _positive_int(max_bytes)
    data, default_name = _source_bytes(source, limit)
    name = default_name if name is None else name
    if len(data) == 0:
        raise ValueError(f"{name} is empty (0 bytes).")
    compressed = data[:2] == b"\x1f\x8b"
    if compressed:
        data = decompress(data, name, limit)
    if len(data) > limit:
        raise too_large(name, limit, "")
    check_not_binary(data, name)
    text, encoding = decode_text(data, name)
    if not text.strip():
        raise ValueError(f"{name} is empty (no text).")
    delimiter = detect_delimiter(text)
    decimal = detect_decimal(text, delimiter)
    header = _header(text, delimiter)
    check_header(header, name)
    frame = _parse(text, delimiter, decimal, header, name)
    if len(frame) == 0:
        raise ValueError(f"{name} has a header but no data rows.")
    chosen, guessed = (None, False)
    if not features_only:
        chosen, guessed = _choose_label(frame, label, name)
    return Table(frame, chosen, name, encoding, delimiter, decimal, compressed, guessed)


def _positive_int(max_bytes: Any) -> int:
    if (
        isinstance(max_bytes, bool)
        or not isinstance(max_bytes, int | np.integer)
        or max_bytes < 1
    ):
        raise ValueError(
            f"max_bytes must be a positive integer; got {short_repr(max_bytes)}."
        )
    return int(max_bytes)


def _lower(name: str) -> str:
    """``The file 'x'`` as the middle of a sentence: ``the file 'x'``."""
    return name[:1].lower() + name[1:] if name.startswith("The ") else name


def _subject_name(name: str) -> str:
    """``The file 'x.csv'`` -> ``x.csv``."""
    match = re.fullmatch(r"The file '(.*)'", name)
    return match.group(1) if match else name
