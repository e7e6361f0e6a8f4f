"""Every benchmark figure of README.md, BENCHMARKS.md and docs/ is generated.

Two checks, both reading files only (no benchmark runs):

1. What ``benchmarks/render_report.py`` writes from the saved results in
   ``benchmarks/results/`` (BENCHMARKS.md, the SVG figures, the ``generated:``
   blocks of the pages) equals what the repository holds: a rerun that was
   not rendered, or a hand edit inside a block, fails.
2. Outside those blocks and outside code, no page holds a number shaped like
   a measurement: an error or a share with two or more decimals (``0.040``),
   a speed ratio (``6.2×``, ``4x``), a decimal percentage or point gap
   (``47.5 %``, ``1.6 points``), a time or a size with decimals (``81.0 s``,
   ``5.44 GiB``). Versions (``0.1.0``, ``Python 3.11``), sizes such as
   ``8×8``, whole numbers (budgets in %, limits such as ``50 MB`` or
   ``5 s``) pass, and settings belong in code (``cost_scale=0.05``), which
   is skipped. Whole-number measurements (``16 s``) are not told apart from
   limits: keep them out of the prose by review.
   A hand-typed figure that no saved output holds fails here, with its page
   and line.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import render_report  # noqa: E402
from _pages import BLOCK, blocks_of  # noqa: E402
from _report import FIGURES  # noqa: E402

#: Shapes of measured figures (see the module docstring).
FIGURE = re.compile(
    r"(?<![\w.])(?:"
    r"\d+(?:\.\d+)?\s?[×x](?!\s?\d)(?!\w)"  # 6.2×, 4x (not 8×8)
    r"|\d+\.\d+\s?(?:%|points?\b|pt\b)"  # 47.5 %, 1.6 points
    r"|\d+\.\d+\s?(?:ms|s|min|GiB|MiB|GB|MB|kB)\b"  # 81.0 s, 5.44 GiB
    r"|\d+\.\d{2,}(?![\w.]|\.\d)"  # 0.040, 0.0412, 27.70 (not 0.1.0)
    r")"
)
#: Words after which a dotted number is a version or a reference, not a figure.
NOT_A_FIGURE_AFTER = re.compile(
    r"(?:Python|version|Theorem|Lemma|sections?|Eq\.|Alg\.)[\s*≥>=]*$", re.I
)
#: rST directives whose indented body is code, not prose.
CODE_DIRECTIVE = re.compile(
    r"^\s*\.\. (?:code-block|code|sourcecode|math|doctest|testcode|testoutput"
    r"|literalinclude|raw|highlight)::"
)
INLINE_CODE = re.compile(r"``.*?``|:\w+:`[^`]*`|`[^`\n]*`")
LINK_TARGET = re.compile(r"\]\([^)]*\)|<https?://[^>]*>|https?://\S+")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)


def prose_lines(text: str, suffix: str) -> list[tuple[int, str]]:
    """``(line number, text)`` of the prose of a page: generated blocks, code
    blocks, inline code, link targets and comments blanked out."""
    text = BLOCK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = HTML_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out, fence, skip_indent = [], False, None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if suffix == ".md" and stripped.startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence:
            continue
        indent = len(line) - len(line.lstrip())
        if skip_indent is not None:
            if not stripped or indent > skip_indent:
                continue
            skip_indent = None
        if suffix == ".rst":
            if CODE_DIRECTIVE.match(line):
                skip_indent = indent  # the directive's body is code
                continue
            if stripped.startswith(".. "):
                continue  # comments, targets, other directives' first line
            if stripped.endswith("::"):
                skip_indent = indent  # a literal block follows
                line = line.rstrip(":")
        line = LINK_TARGET.sub(" ", INLINE_CODE.sub(" ", line))
        out.append((number, line))
    return out


def hand_typed_figures(text: str, suffix: str) -> list[tuple[int, str]]:
    """``(line, figure)`` of every measurement-shaped number in the prose."""
    found = []
    for number, line in prose_lines(text, suffix):
        for match in FIGURE.finditer(line):
            if NOT_A_FIGURE_AFTER.search(line[: match.start()]):
                continue
            found.append((number, match.group(0)))
    return found


def test_generated_files_match_the_saved_results():
    wrong = render_report.differences()
    assert not wrong, (
        "generated files differ from benchmarks/results/; run "
        f"`python benchmarks/render_report.py`: {wrong}"
    )


@pytest.mark.parametrize(
    "page",
    [p for p in render_report.pages() if p.name != "BENCHMARKS.md"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_no_hand_typed_benchmark_figure_outside_generated_blocks(page):
    found = hand_typed_figures(page.read_text(), page.suffix)
    assert not found, (
        f"{page.relative_to(ROOT)}: measurement-shaped numbers outside a "
        "generated block (generate them from benchmarks/results/, put a "
        f"setting in code, or drop them): {found}"
    )


def test_the_scanner_catches_figures_and_passes_versions_code_and_sizes():
    md = (
        "It errs 0.040 at 25 % against 0.093; fit 6.2× one HGB, refit 0.6x.\n"
        "The 8×8 digits, version 0.1.0, Python 3.11, 24 h, a 50 MB upload.\n"
        "Set `cost_scale=0.05` (``0.25``); see [x](img/v1.25.png).\n"
        "Stop after 5 s. It took 81.0 s, 5.44 GiB; CEGB is 1.6 points ahead.\n"
        "```python\nmodel = BudgetDAGClassifier(spec, cost_scale=0.003)\n```\n"
        "<!-- generated: speed-table -->\n3.14×\n<!-- end generated: speed-table -->\n"
    )
    found = [figure for _, figure in hand_typed_figures(md, ".md")]
    assert found == ["0.040", "0.093", "6.2×", "0.6x", "81.0 s", "5.44 GiB"] + [
        "1.6 points"
    ]
    rst = (
        "Theorem 2.1 holds; sections 2.1–2.3.\n\n"
        ".. code-block:: python\n\n   x = 0.125\n\nback to 0.125 prose\n\n"
        "**Python** ≥ 3.11. A literal, 0.75 s::\n\n   2.50 s\n\n"
        ".. list-table::\n\n   * - 7.3×\n"
    )
    found = [f for _, f in hand_typed_figures(rst, ".rst")]
    assert found == ["0.125", "0.75 s", "7.3×"]


def test_every_figure_the_report_embeds_is_present_one_curve_per_dataset():
    report = (ROOT / "BENCHMARKS.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", report)
    assert images, "BENCHMARKS.md embeds no figure"
    for image in images:
        assert (ROOT / image).is_file(), f"BENCHMARKS.md embeds a missing {image}"
    embedded = {Path(i).stem for i in images}
    results = render_report.load_results(render_report.RESULTS)
    datasets = {name for name, *_ in results.run_all}
    datasets |= {f"afa_{name}" for name in results.afa}
    assert datasets and datasets <= embedded
    assert "speed" in embedded
    assert all(Path(i).parent == FIGURES for i in images)
    # The docs' benchmarks page shows the same report, images included.
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    assert "```{include} ../BENCHMARKS.md" in page and ":relative-images:" in page


def test_each_generated_block_of_the_pages_has_a_known_name():
    from _pages import BLOCKS

    names = [
        name
        for page in render_report.pages()
        for name, _ in blocks_of(page.read_text())
    ]
    assert {"readme-comparison", "readme-many-sensors"} <= set(names)
    assert set(names) <= set(BLOCKS)


def test_readme_is_short_and_its_table_says_what_each_column_ran():
    readme = (ROOT / "README.md").read_text()
    assert len(readme) <= 10_000
    (body,) = [b for name, b in blocks_of(readme) if name == "readme-comparison"]
    header = next(line for line in body.splitlines() if line.startswith("| data"))
    assert "library default" in header and "(test splits)" in header
    # The settings every column ran with, and the seeded splits per dataset.
    assert "`python benchmarks/run_all.py" in body and "at commit `" in body
    lines = body.splitlines()
    rows = lines[lines.index(header) + 2 :]
    rows = [row for row in rows if row.startswith("| ")]
    assert rows and all(re.match(r"\| \w+ \(\d+ splits?\) \|", r) for r in rows)


def test_fill_rewrites_between_the_markers_only_and_refuses_unknown_blocks():
    from _pages import fill

    results = render_report.load_results(render_report.RESULTS)
    page = (
        "Before 1.\n\n.. generated: speed-table (python benchmarks/render_report.py)\n"
        "\nstale 9.99×\n\n.. end generated: speed-table\n\nAfter 2.\n"
    )
    done = fill(page, results)
    assert done.startswith("Before 1.\n\n.. generated: speed-table")
    assert done.endswith("\n.. end generated: speed-table\n\nAfter 2.\n")
    assert "stale" not in done and ".. list-table::" in done
    assert fill(done, results) == done  # idempotent
    with pytest.raises(KeyError, match="unknown generated block 'nope'"):
        fill("<!-- generated: nope -->\nx\n<!-- end generated: nope -->\n", results)
