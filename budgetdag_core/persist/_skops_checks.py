"""Bounded checks of a skops file before skops reads it.

A skops file is a zip archive: ``schema.json`` (the object tree) and one
``.npy`` member per array. skops itself trusts the archive's sizes and walks
the schema as a graph: objects are identified by ``__id__``, and a later entry
with a known id is taken for the first one whatever it holds. A 20 KB file
whose entries reuse ids down a 40-level chain makes skops's type audit walk
2^40 paths; a member of a few hundred KB can inflate to gigabytes.
:func:`check_skops_archive` reads the zip directory and the array headers
(nothing else is inflated), then the schema, with caps on every size; it
refuses a file whose repeated ids do not repeat the same content (skops writes
a shared object in full each time it occurs), so that the schema's size bounds
all the work skops and the integrity checks do afterwards.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from typing import Any

import numpy as np
from numpy.lib import format as npy_format

from .._bounded_io import json_depth, short_repr

#: Most members an archive may have (a random-forest bank on landsat: 7 800).
MAX_MEMBERS = 100_000
#: Largest member, uncompressed (the schema of that forest: 38 MB).
MAX_MEMBER_BYTES = 128 * 2**20
#: Largest total uncompressed size (that forest: 200 MB), the default of
#: ``loads_policy_skops(max_unpacked_bytes=...)``.
MAX_UNPACKED_BYTES = 512 * 2**20
#: Members of more than ``_RATIO_FROM`` bytes may inflate at most this much;
#: policy files reach 50 (their schema), a zip bomb about 1 000.
MAX_COMPRESSION_RATIO = 200
_RATIO_FROM = 2**20
#: Deepest nesting of the schema (policy files: 24).
MAX_SCHEMA_DEPTH = 100
#: Most JSON values in the schema (a boosting bank on landsat: 530 000).
MAX_SCHEMA_VALUES = 5_000_000

_SCHEMA = "schema.json"
_COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


class _Refused(ValueError):
    """A skops file refused by a cap or a check; ``what`` says why."""

    def __init__(self, what: str) -> None:
        super().__init__(f"This skops file is refused: {what}.")
        self.what = what


def _refuse(what: str) -> ValueError:
    return _Refused(what)


def check_skops_archive(
    data: bytes, max_unpacked_bytes: int = MAX_UNPACKED_BYTES
) -> None:
    """Raise ``ValueError`` saying what is wrong unless ``data`` is a skops
    archive within the caps above, whose schema skops can walk in time
    proportional to its size.

    Reads the zip directory, the header of each array and the schema; no
    array is inflated.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except Exception as exc:  # BadZipFile, a truncated directory, ...
        raise ValueError(
            f"This is not a skops file (not a zip archive: {exc})."
        ) from None
    with archive:
        infos = archive.infolist()
        _check_directory(infos, max_unpacked_bytes)
        for info in infos:
            if info.filename != _SCHEMA:
                _check_array_header(archive, info)
        schema = _read_member(archive, archive.getinfo(_SCHEMA))
    check_schema(schema)


def check_loadable_size(data: bytes) -> None:
    """Raise ``ValueError`` where a skops archive just written is larger than
    :func:`check_skops_archive` lets a default load read (members, a
    member's or all members' unpacked bytes): from the zip directory only,
    so a model too big for the format is refused when it is saved rather
    than when it is loaded."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        try:
            _check_directory(archive.infolist(), MAX_UNPACKED_BYTES)
        except _Refused as exc:
            raise ValueError(
                f"This model is too large for a skops file that loads ({exc.what}). "
                "Save it with save_policy (a pickle: load it from sources you "
                "trust only), or fit the bank with one model per fold "
                "(bank_kind='masked')."
            ) from None


def _check_directory(infos: list[zipfile.ZipInfo], max_unpacked_bytes: int) -> None:
    """Member count, names, compression and sizes, from the zip directory."""
    if len(infos) > MAX_MEMBERS:
        raise _refuse(f"{len(infos):,} members (at most {MAX_MEMBERS:,})")
    names = [info.filename for info in infos]
    if len(set(names)) != len(names):
        raise _refuse("two members have the same name")
    if _SCHEMA not in names:
        raise ValueError("This is not a skops file (no schema.json in the archive).")
    total = 0
    for info in infos:
        name = info.filename
        if name != _SCHEMA and not name.endswith(".npy"):
            raise _refuse(f"unexpected member {name[:80]!r} (arrays are .npy)")
        if info.flag_bits & 0x1:
            raise _refuse(f"member {short_repr(name)} is encrypted")
        if info.compress_type not in _COMPRESSIONS:
            raise _refuse(
                f"member {short_repr(name)} uses compression {info.compress_type}"
            )
        size = info.file_size
        if size > MAX_MEMBER_BYTES:
            raise _refuse(
                f"member {short_repr(name)} unpacks to {size:,} bytes (at most "
                f"{MAX_MEMBER_BYTES:,})"
            )
        if size > _RATIO_FROM and size > MAX_COMPRESSION_RATIO * info.compress_size:
            ratio = size / max(info.compress_size, 1)
            raise _refuse(
                f"member {short_repr(name)} unpacks {ratio:.0f} times its stored size "
                f"(at most {MAX_COMPRESSION_RATIO}: a zip bomb?)"
            )
        total += size
    if total > max_unpacked_bytes:
        raise _refuse(
            f"its members unpack to {total:,} bytes (at most {max_unpacked_bytes:,})"
        )


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes: no more than its directory entry declares (zipfile
    stops there, and a CRC mismatch is an error)."""
    try:
        return archive.read(info)
    except Exception as exc:  # zlib.error, BadZipFile (CRC), EOFError, ...
        raise ValueError(
            f"This skops file is damaged (member {short_repr(info.filename)}: {exc})."
        ) from None


def _check_array_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """The ``.npy`` header of a member: a plain dtype, and a shape whose bytes
    fit in the member (numpy allocates what the header claims before reading)."""
    name = info.filename
    try:
        with archive.open(info) as stream:
            version = npy_format.read_magic(stream)
            if version == (1, 0):
                shape, _, dtype = npy_format.read_array_header_1_0(stream)
            elif version in ((2, 0), (3, 0)):
                shape, _, dtype = npy_format.read_array_header_2_0(stream)
            else:
                raise ValueError(f"unknown .npy version {version}")
            header_bytes = stream.tell()
    except Exception as exc:  # zlib.error, a malformed header, ...
        raise ValueError(
            f"This skops file is damaged (array {short_repr(name)}: {exc})."
        ) from None
    if dtype.hasobject:
        raise _refuse(f"array {short_repr(name)} holds Python objects")
    n_bytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if header_bytes + n_bytes != info.file_size:
        raise _refuse(
            f"array {short_repr(name)} claims shape {shape} ({n_bytes:,} bytes) in a "
            f"member of {info.file_size:,} bytes"
        )


def check_schema(schema: bytes) -> None:
    """The schema's nesting and size, and shared ids that repeat their content.

    skops takes every later entry with a known ``__id__`` for the first one
    (how it writes a shared object: in full, each time, with fresh ids for the
    temporary lists inside). Requiring every entry of an id to have the same
    content but for ids makes the schema as large as the object graph skops
    walks: no entry can stand for a larger subtree, nor contain itself (a
    cycle would need a structure that contains a copy of itself). Back
    references (skops's ``CachedNode``, which it does not write) are refused
    for the same reason.
    """
    depth = json_depth(schema)
    if depth > MAX_SCHEMA_DEPTH:
        raise _refuse(
            f"its schema is nested {depth} levels deep (at most {MAX_SCHEMA_DEPTH})"
        )
    try:
        tree = json.loads(schema)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is one
        raise ValueError(f"This skops file is damaged (schema.json: {exc}).") from None
    first: dict[Any, dict] = {}  # id -> the entry that defines it
    dumped: dict[Any, str] = {}  # id -> that entry's content (see _content)
    todo: list[Any] = [tree]
    n_values = 0
    while todo:
        value = todo.pop()
        n_values += 1
        if n_values > MAX_SCHEMA_VALUES:
            raise _refuse(f"its schema holds more than {MAX_SCHEMA_VALUES:,} values")
        if isinstance(value, list):
            todo.extend(value)
            continue
        if not isinstance(value, dict):
            continue
        if value.get("__loader__") == "CachedNode":
            raise _refuse("its schema refers back to an object (CachedNode)")
        key = value.get("__id__")
        if key is not None and "__loader__" in value:
            if not isinstance(key, int) or isinstance(key, bool):
                raise _refuse(f"an object id of type {type(key).__name__}")
            if key in first:
                # Repeats are disjoint (their insides are not walked), so these
                # comparisons cost at most twice the schema.
                if key not in dumped:
                    dumped[key] = _content(first[key])
                if _content(value) != dumped[key]:
                    raise _refuse(
                        f"object id {key} is given twice with different content "
                        "(a shared or cyclic reference)"
                    )
                continue  # the same content, walked once already
            first[key] = value
        todo.extend(value.values())


_ID_FIELD = re.compile(r'"__id__": -?\d+')


def _content(entry: dict) -> str:
    """A schema entry as canonical JSON text without its ``__id__`` values.

    JSON text (not ``==`` on the parsed values) compares NaN equal to NaN and
    1 unequal to true; inside string values a quote is escaped, so the pattern
    only matches the ``__id__`` keys of entries.
    """
    return _ID_FIELD.sub("", json.dumps(entry, sort_keys=True))
