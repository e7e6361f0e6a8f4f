"""Bounded reading of what users hand over (files, text and JSON), and
whole-or-nothing writing of what the library, the CLI and the app write.

Everything here does work proportional to a cap fixed before reading: a file is
read only if it is a regular file (a FIFO would block, ``/dev/zero`` never
ends), and at most its cap; JSON nesting is measured by a scan of the text
before :mod:`json` parses it (its recursive parser would otherwise raise
``RecursionError`` deep inside, or the consumers of the parsed tree would).

Every environment variable is read by :func:`env_setting`, which warns and
falls back to the default on a value it cannot use. Every file is written by
:func:`atomic_write`: into a temporary file of the
same folder, flushed to disk, then renamed over the target, so that a write
cut short (a full disk, an error, ``kill -9``) leaves the older file whole.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import secrets
import stat
import warnings
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar

import numpy as np

#: A JSON string literal (with escapes), removed before counting brackets.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
#: Byte value -> +1 for an opening bracket, -1 for a closing one, else 0.
_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[[ord("["), ord("{")]] = 1
_BRACKET_STEP[[ord("]"), ord("}")]] = -1


#: Characters of a user's value quoted in a message at most: a cell, a label
#: or a name of a million characters is cut, not copied into the error.
MAX_QUOTED = 60


def short_repr(value: object, limit: int = MAX_QUOTED) -> str:
    """``repr(value)``, cut to ``limit`` characters (user values can be huge).

    The one way a message quotes what a user handed over: a cell, a label, a
    name or a value of any size gives a line of bounded length.
    """
    if isinstance(value, np.generic):  # 3, not np.int64(3)
        value = value.item()
    if isinstance(value, int) and not isinstance(value, bool):
        digits = int(value.bit_length() * 0.30103) + 1
        if digits > limit:  # repr of a huge int is slow, and limited in Python
            return f"an integer of about {digits} digits"
    if isinstance(value, str) and len(value) > 4 * limit:
        value = value[: 4 * limit]  # repr of the cut only: linear in ``limit``
    try:
        text = repr(value)
    except Exception:  # e.g. a Fraction of 10**5000: Python refuses its digits
        return f"a {type(value).__name__} too long to show"
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike, mode: str = "wb", *, encoding: str | None = None
) -> Iterator[IO[Any]]:
    """Open ``path`` for writing, whole or not at all.

    The file object writes a temporary file in the folder of ``path``; when
    the ``with`` block ends without an error, it is flushed, synced to disk
    and renamed over ``path`` (:func:`os.replace`: readers see the older file
    or the new one, never part of one). On an error the temporary file is
    removed and ``path`` is untouched. A symbolic link is written through
    (the file it names is replaced); an existing file keeps its permissions.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    mode : {"wb", "w"}
        Binary or text (text: ``encoding``, default UTF-8; line ends as
        written, ``newline=""``).
    encoding : str, optional
        The text mode's encoding.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from budgetdag_core.persist import atomic_write
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "notes.txt"
    ...     with atomic_write(path, "w") as fh:
    ...         _ = fh.write("kept whole")
    ...     try:
    ...         with atomic_write(path, "w") as fh:
    ...             _ = fh.write("cut short")
    ...             raise RuntimeError("the disk is full")
    ...     except RuntimeError:
    ...         pass
    ...     print(path.read_text(), sorted(p.name for p in Path(folder).iterdir()))
    kept whole ['notes.txt']
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes with mode 'w' or 'wb', not {mode!r}.")
    target = os.path.realpath(path)  # through a link, as open(path, "w") would
    folder, name = os.path.split(target)
    tmp = os.path.join(folder, f".{name}.{secrets.token_hex(6)}.tmp")
    # O_EXCL: never an existing file (nor a link planted under that name);
    # 0o666 less the umask, the permissions open() would give a new file.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        text = {"encoding": encoding or "utf-8", "newline": ""} if mode == "w" else {}
        with os.fdopen(fd, mode, **text) as fh:
            fd = -1  # the file object owns it now
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    """Make a rename in ``folder`` durable (best effort: not every system
    can open a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


T = TypeVar("T")


def env_setting(
    variable: str, parse: Callable[[str], T], default: T, expected: str
) -> T:
    """The setting in the environment ``variable``, read by ``parse``.

    Unset or blank: ``default``. A value ``parse`` refuses (``ValueError``)
    gives ``default`` too, with a warning for the server's log naming the
    variable, the value and what it should be: a setting the operator meant
    is never dropped without a word, and a typo never stops the program.
    Every variable of the library and the app is read here.

    Parameters
    ----------
    variable : str
        The variable's name, e.g. ``"BUDGETDAG_STORE_MAX_MB"``.
    parse : callable
        Text (stripped, not blank) -> the setting; raises ``ValueError``
        when the text is no such setting (:func:`positive_number`,
        :func:`positive_int`, :func:`flag`, ``str``).
    default : object
        The setting when the variable is unset, blank or refused.
    expected : str
        What the value should be, for the warning ("a positive number").

    Examples
    --------
    >>> import os, warnings
    >>> from budgetdag_core.validation import env_setting, positive_number
    >>> os.environ["EXAMPLE_CAP_MB"] = "-5"
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     env_setting("EXAMPLE_CAP_MB", positive_number, 200.0, "a number > 0")
    200.0
    >>> print(seen[0].message)
    EXAMPLE_CAP_MB='-5' is not a number > 0; using 200.0 instead.
    >>> del os.environ["EXAMPLE_CAP_MB"]
    """
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        return parse(text)
    except ValueError:
        warnings.warn(
            f"{variable}={short_repr(text)} is not {expected}; using {default} "
            "instead.",
            stacklevel=3,
        )
        return default


def positive_number(text: str) -> float:
    """``text`` as a finite number above 0, or ``ValueError`` (for
    :func:`env_setting`)."""
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(text)
    return value


def positive_int(text: str) -> int:
    """``text`` as an integer of at least 1, or ``ValueError``."""
    if not text.isdigit() or int(text) < 1:
        raise ValueError(text)
    return int(text)


def flag(text: str) -> bool:
    """``"1"``: True, ``"0"``: False; anything else ``ValueError``."""
    if text not in ("0", "1"):
        raise ValueError(text)
    return text == "1"
