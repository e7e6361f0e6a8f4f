"""The API reference covers ``budgetdag_core.__all__``, each name with an example.

Classes and functions carry their example in the docstring (run by
``--doctest-modules``); the constants, which cannot have a docstring, carry it
in their page under ``docs/api/`` (run here).
"""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path

import pytest
from numpydoc.docscrape import NumpyDocString

import budgetdag_core

DOCS = Path(__file__).resolve().parents[2] / "docs"
# The names listed in api.rst's autosummary tables (before the constants).
AUTOSUMMARY = (DOCS / "api.rst").read_text().split("Constants and types")[0]
DOCUMENTED = re.findall(r"^   (\w+)$", AUTOSUMMARY, flags=re.M)
# The constants' hand-written pages: docs/api/budgetdag_core.<name>.rst.
DATA_PAGES = {p.stem.removeprefix("budgetdag_core."): p for p in DOCS.glob("api/*.rst")}


def test_every_public_name_has_a_reference_page():
    listed = set(DOCUMENTED) | set(DATA_PAGES)
    assert listed == set(budgetdag_core.__all__)


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_docstring_is_numpydoc_with_an_example(name):
    obj = getattr(budgetdag_core, name)
    assert inspect.isclass(obj) or inspect.isfunction(obj), name
    doc = NumpyDocString(inspect.getdoc(obj))
    assert doc["Summary"], f"{name}: no summary line"
    assert any(">>>" in line for line in doc["Examples"]), f"{name}: no example"


@pytest.mark.parametrize("name", sorted(DATA_PAGES))
def test_constant_pages_examples_run(name):
    page = DATA_PAGES[name]
    assert f".. py:data:: {name}" in page.read_text()
    result = doctest.testfile(str(page), module_relative=False, verbose=False)
    assert result.attempted > 0 and result.failed == 0
