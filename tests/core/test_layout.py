"""The package's shape: few top-level modules, no import cycle, private stays
private, short functions.

Imports are read from the source with ``ast``, including those inside
functions (they still tie modules together); imports under ``if
TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "budgetdag_core"
MAX_TOP_LEVEL_MODULES = 20
MAX_FUNCTION_LINES = 120


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """Import statements anywhere in ``tree`` except under TYPE_CHECKING."""
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        todo.extend(ast.iter_child_nodes(node))


def _imported(module: str, path: Path) -> list[tuple[int, str, str | None]]:
    """``(line, imported module, imported name or None)`` of the package's
    modules that ``module`` imports; a name is None when it is a module."""
    package = module.split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    out = []
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names]
            continue
        if node.level:
            base = package[: len(package) - node.level + 1]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        for alias in node.names:
            if f"{source}.{alias.name}" in MODULES:
                out.append((node.lineno, f"{source}.{alias.name}", None))
            else:
                out.append((node.lineno, source, alias.name))
    return [(line, mod, name) for line, mod, name in out if mod in MODULES]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


def test_few_modules_at_the_top_level():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_no_import_cycle():
    graph = nx.DiGraph()
    for module, path in MODULES.items():
        for _, target, _ in _imported(module, path):
            if target != module:
                graph.add_edge(module, target)
    # The package's __init__ re-exports the public API from everywhere.
    graph.remove_nodes_from(["budgetdag_core"])
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert not cycles, cycles


@pytest.mark.parametrize("module", sorted(MODULES))
def test_private_modules_and_names_stay_home(module):
    """A private module is imported only inside the package that holds it, and
    a private name is not imported from another module at all."""
    found = []
    for line, target, name in _imported(module, MODULES[module]):
        parts = target.split(".")
        for i, part in enumerate(parts):
            owner = ".".join(parts[:i])
            if _private(part) and not (module + ".").startswith(owner + "."):
                found.append(f"line {line}: private module {target}")
                break
        if name is not None and _private(name):
            found.append(f"line {line}: private name {target}.{name}")
    assert not found, found


#: The package of the DAG strategies (what builds a fit's states on a bank).
STRATEGIES = "budgetdag_core.strategies"
#: The only functions named ``graph_reduce_*``: the teaching replay and its
#: record (Graph-Reduce itself is one function, ``graph_reduce``).
GRAPH_REDUCE_NAMES = {"graph_reduce_steps", "graph_reduce_record"}


def test_one_graph_reduce():
    """One Graph-Reduce for every DAG: no second ``graph_reduce_*`` walk."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name.startswith("graph_reduce_")
                and node.name not in GRAPH_REDUCE_NAMES
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert not found, found


def test_no_bank_module_imports_a_strategy():
    """The bank knows nothing of the strategies that grow DAGs on it."""
    found = [
        f"{module} line {line}: {target}"
        for module, path in MODULES.items()
        if module.startswith("budgetdag_core.bank")
        for line, target, _ in _imported(module, path)
        if target == STRATEGIES or target.startswith(STRATEGIES + ".")
    ]
    assert not found, found


#: A fit's choice among strategies: the estimator's and the strategies'
#: business (``strategies.StrategyBanks``, ``StrategyChoice``), not a bank's.
CHOICE_NAMES = {
    "strategy_",
    "strategy_key_",
    "strategy_banks_",
    "strategy_validation_",
    "StrategyBanks",
    "StrategyChoice",
}


def test_no_bank_holds_the_strategy_choice():
    """No bank module names a fit's strategy or its candidates: a bank is
    bound to one DAG and knows nothing of its siblings or the choice."""
    found = [
        f"{module} line {node.lineno}: {name}"
        for module, path in MODULES.items()
        if module.startswith("budgetdag_core.bank")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute | ast.Name | ast.Constant)
        for name in _names_in(node) & CHOICE_NAMES
    ]
    assert not found, found


#: What tells a DAG every row reaches from one grown on an any-subset bank.
DAG_KIND_NAMES = {
    "SparseSensorDAG",
    "SparseGrowth",
    "sparse_growth_",
    "strategy_banks_",
    "builds_sparse_dag",
    "grows_states",
}
#: The one home of that difference in ``estimator/``: the fit plans.
PLANS = "budgetdag_core.estimator._plans"
BASE_MAX_LINES = 600
BASE_MAX_MEMBERS = 30


def _names_in(node: ast.AST) -> set[str]:
    return {
        n.attr if isinstance(n, ast.Attribute) else n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute | ast.Name)
    } | {
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def test_one_fit_for_every_dag():
    """The estimators' fit is one sequence for every DAG: no module of
    ``estimator/`` but the plans tests which kind of DAG a fit builds (no
    ``if`` or conditional expression reads it), and the shared base stays
    small."""
    branches = []
    for module, path in MODULES.items():
        if not module.startswith("budgetdag_core.estimator") or module == PLANS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert):
                kinds = _names_in(node.test) & DAG_KIND_NAMES
                if kinds:
                    branches.append(f"{module} line {node.lineno}: {sorted(kinds)}")
    assert not branches, branches
    base = PACKAGE / "estimator" / "_base.py"
    text = base.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= BASE_MAX_LINES
    cls = next(
        n
        for n in ast.parse(text).body
        if isinstance(n, ast.ClassDef) and n.name == "BudgetDAGBase"
    )
    members = [
        n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    assert len(members) <= BASE_MAX_MEMBERS, [m.name for m in members]


@pytest.mark.parametrize("folder", ["budgetdag_core", "ui"])
def test_no_function_is_longer_than_a_screenful(folder):
    long = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.name} ({lines})")
    assert not long, long


def test_the_app_uses_the_library_s_public_names_only():
    app_files = [ROOT / "app.py", *(ROOT / "ui").rglob("*.py")]
    app_files += (ROOT / "pages").rglob("*.py")
    found = []
    for path in app_files:
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if not names[0].startswith("budgetdag_core"):
                continue
            parts = names[0].split(".") + names[1:]
            if any(_private(p) for p in parts):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found


#: What reading a data file takes: the library's reader does it
#: (``budgetdag_core.read_table``), so the app cannot read a file otherwise.
PARSING_MODULES = {"csv", "gzip", "codecs"}
PARSING_CALLS = {"read_csv", "read_table", "read_fwf", "Sniffer", "decode"}


def _app_sources() -> list[Path]:
    return [ROOT / "app.py", *sorted((ROOT / "ui").rglob("*.py"))] + sorted(
        (ROOT / "pages").rglob("*.py")
    )


def test_the_app_parses_no_csv():
    """ui/ and pages/ hand every data file to the library's reader: no csv,
    gzip or codecs module, no pandas reader, no sniffing or decoding."""
    found = []
    for path in _app_sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [(node.module or "").split(".")[0]]
            else:
                names = []
            if PARSING_MODULES & set(names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {names}")
            call = node.func if isinstance(node, ast.Call) else None
            attr = call.attr if isinstance(call, ast.Attribute) else None
            on_library = (
                isinstance(call, ast.Attribute)
                and isinstance(call.value, ast.Name)
                and call.value.id.startswith("budgetdag")
            )
            if attr in PARSING_CALLS and not on_library:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} calls {attr}")
    assert not found, found


def test_the_app_has_no_dataset_type_of_its_own():
    """The data the app trains on is ``budgetdag_core.Dataset``: no class in
    ui/ or pages/ holds train and test frames or is named like a dataset."""
    found = []
    for path in _app_sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            fields = {
                stmt.target.id
                for stmt in node.body
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
            }
            if {"train", "test"} <= fields or re.search("Dataset|Demo", node.name):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not found, found


#: Private attributes of other libraries that the package reads on purpose
#: (numba's cache index in ``_compiled``; scikit-learn's parameter names and
#: constraints, its estimator convention).
FOREIGN_PRIVATE = {
    "_parameter_constraints",
    "_cache",
    "_index_key",
    "_cache_file",
    "_load_index",
    "_get_param_names",
}


def _own_names(tree: ast.AST) -> set[str]:
    """Names a module defines: functions, methods, classes and attributes it
    assigns (``x._name = ...`` included)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_calls_across_modules(module):
    """A module reads another object's private attribute only when the
    attribute is its own (defined in that module) or through ``self``,
    ``cls`` or ``super()``: the fit's steps are public methods, so the
    tradeoff, the CLI and the app call those, never an estimator's
    internals."""
    tree = ast.parse(MODULES[module].read_text())
    own = _own_names(tree)
    bad = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in ("self", "cls"):
            continue
        if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "super":
            continue
        if node.attr in own or node.attr in FOREIGN_PRIVATE:
            continue
        bad.append(f"line {node.lineno}: {ast.unparse(node)}")
    assert not bad, bad
