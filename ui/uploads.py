"""Uploaded files on the server: a size cap per kind, checked before reading.

Streamlit's ``max_upload_size`` of a file uploader is enforced by the browser
only: a client can send more. The server enforces ``server.maxUploadSize``
(``.streamlit/config.toml``) on every upload, which is :data:`SERVER_MAX_MB`,
the largest cap of any kind; :func:`read_upload` checks each kind's own cap
from the upload's size before its bytes are used. No Streamlit here: an
upload is anything with ``name``, ``size`` and ``getvalue()``.

An uploaded sensor spec is text, never a file name: :func:`spec_from_upload`
decodes it, checks that it is one JSON object of a sensor spec's depth, and
only then hands it to ``SensorSpec.from_json``.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from budgetdag_core import SensorSpec

from .tabular import MAX_UPLOAD_MB

MB = 2**20
CSV_MAX_MB = MAX_UPLOAD_MB
"""A CSV upload (compressed size; the table is capped again once inflated)."""
SPEC_MAX_MB = 1
"""A sensor spec (JSON): 1 MB holds tens of thousands of columns."""
MODEL_MAX_MB = 100
"""A policy file (.skops or .pkl): the .skops files the app writes for the
demos fit, the default banks' with room to spare, a random-forest bank's up
to letter's (``benchmarks/bench_model_sizes.py``). Pickles are several times
larger; bigger files load in Python (``load_policy_skops``)."""
SERVER_MAX_MB = max(CSV_MAX_MB, SPEC_MAX_MB, MODEL_MAX_MB)
"""``server.maxUploadSize`` in ``.streamlit/config.toml``: the largest cap."""

SPEC_MAX_DEPTH = 8
"""Nesting a sensor spec never needs: {"sensors": [{"columns": [...]}]} is 4."""


class Upload(Protocol):
    name: str
    size: int

    def getvalue(self) -> bytes: ...


def read_upload(file: Upload, max_mb: float, what: str) -> bytes:
    """The upload's bytes, or ``ValueError`` when it is over ``max_mb``.

    The size is checked first, so an oversized file is refused whatever the
    browser claimed, before anything reads or parses it.
    """
    size = int(file.size)
    if size > max_mb * MB:
        raise ValueError(
            f"{file.name!r} is {size / MB:.1f} MB, over the {max_mb:g} MB limit on "
            f"{what} (checked on the server)."
        )
    return file.getvalue()


def _depth(value: Any) -> int:
    """The nesting depth of parsed JSON (walked without recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            todo.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            todo.extend((v, level + 1) for v in item)
    return deepest


def spec_text(data: bytes, name: str) -> str:
    """The JSON text of an uploaded spec, checked to be one object of a spec's
    shape; ``ValueError`` naming what is wrong otherwise."""
    try:
        text = data.decode("utf-8-sig")  # Windows editors write a byte-order mark
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{name} is not UTF-8 text (byte {exc.start}): save the spec as UTF-8 JSON."
        ) from None
    body = text.strip()
    if not body:
        raise ValueError(f"{name} is empty.")
    try:
        parsed = json.loads(body)
    except RecursionError:
        parsed = None  # nested deeper than Python parses: refused below
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{name} is not valid JSON: {exc.msg} (line {exc.lineno}, column "
            f"{exc.colno})."
        ) from None
    if parsed is None or _depth(parsed) > SPEC_MAX_DEPTH:
        raise ValueError(
            f"{name} is nested deeper than a sensor spec ever is (more than "
            f"{SPEC_MAX_DEPTH} levels of lists and objects)."
        )
    if not isinstance(parsed, dict):
        kind = {list: "a list", str: "a string"}.get(type(parsed), "a single value")
        raise ValueError(
            f"{name} holds {kind}, not a sensor spec: a spec is one JSON object, "
            '{"sensors": [{"name": ..., "columns": [...], "cost": ...}, ...]}.'
        )
    return body


def spec_from_upload(file: Upload) -> SensorSpec:
    """The sensor spec of an uploaded JSON file; ``ValueError`` saying what is
    wrong with it. The text goes to the library as text only: it starts with
    ``{`` (checked), so ``SensorSpec.from_json`` never reads it as a path."""
    name = "the file"
    text = spec_text(read_upload(file, SPEC_MAX_MB, "sensor specs"), name)
    try:
        return SensorSpec.from_json(text)
    except (TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"an entry has the wrong type ({exc}).") from None
