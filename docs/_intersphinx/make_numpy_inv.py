"""Write ``numpy.inv``, the intersphinx inventory of numpy's documentation.

Debian ships no numpy documentation package and the docs build has no network,
so this builds the inventory from the installed numpy instead: every public
class and function of ``numpy`` and of ``numpy.random``'s generators, at the
address numpy's documentation gives it (``reference/generated/<name>.html``).
Rerun it after a numpy upgrade changes the API::

    python docs/_intersphinx/make_numpy_inv.py
"""

from __future__ import annotations

import inspect
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _entries() -> list[tuple[str, str]]:
    """``(name, role)`` of numpy's public classes and functions."""
    out: list[tuple[str, str]] = []
    for name in sorted(set(dir(np))):
        if name.startswith("_"):
            continue
        obj = getattr(np, name)
        if inspect.isclass(obj):
            out.append((f"numpy.{name}", "py:class"))
        elif callable(obj):
            out.append((f"numpy.{name}", "py:function"))
    for cls in (np.random.Generator, np.random.RandomState):
        qual = f"numpy.random.{cls.__name__}"
        out.append((qual, "py:class"))
        for method in sorted(m for m in dir(cls) if not m.startswith("_")):
            out.append((f"{qual}.{method}", "py:method"))
    out.append(("numpy.random.default_rng", "py:function"))
    # Glossary terms numpydoc links types to (its default aliases).
    out += [(term, "std:term") for term in GLOSSARY_TERMS]
    for method in sorted(m for m in dir(np.ndarray) if not m.startswith("_")):
        if callable(getattr(np.ndarray, method)):
            out.append((f"numpy.ndarray.{method}", "py:method"))
    return out


#: numpy glossary terms, at ``reference/glossary.html#term-<term>``.
GLOSSARY_TERMS = ("array_like", "array-like", "dtype", "scalar")

#: Pages of numpy.random's classes (the rest have a generated page each).
RANDOM_PAGES = {
    "numpy.random.Generator": "reference/random/generator.html",
    "numpy.random.default_rng": "reference/random/generator.html",
    "numpy.random.RandomState": "reference/random/legacy.html",
}


def _uri(name: str, role: str) -> str:
    if role == "std:term":
        return f"reference/glossary.html#term-{name}"
    if name in RANDOM_PAGES:
        return f"{RANDOM_PAGES[name]}#{name}"
    folder = (
        "reference/random/generated"
        if name.startswith("numpy.random.")
        else ("reference/generated")
    )
    return f"{folder}/{name}.html#{name}"


def main() -> None:
    lines = [f"{name} {role} 1 {_uri(name, role)} -" for name, role in _entries()]
    header = (
        "# Sphinx inventory version 2\n"
        "# Project: NumPy\n"
        f"# Version: {np.__version__}\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    body = zlib.compress(("\n".join(lines) + "\n").encode())
    (HERE / "numpy.inv").write_bytes(header.encode() + body)
    print(f"numpy.inv: {len(lines)} entries (numpy {np.__version__})")


if __name__ == "__main__":
    main()
