"""The public namespace: the root keeps its names, moved names warn (issue 40).

0.1.0's root exported 71 names. The root now holds the estimators, the spec,
persistence and the main functions; the rest lives in documented subpackages.
Every name of 0.1.0's root still imports from the root: a moved one through
the package's ``__getattr__``, with a ``DeprecationWarning`` naming its home
and the very object its home holds. Nothing in the project itself imports a
moved name from the root.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import budgetdag_core

ROOT = Path(__file__).resolve().parents[2]

#: ``budgetdag_core.__all__`` of 0.1.0 (a contract: each must keep importing).
ROOT_OF_0_1_0 = """
BANK_KINDS BudgetDAGClassifier BudgetDAGRegressor BudgetReport ClassifierBank
ConfidenceCascade CostRegression DEMOS DEMO_HINTS Dataset DominanceSummary
FilterTree FitProbe LossTablePolicy MaskedBank PathResult PolicySession
PolicyVersionWarning Progress ReduceStep RegressorBank SensorDAG SensorSpec
SubsetSelection Table TradeoffResult __version__ acquisition_grid_figure
acquisition_heatmap_figure acquisition_paths_figure acquisition_steps_figure
action_names baseline_points cascade_points clicked_states cost_tables
dag_figure decision_regions_figure dominance_summary dumps_policy
dumps_policy_skops estimate_fit_seconds estimate_fit_seconds_for fit_cascade
fit_for_budget graph_reduce graph_reduce_steps kernels_ready
learn_policies_from_losses load_demo load_policy load_policy_skops
loads_policy loads_policy_skops lower_convex_hull make_bank node_details
oracle_frontier path_of pending_states probe_fit read_table save_policy
save_policy_skops select_subsets state_label subsets_in toy_dataset
tradeoff_curve tradeoff_figure warm_up
""".split()

#: Names that stay at the root without a warning: the estimators, the spec,
#: persistence, the main functions and what README.md and the docs' pages
#: import from the root.
STAY_AT_ROOT = """
SensorSpec BudgetDAGClassifier BudgetDAGRegressor tradeoff_curve save_policy
load_policy save_policy_skops load_policy_skops dumps_policy loads_policy
dumps_policy_skops loads_policy_skops fit_for_budget PolicySession read_table
Table Dataset load_demo toy_dataset SensorDAG select_subsets TradeoffResult
BudgetReport warm_up __version__ path_of
""".split()

MOVED = sorted(set(ROOT_OF_0_1_0) - set(budgetdag_core.__all__))
SUBPACKAGES = sorted(
    name
    for name in budgetdag_core.__all__
    if isinstance(getattr(budgetdag_core, name), type(budgetdag_core))
)


def test_the_root_keeps_the_contract_names_without_a_warning():
    assert set(STAY_AT_ROOT) <= set(budgetdag_core.__all__)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in budgetdag_core.__all__:
            namespace: dict = {}
            exec(f"from budgetdag_core import {name}", namespace)
            assert namespace[name] is getattr(budgetdag_core, name)


def test_the_root_is_tidy():
    names = [n for n in budgetdag_core.__all__ if n not in SUBPACKAGES]
    assert len(names) <= 36, names
    assert SUBPACKAGES == [
        "bank",
        "datasets",
        "estimates",
        "explain",
        "plotting",
        "reductions",
        "teaching",
        "tradeoff",
    ]
    # Each 0.1.0 name is the root's own or a moved one, never both.
    assert set(budgetdag_core._MOVED) == set(MOVED)
    assert set(budgetdag_core._MOVED).isdisjoint(names)
    assert len(MOVED) == 37


@pytest.mark.parametrize("name", MOVED)
def test_a_moved_name_still_imports_with_a_warning_naming_its_home(name):
    home = budgetdag_core._MOVED[name]
    assert name in importlib.import_module(home).__all__
    expected = getattr(importlib.import_module(home), name)
    message = rf"budgetdag_core\.{name} moved to {re.escape(home)}"
    with pytest.warns(DeprecationWarning, match=message) as record:
        assert getattr(budgetdag_core, name) is expected
    assert record[0].filename == __file__  # the caller's line, not the package's
    with pytest.warns(DeprecationWarning, match=message):
        namespace: dict = {}
        exec(f"from budgetdag_core import {name}", namespace)
    assert namespace[name] is expected
    # Tools that read every name dir() lists (pytest's collection) see none.
    assert name not in dir(budgetdag_core) and name not in budgetdag_core.__all__


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(
        AttributeError, match="'budgetdag_core' has no attribute 'nope'"
    ):
        budgetdag_core.nope
    with pytest.raises(ImportError):
        exec("from budgetdag_core import nope", {})


def test_every_moved_name_has_a_documented_home():
    for name, home in budgetdag_core._MOVED.items():
        assert home.split(".")[-1] in SUBPACKAGES, (name, home)


def _imports_of_moved_names(path: Path) -> list[str]:
    """``from budgetdag_core import <moved>`` and ``budgetdag_core.<moved>`` in
    ``path``'s code and in its docstrings' examples (``>>>`` lines)."""
    text = path.read_text(encoding="utf-8")
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module == "budgetdag_core":
            found += [f"{node.lineno}: {a.name}" for a in node.names if a.name in MOVED]
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("budgetdag_core", "bd")
            and node.attr in MOVED
        ):
            found.append(f"{node.lineno}: budgetdag_core.{node.attr}")
    for number, line in enumerate(text.splitlines(), 1):
        match = re.match(r"\s*>>> from budgetdag_core import (.+)", line)
        if match and {n.strip() for n in match.group(1).split(",")} & set(MOVED):
            found.append(f"{number}: {line.strip()}")
    return found


def _project_python_files() -> list[Path]:
    folders = ("budgetdag_core", "ui", "pages", "benchmarks", "docs", "tests")
    files = [ROOT / "app.py"]
    for folder in folders:
        files += [
            p
            for p in (ROOT / folder).rglob("*.py")
            if not {"_build", "auto_examples"} & set(p.parts)
        ]
    return [p for p in files if p != Path(__file__)]


def test_the_project_imports_moved_names_from_their_homes():
    found = {
        str(path.relative_to(ROOT)): hits
        for path in _project_python_files()
        if (hits := _imports_of_moved_names(path))
    }
    assert not found, found


#: Imports the package, its CLI and every ui module, then fits, sweeps,
#: draws and explains a small model, with a moved name's warning an error.
_NO_WARNING = """
import importlib, pkgutil, warnings
warnings.filterwarnings("error", message=r"budgetdag_core\\.\\w+ moved to")
warnings.filterwarnings("error", category=DeprecationWarning, module=r"budgetdag_core")
import budgetdag_core, budgetdag_core.cli, ui
for module in pkgutil.iter_modules(ui.__path__):
    importlib.import_module(f"ui.{module.name}")
from budgetdag_core import BudgetDAGClassifier, path_of, toy_dataset, tradeoff_curve
from budgetdag_core.plotting import dag_figure, tradeoff_figure
from budgetdag_core.teaching import graph_reduce_steps
demo = toy_dataset(n_train=120, n_test=40)
model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=2, random_state=0)
model.fit(demo.X_train, demo.y_train)
path_of(model, demo.X_test.iloc[0])
dag_figure(model, demo.X_test, demo.y_test)
graph_reduce_steps(model, demo.X_train, demo.y_train, rows=2)
curve = tradeoff_curve(demo.X_train, demo.y_train, demo.spec, n_points=2, cv=2,
                       random_state=0, bank=model.bank_, X_test=demo.X_test,
                       y_test=demo.y_test)
tradeoff_figure(curve.frame)
print("ok")
"""


def test_the_package_the_app_and_a_fit_raise_no_deprecation_warning():
    out = subprocess.run(
        [sys.executable, "-c", _NO_WARNING],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")


def test_the_release_version_has_one_source():
    """pyproject.toml reads the version from ``budgetdag_core._version`` (the
    wheel's name says it: tests/core/test_packaging.py); the docs quote it."""
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"]
    assert "version" in pyproject["project"]["dynamic"]
    source = pyproject["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    module, name = source.rsplit(".", 1)
    assert getattr(importlib.import_module(module), name) == budgetdag_core.__version__
    citing = (ROOT / "docs" / "citing.rst").read_text()
    assert re.findall(r"version\s*=\s*\{([^}]*)\}", citing) == [
        budgetdag_core.__version__
    ]
