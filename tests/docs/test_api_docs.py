"""The API reference covers the public API, each name with an example.

The public API is ``budgetdag_core.__all__`` and the ``__all__`` of the
subpackages it lists (``tests/public_api.py``). ``docs/api.rst`` lists the
root's names; each subpackage has a page ``docs/api/<name>.rst``. Classes and
functions carry their example in the docstring (run by ``--doctest-modules``);
the constants, which cannot have a docstring, carry it in their page under
``docs/api/`` (run here).
"""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path

import pytest
from numpydoc.docscrape import NumpyDocString

import budgetdag_core
from tests.public_api import public_modules, public_objects

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: The subpackages' pages, by module name.
SUBPACKAGE_PAGES = {
    module.__name__: DOCS / "api" / f"{module.__name__.split('.')[-1]}.rst"
    for module in public_modules()[1:]
}


def _autosummary_names(text: str) -> list[str]:
    """The names an autosummary table of ``text`` lists (indented 3 spaces)."""
    return re.findall(r"^   (\w+)$", text, flags=re.M)


def _documented() -> dict[str, str]:
    """Qualified name -> its page, for the classes and functions listed in
    api.rst (under ``budgetdag_core``) and in the subpackages' pages."""
    pages = {"budgetdag_core": DOCS / "api.rst", **SUBPACKAGE_PAGES}
    found = {}
    for module, page in pages.items():
        text = page.read_text()
        assert text.count(".. currentmodule::") == 1, page
        assert f".. currentmodule:: {module}" in text, page
        for name in _autosummary_names(text.split("Constants and types")[0]):
            found[f"{module}.{name}"] = page.name
    return found


DOCUMENTED = _documented()
# The constants' hand-written pages: docs/api/<qualified name>.rst.
DATA_PAGES = {
    p.stem: p
    for p in DOCS.glob("api/budgetdag_core.*.rst")
    if "py:data::" in p.read_text()
}


def test_every_subpackage_has_a_page_linked_from_the_index():
    index = (DOCS / "api.rst").read_text()
    for module, page in SUBPACKAGE_PAGES.items():
        assert page.is_file(), module
        assert f".. automodule:: {module}" in page.read_text(), page
        assert f"api/{page.stem}" in index, f"api.rst does not link {page.name}"


def test_every_public_name_has_a_reference_page():
    listed = set(DOCUMENTED) | set(DATA_PAGES)
    expected = {f"{module}.{name}" for name, (module, _) in public_objects().items()}
    assert listed == expected


def _module(name: str):
    """The public module named ``name``."""
    return next(m for m in public_modules() if m.__name__ == name)


@pytest.mark.parametrize("qualified", sorted(DOCUMENTED))
def test_docstring_is_numpydoc_with_an_example(qualified):
    module, name = qualified.rsplit(".", 1)
    obj = getattr(_module(module), name)
    assert inspect.isclass(obj) or inspect.isfunction(obj), qualified
    doc = NumpyDocString(inspect.getdoc(obj))
    assert doc["Summary"], f"{qualified}: no summary line"
    assert any(">>>" in line for line in doc["Examples"]), f"{qualified}: no example"


@pytest.mark.parametrize("qualified", sorted(DATA_PAGES))
def test_constant_pages_examples_run(qualified):
    page = DATA_PAGES[qualified]
    module, name = qualified.rsplit(".", 1)
    text = page.read_text()
    assert f".. currentmodule:: {module}" in text and f".. py:data:: {name}" in text
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
