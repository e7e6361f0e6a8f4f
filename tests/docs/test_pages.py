"""The pages users look for exist, are linked from the index and say what the
code does: the CLI reference lists every option, the environment page every
variable the code reads, the settings table the real defaults; CITATION.cff is
valid CFF 1.2.0; the gallery has its examples; the version has one home."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

import budgetdag_core
from budgetdag_core import BudgetDAGClassifier
from budgetdag_core.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
from cli_rst import reference_lines  # noqa: E402

PAGES = (
    "install",
    "release_notes",
    "citing",
    "faq",
    "glossary",
    "choosing_settings",
    "cli",
    "environment",
)


def _toctree_entries(text: str) -> list[str]:
    """The documents listed by the toctree directives of a page."""
    entries = []
    for block in re.findall(r"\.\. toctree::\n((?:   .*\n|\n)+)", text):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith(":"):
                entries.append(line)
    return entries


def test_the_pages_exist_and_the_index_links_them():
    index = (DOCS / "index.rst").read_text()
    toctree = _toctree_entries(index)
    for page in PAGES:
        assert (DOCS / f"{page}.rst").is_file(), page
        assert page in toctree, f"{page} is not in the index's toctree"
        assert f":doc:`{page}`" in index, f"the index's contents do not link {page}"


def test_citation_cff_has_the_keys_of_cff_1_2_0():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors"):  # required by the schema
        assert cff[key], key
    assert cff["version"] == budgetdag_core.__version__
    for author in cff["authors"]:
        assert author.get("name") or author.get("family-names"), author
    paper = cff["preferred-citation"]
    assert {"type", "title", "authors"} <= set(paper)
    assert paper["year"] == 2015 and "Directed Acyclic Graph" in paper["title"]
    assert [a["family-names"] for a in paper["authors"]] == [
        "Wang",
        "Trapeznikov",
        "Saligrama",
    ]


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("the CLI has no subcommands")


def test_the_cli_reference_lists_every_command_and_option():
    assert ".. budgetdag-cli::" in (DOCS / "cli.rst").read_text()
    text = "\n".join(reference_lines())
    for name, parser in _subcommands().items():
        section = text.split(f"budgetdag {name}\n")[1].split("\nbudgetdag ")[0]
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            names = action.option_strings or [action.dest]
            for option in names:
                assert f"``{option}``" in section, f"{name}: {option}"


def test_the_environment_page_lists_every_variable_the_code_reads():
    page = (DOCS / "environment.rst").read_text()
    sources = [ROOT / "app.py", *ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py")]
    sources += list((ROOT / "budgetdag_core").rglob("*.py"))
    names = set()
    for path in sources:
        names |= set(re.findall(r"\bBUDGETDAG_[A-Z_]+\b", path.read_text()))
    assert len(names) >= 8
    missing = sorted(n for n in names if f"``{n}``" not in page)
    assert not missing, missing


def _defaults_table() -> dict[str, list[str]]:
    """``{parameter: [library, app, cli]}`` cells of choosing_settings.rst."""
    text = (DOCS / "choosing_settings.rst").read_text()
    table = text.split("   * - Parameter\n")[1]
    rows = {}
    for row in table.split("   * - ")[1:]:
        cells = [c.strip() for c in row.split("\n     - ")]
        rows[cells[0].strip("`")] = [" ".join(c.split()) for c in cells[1:4]]
    return rows


def _first_literal(cell: str) -> str:
    return re.match(r"``(.+?)``", cell).group(1)


def _as_written(value: object) -> str:
    """A default as the table writes it: Python's repr, double-quoted."""
    return repr(value).replace("'", '"')


def test_the_settings_table_gives_the_real_library_and_cli_defaults():
    rows = _defaults_table()
    library = BudgetDAGClassifier().get_params()
    cli = {a.dest: a.default for a in _subcommands()["train"]._actions}
    cli_name = {"random_state": "seed"}
    assert set(rows) <= set(library) | {"n_jobs"}
    assert len(rows) >= 15
    for param, (lib_cell, _, cli_cell) in rows.items():
        assert _first_literal(lib_cell) == _as_written(library[param]), param
        dest = cli_name.get(param, param)
        if "not offered" in cli_cell:
            assert dest not in cli, param
        else:
            assert _first_literal(cli_cell) == _as_written(cli[dest]), param


def test_the_gallery_has_nine_examples_all_in_its_order():
    examples = sorted(p.name for p in (DOCS / "examples").glob("plot_*.py"))
    assert len(examples) >= 9
    conf = (DOCS / "conf.py").read_text()
    order = conf.split("ExplicitOrder(")[1].split(")")[0]
    assert sorted(re.findall(r'"(plot_\w+\.py)"', order)) == examples


def test_the_version_has_one_home():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = { attr = "budgetdag_core._version.__version__" }' in pyproject
    assert (
        "from ._version import __version__"
        in (ROOT / "budgetdag_core" / "__init__.py").read_text()
    )
    found = re.findall(r'__version__ = "([^"]+)"', _all_python_text())
    assert found == [budgetdag_core.__version__]


def _all_python_text() -> str:
    return "\n".join(p.read_text() for p in (ROOT / "budgetdag_core").rglob("*.py"))


def test_pre_commit_runs_ruff_lint_and_format():
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = {
        hook["id"]
        for repo in config["repos"]
        if "ruff" in repo["repo"]
        for hook in repo["hooks"]
    }
    assert {"ruff", "ruff-format"} <= hooks or {"ruff-check", "ruff-format"} <= hooks


def test_the_glossary_defines_the_words_the_docs_use():
    text = (DOCS / "glossary.rst").read_text()
    defined = set(re.findall(r"^   (\S[^\n]*)\n      \S", text, flags=re.M))
    for term in (
        "state",
        "unit",
        "cost scale",
        "hull",
        "oracle",
        "cascade",
        "stop loss",
        "cross-fitted",
        "sparse DAG",
        "policy",
    ):
        assert term in defined, term
