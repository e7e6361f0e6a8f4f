"""Bounded reading of what users hand over: files, text and JSON.

Everything here does work proportional to a cap fixed before reading: a file is
read only if it is a regular file (a FIFO would block, ``/dev/zero`` never
ends), and at most its cap; JSON nesting is measured by a scan of the text
before :mod:`json` parses it (its recursive parser would otherwise raise
``RecursionError`` deep inside, or the consumers of the parsed tree would).
"""

from __future__ import annotations

import os
import re
import stat

import numpy as np

#: A JSON string literal (with escapes), removed before counting brackets.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
#: Byte value -> +1 for an opening bracket, -1 for a closing one, else 0.
_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[[ord("["), ord("{")]] = 1
_BRACKET_STEP[[ord("]"), ord("}")]] = -1


def _check_mode(mode: int, shown: str, what: str) -> None:
    """Refuse anything but a regular file, naming ``what`` and the path."""
    if stat.S_ISDIR(mode):
        raise ValueError(f"The {what} {shown} is a directory, not a file.")
    if not stat.S_ISREG(mode):
        raise ValueError(
            f"The {what} {shown} is not a regular file (a device, FIFO or "
            "socket): give the path of a file."
        )


def check_regular_file(path: str | os.PathLike, what: str) -> None:
    """Raise ``ValueError`` unless ``path`` names an existing, readable regular
    file (for readers that open the path themselves, e.g. ``pandas.read_csv``;
    :func:`read_regular_file` checks the file it reads instead)."""
    shown = repr(str(path))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ValueError(f"The {what} {shown} does not exist.") from None
    except OSError as exc:
        raise ValueError(
            f"The {what} {shown} cannot be read: {exc.strerror or exc}."
        ) from None
    _check_mode(mode, shown, what)
    if not os.access(path, os.R_OK):
        raise ValueError(f"The {what} {shown} cannot be read: permission denied.")


def check_output_file(path: str | os.PathLike, what: str) -> None:
    """Raise ``ValueError`` unless a file can be written at ``path``: its
    folder exists and is writable, and the path is not a directory, device or
    FIFO (``/dev/full`` would fail only when written, after the work)."""
    shown = repr(str(path))
    if os.path.lexists(path):
        try:
            _check_mode(os.stat(path).st_mode, shown, what)
        except FileNotFoundError:  # a dangling link: written as a new file
            pass
        if not os.access(path, os.W_OK):
            raise ValueError(
                f"The {what} {shown} cannot be written: permission denied."
            )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"The folder of the {what} {shown} does not exist.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"The folder of the {what} {shown} is not writable.")


def read_regular_file(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises ``ValueError`` naming ``what`` and the path when the path does not
    exist, is a directory, a FIFO, a device or a socket, cannot be read, or
    holds more than ``limit`` bytes. The file is opened without blocking (a
    FIFO opens at once) and checked on the open descriptor, so it cannot be
    swapped between the check and the read.
    """
    shown = repr(str(path))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise ValueError(f"The {what} {shown} does not exist.") from None
    except IsADirectoryError:
        raise ValueError(f"The {what} {shown} is a directory, not a file.") from None
    except OSError as exc:
        raise ValueError(
            f"The {what} {shown} cannot be opened: {exc.strerror or exc}."
        ) from None
    try:
        _check_mode(os.fstat(fd).st_mode, shown, what)
        data = _read_at_most(fd, limit + 1)
    except OSError as exc:
        raise ValueError(
            f"The {what} {shown} cannot be read: {exc.strerror or exc}."
        ) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(
            f"The {what} {shown} is larger than the {limit:,} bytes accepted."
        )
    return data


def _read_at_most(fd: int, n: int) -> bytes:
    """Up to ``n`` bytes of the open file ``fd`` (fewer at its end)."""
    chunks, left = [], n
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def decode_utf8(data: bytes, what: str) -> str:
    """``data`` as UTF-8 text without its byte-order mark, or a ``ValueError``."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"The {what} is not UTF-8 text (byte {exc.start}: "
            f"{data[exc.start : exc.start + 1]!r})."
        ) from None


def json_depth(text: str | bytes) -> int:
    """The deepest nesting of arrays and objects in JSON ``text``, by a scan
    that does not parse it (linear time, no recursion).

    Brackets inside string literals are not counted. On malformed text the
    result is an upper bound of what a parser could reach before failing.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    skeleton = _JSON_STRING.sub(b"", data)
    if not skeleton:
        return 0
    steps = _BRACKET_STEP[np.frombuffer(skeleton, dtype=np.uint8)]
    steps = steps[steps != 0].astype(np.int64)  # the brackets only: few
    return int(np.cumsum(steps).max(initial=0))
