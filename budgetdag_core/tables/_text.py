"""A table's bytes as text: size caps, gzip, binary files and encodings.

Every step does work bounded by the cap on tables (:func:`max_table_bytes`):
gzip is inflated in chunks and refused as soon as it passes the cap, and only
the first bytes are looked at to recognise binary files and wide encodings.
"""

from __future__ import annotations

import gzip
import io
import re
import zlib

import numpy as np

from .._bounded_io import env_setting, positive_number

MAX_TABLE_MB = 100
"""Default cap on a table after gzip decompression (megabytes); see
:func:`max_table_bytes`."""

MAX_TABLE_BYTES = MAX_TABLE_MB * 2**20
""":data:`MAX_TABLE_MB` in bytes."""

MAX_TABLE_ENV = "BUDGETDAG_MAX_TABLE_MB"
"""Environment variable that raises (or lowers) the cap on tables, in MB."""

ENCODINGS = ("utf-8-sig", "cp1252", "latin-1")
"""Byte-oriented encodings tried in order (Latin-1 decodes any bytes)."""

_CHUNK = 2**20  # gunzip this many bytes at a time

#: East Asian multi-byte encodings a file that is not UTF-8 is tried in, by
#: their names in messages: a file in one of them also decodes, wrongly, as
#: Windows-1252 or Latin-1 (every byte is a character there).
MULTIBYTE_ENCODINGS = {
    "shift_jis": "Shift-JIS (Japanese)",
    "euc_jp": "EUC-JP (Japanese)",
    "gbk": "GBK (Chinese)",
    "big5": "Big5 (Chinese)",
    "euc_kr": "EUC-KR (Korean)",
}
#: Bytes 0x80-0x9F that Western text in Windows-1252 hardly ever holds (the
#: rarer signs, and the five bytes it leaves undefined), while they lead most
#: Shift-JIS characters. Kept: euro, quotes, dashes, ellipsis, bullet, (TM), oe.
_RARE_CP1252 = frozenset(
    b"\x81\x82\x83\x84\x86\x87\x88\x89\x8a\x8b\x8d\x8e\x8f\x90\x98\x9a\x9b\x9d\x9e\x9f"
)
_NON_ASCII_RUN = re.compile(rb"[\x80-\xff]+")
#: Bytes of a large file looked at to judge an 8-bit encoding (a sample).
_JUDGED_BYTES = 4 * 2**20
SNIFF_BYTES = 8192
"""Bytes looked at to recognise binary files and wide encodings."""

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


def max_table_bytes() -> int:
    """The cap on a table's size after decompression, in bytes.

    :data:`MAX_TABLE_MB` megabytes unless the environment variable
    ``BUDGETDAG_MAX_TABLE_MB`` sets another number (for a server with the
    memory); a value that is no positive number is ignored with a warning.
    """
    megabytes = env_setting(
        MAX_TABLE_ENV, positive_number, MAX_TABLE_MB, "a positive number of megabytes"
    )
    return int(megabytes * 2**20)


def too_large(name: str, max_bytes: int, what: str) -> ValueError:
    """The refusal of a table over the cap, saying how to raise the cap."""
    return ValueError(
        f"{name} is larger than {max_bytes / 2**20:g} MB{what}, the cap on tables: "
        "use a sample of the rows, or raise the cap (Python: "
        "read_table(..., max_bytes=...); app and command line: set "
        f"{MAX_TABLE_ENV}=<megabytes>)."
    )


def decompress(data: bytes, name: str, max_bytes: int) -> bytes:
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
                    raise too_large(name, max_bytes, " once decompressed")
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(
            f"{name} looks gzip-compressed but is damaged: {exc}."
        ) from None
    return bytes(out)


def _nul_rates(data: bytes) -> np.ndarray:
    """Share of NUL bytes at each position modulo 4 in the first bytes."""
    sample = np.frombuffer(data[: SNIFF_BYTES - SNIFF_BYTES % 4], np.uint8)
    sample = sample[: len(sample) - len(sample) % 4].reshape(-1, 4)
    if len(sample) == 0:
        return np.zeros(4)
    return (sample == 0).mean(axis=0)


def wide_encoding(data: bytes) -> str | None:
    """UTF-32 or UTF-16 recognised by a byte-order mark or by where NULs fall.

    Text that is mostly ASCII, written in UTF-16 without a byte-order mark, has
    a NUL in every other byte (``a\\0b\\0``, little-endian); in UTF-32 three
    bytes of four are NUL. Returns a codec name (``"utf-32"``, ``"utf-16-le"``,
    ...) or ``None`` for a byte-oriented encoding.
    """
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if len(data) < 4 or b"\x00" not in data[:SNIFF_BYTES]:
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


def check_not_binary(data: bytes, name: str) -> None:
    """Refuse spreadsheets, documents, images, archives and other binary files."""
    for magic, what in _MAGIC.items():
        if data.startswith(magic):
            hint = (
                " Open it in your spreadsheet program and save it as CSV."
                if "Excel" in what
                else ""
            )
            raise ValueError(f"{name} is {what}, not a CSV text file.{hint}")
    if b"\x00" in data[:SNIFF_BYTES] and wide_encoding(data) is None:
        raise ValueError(
            f"{name} is a binary file, not a CSV text file: give a table saved as "
            "CSV (comma, semicolon, tab or pipe separated). If it is text, its "
            "encoding was not recognised: save it as UTF-8."
        )


def _decode_wide(data: bytes, wide: str, name: str) -> tuple[str, str]:
    label = wide.upper().replace("-LE", " little-endian").replace("-BE", " big-endian")
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


def decode_text(data: bytes, name: str = "The file") -> tuple[str, str]:
    """Decode bytes as text; return ``(text, encoding)``.

    UTF-32 and UTF-16 are recognised by their byte-order mark or, without one,
    by the pattern of NUL bytes (:func:`wide_encoding`); otherwise UTF-8 (with
    or without BOM) is tried first, then Windows-1252 and Latin-1 (which always
    succeeds). Raises ``ValueError`` naming the encoding when wide text does not
    decode or decodes to NUL characters, and when text that is not UTF-8 reads
    as gibberish in Windows-1252 or Latin-1 while an East Asian encoding
    (:data:`MULTIBYTE_ENCODINGS`) reads it whole.

    Examples
    --------
    >>> decode_text("café".encode("latin-1"))
    ('café', 'cp1252')
    >>> decode_text(b"\\xef\\xbb\\xbfa,b")
    ('a,b', 'utf-8')
    """
    wide = wide_encoding(data)
    if wide is not None:
        return _decode_wide(data, wide, name)
    for encoding in ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding != "utf-8-sig":
            _check_8bit_reading(data, encoding, name)
        return text, encoding.replace("-sig", "")
    raise AssertionError("latin-1 decodes any bytes")  # pragma: no cover


def _implausible_share(data: bytes) -> float:
    """The share of the non-ASCII bytes of ``data`` that Western text in
    Windows-1252 would hardly hold: rare or undefined signs of 0x80-0x9F,
    and runs of non-ASCII characters (three or more, or two that are not
    both letters: Western words hold an accented letter or two, "ção", while
    every character of East Asian text is two such bytes)."""
    total = doubtful = 0
    for match in _NON_ASCII_RUN.finditer(data):
        run = match.group()
        total += len(run)
        if len(run) >= 3:
            doubtful += len(run)
            continue
        text = run.decode("latin-1")
        letters = len(run) == 1 or all(c.isalpha() for c in text)
        doubtful += sum(b in _RARE_CP1252 or not letters for b in run)
    return doubtful / total if total else 0.0


def _multibyte_readings(data: bytes) -> list[str]:
    """The East Asian encodings ``data`` decodes in, each of its non-ASCII
    bytes pairing into an East Asian character (kana, hanzi, kanji, hangul)."""
    n_high = sum(len(m.group()) for m in _NON_ASCII_RUN.finditer(data))
    found = []
    for encoding in MULTIBYTE_ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        n_wide = sum(ord(c) >= 0x3000 for c in text)
        if n_high and 2 * n_wide >= 0.9 * n_high:
            found.append(encoding)
    return found


def _check_8bit_reading(data: bytes, encoding: str, name: str) -> None:
    """Refuse ``data`` (not UTF-8) when its reading in ``encoding``
    (Windows-1252 or Latin-1) is doubtful: mostly the bytes Western text
    hardly holds, while an East Asian encoding reads it whole (a Shift-JIS
    file would otherwise be read as gibberish, and the error would blame
    the columns)."""
    sample = data[:_JUDGED_BYTES]
    if len(data) > _JUDGED_BYTES:  # whole lines: a character is not cut
        sample = sample[: sample.rfind(b"\n") + 1] or sample
    if _implausible_share(sample) < 0.5:
        return
    readings = _multibyte_readings(sample)
    if not readings and encoding == "cp1252":
        return  # some odd signs, but nothing else reads it better
    label = {"cp1252": "Windows-1252", "latin-1": "Latin-1"}[encoding]
    names = [MULTIBYTE_ENCODINGS[e] for e in readings]
    also = (
        f"; it reads whole as {', '.join(names[:-1])} or {names[-1]}"
        if len(names) > 1
        else f"; it reads whole as {names[0]}"
        if names
        else "; in Latin-1 its bytes 0x80-0x9F are control characters"
    )
    raise ValueError(
        f"{name} is not UTF-8, and its encoding cannot be told with "
        f"confidence: read as {label} it would be gibberish (most of its "
        f"non-ASCII characters are rare signs, or runs no Western word holds)"
        f"{also}. Save it as UTF-8 (in Excel: CSV UTF-8) and load it again."
    )
