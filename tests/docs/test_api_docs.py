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


def _own_public_methods(cls: type) -> list[str]:
    """The public methods of ``cls`` that BudgetDAG defines (inherited ones
    included, scikit-learn's ``get_params``, ``score``, ... left out: the docs
    leave them out too, see ``_skip_foreign_members`` in docs/conf.py)."""
    names = []
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        if not name.startswith("_") and member.__module__.startswith("budgetdag_core"):
            names.append(name)
    return names


ESTIMATOR_METHODS = [
    (cls.__name__, name)
    for cls in (budgetdag_core.BudgetDAGClassifier, budgetdag_core.BudgetDAGRegressor)
    for name in _own_public_methods(cls)
]


def test_estimator_pages_list_the_inherited_methods():
    template = (DOCS / "_templates" / "autosummary" / "class.rst").read_text()
    assert ":inherited-members:" in template
    methods = {name for _, name in ESTIMATOR_METHODS}
    assert {"trace", "evaluate", "start", "refit_policies", "flow", "fit_bank"} <= (
        methods
    )


@pytest.mark.parametrize(("cls_name", "method"), ESTIMATOR_METHODS)
def test_estimator_methods_have_parameters_returns_and_an_example(cls_name, method):
    function = getattr(getattr(budgetdag_core, cls_name), method)
    doc = NumpyDocString(inspect.getdoc(function))
    arguments = [p for p in inspect.signature(function).parameters if p != "self"]
    documented = {n for param in doc["Parameters"] for n in param.name.split(", ")}
    assert set(arguments) <= documented, f"{method}: undocumented {arguments}"
    assert doc["Returns"], f"{method}: no Returns section"
    example = "\n".join(doc["Examples"])
    assert ">>>" in example and f".{method}(" in example, f"{method}: no example"


def test_evaluate_lists_its_keys():
    doc = inspect.getdoc(budgetdag_core.BudgetDAGClassifier.evaluate)
    returns = doc.split("Returns")[1].split("Examples")[0]
    for key in ("error", "mse", "mae", "avg_cost", "avg_sensors", "n_samples"):
        assert f"``{key}``" in returns, key
    assert "``avg_loss``" in returns
