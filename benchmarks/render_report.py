"""Every benchmark figure of the pages, from the saved results.

    python benchmarks/render_report.py [--check] [--results DIR]

Reads ``benchmarks/results/`` (``run_all/``: ``run_all.py``'s per-dataset
summaries and curves; ``afa/``: the saved ``bench_afa.py`` runs, each with
the command and commit in its ``run.json``) and writes:

- ``BENCHMARKS.md`` (the whole report; ``docs/benchmarks.md`` includes it);
- its figures, ``docs/images/benchmarks/*.svg``: one cost-error figure per
  dataset and a speed figure;
- the generated blocks of README.md and the pages under ``docs/``
  (``_pages.BLOCKS``, between ``generated:`` marker comments).

``--check`` writes nothing and exits with 1, naming each file that differs
from what the results produce (``tests/docs/test_generated_figures.py`` runs
the same comparison). Reading the results takes seconds: no benchmark runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _common import RESULTS  # noqa: E402
from _pages import BLOCK, Results, fill, load_results  # noqa: E402
from _report import FIGURES, report_text  # noqa: E402

#: Folders under docs/ written by the docs build, not by hand.
BUILT = ("_build", "auto_examples", "generated", "backreferences", "_intersphinx")
BUILT += ("sg_execution_times.rst",)  # sphinx-gallery's timings page
#: Folders under docs/ whose pages hold no benchmark figures (the API pages
#: are written from the docstrings).
NOT_SCANNED = ("api",)


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and the hand-written pages under docs/ (.md, .rst)."""
    docs = [
        p
        for p in sorted((root / "docs").rglob("*"))
        if p.suffix in (".md", ".rst")
        and not any(
            part in (*BUILT, *NOT_SCANNED) for part in p.relative_to(root).parts
        )
    ]
    return [root / "README.md", *docs]


def expected(root: Path = ROOT, results_dir: Path = RESULTS) -> dict[Path, str]:
    """Each generated file's text as the saved results produce it."""
    results: Results = load_results(results_dir)
    work, afa_dir = results_dir / "run_all", results_dir / "afa"
    estimates = results_dir / "estimates" / "many.json"
    text, figs = report_text(results.summaries, work, afa_dir, estimates)
    out = {root / "BENCHMARKS.md": text}
    out |= {root / FIGURES / f"{stem}.svg": svg for stem, svg in figs.items()}
    for page in pages(root):
        current = page.read_text()
        if BLOCK.search(current):
            out[page] = fill(current, results, str(page.relative_to(root)))
    return out


def stale_figures(root: Path, wanted: dict[Path, str]) -> list[Path]:
    """Figures in the folder that the results no longer produce."""
    folder = root / FIGURES
    return [p for p in sorted(folder.glob("*.svg")) if p not in wanted]


def differences(root: Path = ROOT, results_dir: Path = RESULTS) -> list[str]:
    """Files that differ from what the saved results produce (relative paths)."""
    wanted = expected(root, results_dir)
    wrong = [
        str(path.relative_to(root))
        for path, text in wanted.items()
        if not path.exists() or path.read_text() != text
    ]
    wrong += [f"{p.relative_to(root)} (stale)" for p in stale_figures(root, wanted)]
    return wrong


def write_all(work: Path, afa_dir: Path, root: Path = ROOT) -> list[Path]:
    """Write every generated file from the results around ``work``/``afa_dir``.

    ``work`` and ``afa_dir`` must be the ``run_all`` and ``afa`` folders of one
    results folder (``run_all.py``'s defaults).
    """
    results_dir = work.parent
    if afa_dir.parent != results_dir:
        raise ValueError(f"{afa_dir} is not beside {work}")
    wanted = expected(root, results_dir)
    (root / FIGURES).mkdir(parents=True, exist_ok=True)
    for stale in stale_figures(root, wanted):
        stale.unlink()
    written = []
    for path, text in wanted.items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--results",
        default=str(RESULTS),
        help="folder of saved results (default: benchmarks/results)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a generated file differs from the results",
    )
    args = parser.parse_args(argv)
    results_dir = Path(args.results)
    if args.check:
        wrong = differences(ROOT, results_dir)
        for line in wrong:
            print(f"differs from the saved results: {line}")
        return 1 if wrong else 0
    for path in write_all(results_dir / "run_all", results_dir / "afa"):
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
