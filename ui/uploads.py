"""Uploaded files on the server: a size cap per kind, checked before reading.

Streamlit's ``max_upload_size`` of a file uploader is enforced by the browser
only: a client can send more. The server enforces ``server.maxUploadSize``
(``.streamlit/config.toml``) on every upload, which is :data:`SERVER_MAX_MB`,
the largest cap of any kind; :func:`read_upload` checks each kind's own cap
from the upload's size before its bytes are used. No Streamlit here: an
upload is anything with ``name``, ``size`` and ``getvalue()``.

An uploaded CSV goes to the library's reader (:func:`table_from_upload`);
an uploaded sensor spec is text, never a file name: :func:`spec_from_upload`
hands its bytes to ``SensorSpec.from_json``, which reads text only.
"""

from __future__ import annotations

from typing import Protocol

from budgetdag_core import SensorSpec, Table, read_table

MB = 2**20
CSV_MAX_MB = 50
"""A CSV upload (compressed size; the table is capped again once inflated, by
the library's cap on tables, ``budgetdag_core.tables.max_table_bytes``)."""
SPEC_MAX_MB = 1
"""A sensor spec (JSON): 1 MB holds tens of thousands of columns."""
MODEL_MAX_MB = 100
"""A policy file (.skops or .pkl): the .skops files the app writes for the
demos fit, the default banks' with room to spare, a random-forest bank's up
to letter's (``benchmarks/bench_model_sizes.py``). Pickles are several times
larger; bigger files load in Python (``load_policy_skops``)."""
SERVER_MAX_MB = max(CSV_MAX_MB, SPEC_MAX_MB, MODEL_MAX_MB)
"""``server.maxUploadSize`` in ``.streamlit/config.toml``: the largest cap."""


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


def table_from_upload(file: Upload) -> Table:
    """An uploaded CSV, read as the library and the command line read files
    (``read_table``, which names the file in its messages), after the cap on
    CSV uploads."""
    data = read_upload(file, CSV_MAX_MB, "CSV files")
    return read_table(data, name=f"The file {file.name!r}")


def spec_from_upload(file: Upload) -> SensorSpec:
    """The sensor spec of an uploaded JSON file; ``ValueError`` saying what is
    wrong with it. Its bytes go to ``SensorSpec.from_json``, which reads them
    as text only (never as a path) and checks their shape and depth."""
    return SensorSpec.from_json(read_upload(file, SPEC_MAX_MB, "sensor specs"))
