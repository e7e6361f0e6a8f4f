"""Keep a session's work on the server across browser reloads (no Streamlit).

A session is named by a random token (``secrets.token_urlsafe``) that the app
puts in the URL (``?session=...``). Its snapshot (the data in use, an uploaded
table with its cleaning steps, the sensor table, the last model with its
results, the last traced curve and the form's settings) is one compressed
pickle file in
:func:`store_dir`, whose name is derived from the token only after
:func:`valid_token` checked it against a strict pattern: no user text reaches
a path, and only files this module wrote are ever read (the folder is private
to the server's user). A snapshot larger than :data:`MAX_BYTES` is not kept;
snapshots untouched for :data:`EXPIRY_HOURS` are deleted, as are the oldest
ones past :data:`MAX_TOTAL_BYTES` in all. A bundled demo is kept as its name
(``budgetdag_core.Dataset`` pickles one with a ``recipe`` so), not as rows.
"""

from __future__ import annotations

import os
import pickle
import re
import secrets
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

TOKEN_BYTES = 24  # secrets.token_urlsafe(24): 32 characters, 192 random bits
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{32}")
EXPIRY_HOURS = 24
MAX_BYTES = 200 * 2**20
"""Largest snapshot kept (bytes, compressed): data, upload and model together."""
MAX_TOTAL_BYTES = 2 * 2**30
"""All snapshots of the server together (bytes): the oldest go first."""
FORMAT = 2  # 2: zlib-compressed, demos by name
COMPRESSION = 1  # zlib's fastest level: most of the gain for little time
ENV_DIR = "BUDGETDAG_STORE_DIR"  # where snapshots go (default: a temp folder)


def new_token() -> str:
    """A fresh random session token."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def valid_token(text: Any) -> bool:
    """Whether ``text`` has the exact shape of a token from :func:`new_token`."""
    return isinstance(text, str) and TOKEN_PATTERN.fullmatch(text) is not None


def store_dir() -> Path:
    """The snapshot folder (created private to this user)."""
    folder = Path(
        os.environ.get(ENV_DIR) or Path(tempfile.gettempdir()) / "budgetdag-sessions"
    )
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def _path(token: str) -> Path:
    if not valid_token(token):
        raise ValueError("Not a session token: expected 32 URL-safe characters.")
    return store_dir() / f"{token}.pkl"


def save(token: str, snapshot: dict[str, Any]) -> str | None:
    """Write the session's snapshot; None, or why it was not kept.

    ``snapshot`` holds the app's own objects only (it is pickled).
    """
    data = zlib.compress(
        pickle.dumps({"format": FORMAT, **snapshot}, protocol=5), COMPRESSION
    )
    if len(data) > MAX_BYTES:
        return (
            f"this session's data and model take {len(data) / 2**20:.0f} MB, over "
            f"the {MAX_BYTES / 2**20:.0f} MB kept per session"
        )
    _write(_path(token), data)
    prune()
    return None


def _write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)  # readers never see half a file
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(token: str) -> dict[str, Any] | None:
    """The session's snapshot, or None (unknown, expired or unreadable token)."""
    if not valid_token(token):
        return None
    path = _path(token)
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return None
    if age > EXPIRY_HOURS * 3600:
        path.unlink(missing_ok=True)
        return None
    try:
        # Written by save() under a name only a valid token maps to.
        snapshot = pickle.loads(zlib.decompress(path.read_bytes()))
    except Exception:  # written by another version of the app: start afresh
        return None
    if not isinstance(snapshot, dict) or snapshot.get("format") != FORMAT:
        return None
    return snapshot


def rename(old: str, new: str) -> None:
    """Move the snapshot of token ``old`` to token ``new`` (if it exists)."""
    try:
        os.replace(_path(old), _path(new))
    except FileNotFoundError:
        pass


def copy(old: str, new: str) -> None:
    """Copy the snapshot of token ``old`` to token ``new`` (if it exists)."""
    try:
        data = _path(old).read_bytes()
    except FileNotFoundError:
        return
    _write(_path(new), data)


def drop(token: str) -> None:
    """Delete the session's snapshot (e.g. "Start afresh")."""
    if valid_token(token):
        _path(token).unlink(missing_ok=True)


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
