"""Keep a session's work on the server across browser reloads (no Streamlit).

A session is named by a random token (``secrets.token_urlsafe``) that the app
puts in the URL (``?session=...``). Its snapshot (the data in use, an uploaded
table with its cleaning steps, the sensor table, the last model with its
results, the last traced curve and the form's settings) is one compressed
pickle file in
:func:`store_dir`, whose name is derived from the token only after
:func:`valid_token` checked it against a strict pattern: no user text reaches
a path, and only files this module wrote are ever read (the folder is private
to the server's user); a file whose SHA-256 does not match (cut short,
altered) is never unpickled. A snapshot larger than :func:`max_bytes` is not
kept, nor is the older one (:func:`write`): :mod:`ui.session` then keeps a
slim one, or one without the model, that says what was left out;
snapshots untouched for :data:`EXPIRY_HOURS` are deleted, as are the oldest
ones past :data:`MAX_TOTAL_BYTES` in all. A bundled demo is kept as its name
(``budgetdag_core.Dataset`` pickles one with a ``recipe`` so), not as rows.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import pickle
import re
import secrets
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from budgetdag_core.persist import TRAINING_ONLY_ATTRS, atomic_write
from budgetdag_core.validation import env_setting, positive_number

TOKEN_BYTES = 24  # secrets.token_urlsafe(24): 32 characters, 192 random bits
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{32}")
EXPIRY_HOURS = 24
MAX_BYTES = 200 * 2**20
"""Largest snapshot kept (bytes, compressed): data, upload and model together
(``BUDGETDAG_STORE_MAX_MB`` sets another, see :func:`max_bytes`)."""
MAX_TOTAL_BYTES = 2 * 2**30
"""All snapshots of the server together (bytes): the oldest go first."""
FORMAT = 2  # 2: zlib-compressed, demos by name
COMPRESSION = 1  # zlib's fastest level: most of the gain for little time
ENV_DIR = "BUDGETDAG_STORE_DIR"  # where snapshots go (default: a temp folder)
ENV_MAX_MB = "BUDGETDAG_STORE_MAX_MB"  # the largest snapshot kept, in MB
MAGIC = b"BDAGSESSION1\n"  # then the SHA-256 of the compressed pickle


def new_token() -> str:
    """A fresh random session token."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def valid_token(text: Any) -> bool:
    """Whether ``text`` has the exact shape of a token from :func:`new_token`."""
    return isinstance(text, str) and TOKEN_PATTERN.fullmatch(text) is not None


def store_dir() -> Path:
    """The snapshot folder (created private to this user)."""
    default = Path(tempfile.gettempdir()) / "budgetdag-sessions"
    folder = Path(env_setting(ENV_DIR, str, str(default), "a folder"))
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def _path_name(token: str) -> str:
    if not valid_token(token):
        raise ValueError("Not a session token: expected 32 URL-safe characters.")
    return f"{token}.pkl"


def _path(token: str) -> Path:
    return store_dir() / _path_name(token)


def max_bytes() -> int:
    """The largest snapshot kept: ``BUDGETDAG_STORE_MAX_MB`` (megabytes, a
    positive number) when set, else :data:`MAX_BYTES` (with a warning for the
    server's log when the variable holds something else)."""
    megabytes = env_setting(
        ENV_MAX_MB, positive_number, MAX_BYTES / 2**20, "a positive number of MB"
    )
    return int(megabytes * 2**20)


def megabytes(n_bytes: float) -> str:
    """A size in words: ``"263 MB"``, ``"1.9 MB"``, ``"0.05 MB"``."""
    mb = n_bytes / 2**20
    return f"{mb:.0f} MB" if mb >= 10 else f"{mb:.2g} MB"


#: Attributes that mark a bank (a classifier's or regressor's, per state or
#: any-subset): what a slim snapshot slims.
_BANK_MARKS = ("oof_proba_", "oof_pred_", "sparse_growth_")


class _SlimPickler(pickle.Pickler):
    """Pickles banks without what only learns new policies
    (``TRAINING_ONLY_ATTRS``: out-of-fold outputs, a grown DAG's growth and
    fold bookkeeping), and a many-sensor model without the other
    strategies' banks (``strategy_banks_``): what
    :func:`budgetdag_core.persist.policy_bundle` leaves out of a slim save.
    A slim bank still runs every policy on it. A bank shared by several
    models stays one object."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type):
            return NotImplemented
        state = getattr(obj, "__dict__", None)
        if not isinstance(state, dict):
            return NotImplemented
        if any(mark in state for mark in _BANK_MARKS):
            kept = {k: v for k, v in state.items() if k not in TRAINING_ONLY_ATTRS}
        elif state.get("strategy_banks_") is not None:
            # The candidates share the kept bank's fold models, but each
            # keeps its own growth: they only learn policies at other scales.
            kept = {**state, "strategy_banks_": None}
        else:
            return NotImplemented
        return (slim_copy, (type(obj), kept))


def slim_copy(cls: type, attributes: dict[str, Any]) -> Any:
    """An object of ``cls`` with ``attributes`` (how a slim bank unpickles)."""
    obj = cls.__new__(cls)
    vars(obj).update(attributes)
    return obj


def encode(snapshot: dict[str, Any], *, slim: bool = False) -> bytes:
    """The file :func:`write` keeps for ``snapshot``: a header, the SHA-256
    of the rest, then the compressed pickle. ``slim``: banks without their
    training-only attributes (see :class:`_SlimPickler`)."""
    buffer = io.BytesIO()
    pickler = (
        _SlimPickler(buffer, protocol=5) if slim else pickle.Pickler(buffer, protocol=5)
    )
    pickler.dump({"format": FORMAT, **snapshot})
    data = zlib.compress(buffer.getvalue(), COMPRESSION)
    return MAGIC + hashlib.sha256(data).digest() + data


def over_limit(data: bytes) -> str | None:
    """Why ``data`` (from :func:`encode`) is too big to keep, or None."""
    limit = max_bytes()
    if len(data) <= limit:
        return None
    return (
        f"{megabytes(len(data))}, over the {megabytes(limit)} this server keeps "
        "per session"
    )


def save(token: str, snapshot: dict[str, Any], *, slim: bool = False) -> str | None:
    """Write the session's snapshot; None, or why it was not kept.

    ``snapshot`` holds the app's own objects only (it is pickled).
    """
    return write(token, encode(snapshot, slim=slim))


def write(token: str, data: bytes) -> str | None:
    """Keep ``data`` (from :func:`encode`) as the session's snapshot; None,
    or why it was not kept.

    When it is not kept, the session's older snapshot goes too: a reload
    must never bring back work older than what the tab showed last.
    """
    name = _path_name(token)
    problem = over_limit(data)
    if problem is not None:
        problem = f"this session's data and model take {problem}"
    else:
        try:
            _write(store_dir() / name, data)
            prune()
        except OSError as exc:
            problem = f"the server could not write it ({disk_problem(exc)})"
    if problem is None:
        _OUTDATED.pop(token, None)
        return None
    try:
        (store_dir() / name).unlink(missing_ok=True)
    except OSError:  # e.g. a read-only disk: remember not to restore it
        _OUTDATED[token] = problem
    return problem


def disk_problem(exc: OSError) -> str:
    """An ``OSError`` of the store in words ("the disk is full", ...)."""
    words = {
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is used up",
        errno.EROFS: "the disk is read-only",
        errno.EACCES: "no permission to write there",
        errno.EPERM: "no permission to write there",
    }
    return words.get(exc.errno or 0, exc.strerror or type(exc).__name__)


# Sessions whose last snapshot could be neither written nor deleted (a
# read-only disk): the file there is older than their work (this process).
_OUTDATED: dict[str, str] = {}


def _write(path: Path, data: bytes) -> None:
    # Readers never see half a file; a write cut short keeps the older one.
    with atomic_write(path) as fh:
        fh.write(data)


def load(token: str) -> dict[str, Any] | None:
    """The session's snapshot, or None (unknown, expired or unreadable token)."""
    return read(token)[0]


def read(token: str) -> tuple[dict[str, Any] | None, str | None]:
    """The session's snapshot, or None and why it cannot be restored.

    The reason is None for a token without a snapshot (unknown, expired);
    else it says what is wrong: a damaged file (deleted then), one that
    could not be read, or one older than the session's last work.
    """
    if not valid_token(token):
        return None, None
    if token in _OUTDATED:
        return None, (
            "the work kept for it is older than what this session showed last: "
            f"its last change was not kept ({_OUTDATED[token]})"
        )
    try:
        path = _path(token)
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"the server could not read it ({disk_problem(exc)})"
    if age > EXPIRY_HOURS * 3600:
        _unlink(path)
        return None, None
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"the server could not read it ({disk_problem(exc)})"
    snapshot = decode(data)
    if snapshot is None:
        _unlink(path)
        return None, "the file that kept it is damaged (cut short or altered)"
    return snapshot, None


def decode(data: bytes) -> dict[str, Any] | None:
    """The snapshot in ``data`` (:func:`encode`), or None when damaged."""
    if data.startswith(MAGIC):
        digest, data = data[len(MAGIC) : len(MAGIC) + 32], data[len(MAGIC) + 32 :]
        if hashlib.sha256(data).digest() != digest:
            return None  # cut short or altered: never unpickled
    try:
        # Written by save() under a name only a valid token maps to.
        snapshot = pickle.loads(zlib.decompress(data))
    except Exception:  # damaged, or written by another version of the app
        return None
    if not isinstance(snapshot, dict) or snapshot.get("format") != FORMAT:
        return None
    return snapshot


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:  # a read-only disk: nothing more to do
        pass


def rename(old: str, new: str) -> None:
    """Move the snapshot of token ``old`` to token ``new`` (if it exists;
    on a disk that refuses, the next save under ``new`` says so)."""
    try:
        os.replace(_path(old), _path(new))
    except OSError:
        pass
    if old in _OUTDATED:
        _OUTDATED[new] = _OUTDATED.pop(old)


def copy(old: str, new: str) -> None:
    """Copy the snapshot of token ``old`` to token ``new`` (if it exists)."""
    try:
        _write(_path(new), _path(old).read_bytes())
    except OSError:
        pass
    if old in _OUTDATED:
        _OUTDATED[new] = _OUTDATED[old]


def drop(token: str) -> None:
    """Delete the session's snapshot (e.g. "Start afresh")."""
    if valid_token(token):
        _unlink(_path(token))


def prune(now: float | None = None) -> None:
    """Delete expired snapshots, then the oldest ones past the total cap."""
    now = time.time() if now is None else now
    files = []
    for path in store_dir().glob("*.pkl"):
        try:
            info = path.stat()
        except FileNotFoundError:
            continue
        if now - info.st_mtime > EXPIRY_HOURS * 3600:
            path.unlink(missing_ok=True)
        else:
            files.append((info.st_mtime, info.st_size, path))
    total = sum(size for _, size, _ in files)
    for _, size, path in sorted(files):
        if total <= MAX_TOTAL_BYTES:
            break
        path.unlink(missing_ok=True)
        total -= size
