"""The generated blocks of README.md and the user guide, from saved results.

A page holds a block between two marker comments; ``render_report.py``
rewrites what lies between them, and ``tests/docs/test_generated_figures.py``
fails when a block differs from what the saved results produce::

    <!-- generated: NAME (python benchmarks/render_report.py) -->
    ...
    <!-- end generated: NAME -->

in Markdown, and in reStructuredText (comments, invisible in the output)::

    .. generated: NAME (python benchmarks/render_report.py)

    ...

    .. end generated: NAME

``BLOCKS`` maps each NAME to the function that writes its text from a
``Results``. Numbers in a block come from the saved files only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from _common import LARGE, OPTIONAL, PAPER_SUBSETS, SMALL
from _report import (
    FRACTIONS,
    METHODS,
    afa_run_info,
    afa_runs,
    not_applicable,
    read_results,
    summaries_from,
    triple_cells,
)

#: A generated block: its opening marker line, body and closing marker line.
BLOCK = re.compile(
    r"^(?P<open>(?:<!-- |\.\. )generated: (?P<name>[\w-]+)[^\n]*\n)"
    r"(?P<body>.*?)"
    r"^(?P<close>(?:<!-- |\.\. )end generated: (?P=name)\b[^\n]*)$",
    re.MULTILINE | re.DOTALL,
)


@dataclass
class Results:
    """The saved results the pages are generated from."""

    #: run_all datasets: (name, summary, curve, SplitStats), in report order.
    run_all: list[tuple]
    summaries: dict[str, dict]
    #: bench_afa readings per dataset (each method from its own saved run).
    afa: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: The saved bench_afa folders behind ``afa`` with their ``run.json``.
    afa_info: dict[str, dict] = field(default_factory=dict)
    #: bench_dask's saved runs (``dask/dask.json``), empty when absent.
    dask: dict = field(default_factory=dict)


def dataset_names(work: Path) -> list[str]:
    """The run_all datasets saved in ``work``, in the report's order."""
    saved = {p.stem for p in work.glob("*.json") if p.stem != "run"}
    order = [n for n in (*SMALL, *LARGE, *OPTIONAL) if n in saved]
    return order + sorted(saved - set(order))


def load_results(results: Path) -> Results:
    """Everything under ``results`` (``run_all/`` and ``afa/``)."""
    work, afa_dir = results / "run_all", results / "afa"
    summaries = summaries_from(work, dataset_names(work))
    read, _ = read_results(summaries, work)
    afa, info = {}, {}
    for name, methods in afa_runs(afa_dir).items():
        parts = []
        for method, folder in methods.items():
            r = pd.read_csv(folder / "readings.csv")
            sp = pd.read_csv(folder / "speed.csv")
            part = r[(r["dataset"] == name) & (r["method"] == method)]
            sensors = int(sp.loc[sp["dataset"] == name, "n_sensors"].iloc[0])
            parts.append(part.assign(n_sensors=sensors))
            where = folder.relative_to(results).as_posix()
            info[where] = afa_run_info(folder)
        afa[name] = pd.concat(parts, ignore_index=True)
    saved = results / "dask" / "dask.json"
    dask = json.loads(saved.read_text()) if saved.exists() else {}
    return Results(read, summaries, afa, info, dask)


# ------------------------------------------------------------------ helpers
def _commands(summaries: list[dict]) -> str:
    """The distinct commands (and commits) behind some summaries."""
    runs = sorted({(s.get("command", ""), s.get("commit", "")) for s in summaries})
    return "; ".join(
        f"`{cmd or 'command not recorded'}` at commit `{commit or 'unknown'}`"
        for cmd, commit in runs
    )


def _dag_column(results: Results) -> str:
    """What the DAG column ran: the default, or the datasets with n_subsets."""
    by_value: dict[int, list[str]] = {}
    for name, s, _, _ in results.run_all:
        if "n_subsets" in s.get("params", {}):
            by_value.setdefault(s["params"]["n_subsets"], []).append(name)
    subsets = [f"{', '.join(names)} `n_subsets={t}`" for t, names in by_value.items()]
    return "DAG: library default" + (
        f"; {'; '.join(subsets)} (the paper's)" if subsets else ""
    )


def _splits(name: str, stats) -> str:
    n = stats.n_splits
    return f"{name} ({n} split{'s' if n > 1 else ''})"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def rst_table(header: list[str], rows: list[list[str]]) -> str:
    """A ``list-table`` (empty cells as a lone dash)."""
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *rows]:
        for i, cell in enumerate(row):
            lines.append(f"   {'*' if i == 0 else ' '} - {cell}".rstrip())
    return "\n".join(lines)


def _afa_label(name: str, r: pd.DataFrame) -> str:
    seeds = r.groupby("method")["seed"].nunique()
    counts = sorted(set(seeds))
    n = "/".join(str(c) for c in counts)
    word = "seed" if counts == [1] else "seeds"
    return f"{name} ({int(r['n_sensors'].iloc[0])} sensors, {n} {word})"


# ------------------------------------------------------------------- blocks
#: README's comparison: run_all's methods, short names (the fixed-subset
#: hull whose subsets are chosen on the test rows is in BENCHMARKS.md).
README_METHODS = ("dag", "paper", "cegb", "cascade", "hull_oof", "aaco", "greedy")
README_NAMES = {
    "paper": f"paper's `n_subsets={PAPER_SUBSETS}`",
    "cegb": "CEGB",
    "cascade": "cascade",
    "hull_oof": "fixed-subset hull, chosen on training rows",
    "aaco": "AACO",
    "greedy": "greedy CMI",
}


def readme_comparison(results: Results) -> str:
    """README's table: every run_all dataset and method at 25/50/75 %."""
    present = {
        m
        for _, _, _, st in results.run_all
        for m in README_METHODS
        if METHODS[m] in set(st.mean["method"])
    }
    methods = [m for m in README_METHODS if m in present]
    rows = []
    for name, s, _, stats in results.run_all:
        values = {
            m: [stats.at(m, f"error @ {f:.0%} cost") for f in FRACTIONS]
            for m in methods
        }
        # Three decimals, four where all sensors err below 1 % (shuttle).
        digits = 4 if np.mean(stats.all_errors) < 0.01 else 3
        ran = {m: v for m, v in values.items() if not np.all(np.isnan(v))}
        cells = dict.fromkeys(methods, "not run") | not_applicable(s)
        cells |= triple_cells(ran, digits=digits)
        label = _splits(name, stats)
        rows.append(
            [
                label,
                f"{np.mean(stats.all_errors):.{digits}f}",
                *(cells[m] for m in methods),
            ]
        )
    header = ["data (test splits)", "all sensors", _dag_column(results)]
    header += [README_NAMES[m] for m in methods[1:]]
    summaries = [s for _, s, _, _ in results.run_all]
    return "\n".join(
        [
            "Test error at 25 / 50 / 75 % of the all-sensor cost (lower "
            "hulls, same test rows, mean over splits, best in bold), from "
            f"{_commands(summaries)}:",
            "",
            md_table(header, rows),
        ]
    )


def readme_many_sensors(results: Results) -> str:
    """README's many-sensor line: each dataset beyond 12 sensors the peers
    ran on, at 25 % of the cost (the others are in BENCHMARKS.md)."""
    if not results.afa:
        return "No many-sensor runs are saved (`benchmarks/bench_afa.py`)."
    names = {"dag": "default", "paper": f"n_subsets={PAPER_SUBSETS}"}
    names |= {"cascade": "cascade", "hull_oof": "hull"}
    names |= {"aaco": "AACO", "greedy": "greedy CMI"}
    parts = []
    for name, r in results.afa.items():
        mean = r.groupby("method")["e25"].mean()
        sensors = int(r["n_sensors"].iloc[0])
        if not {"aaco", "greedy"} & set(mean.index) or sensors <= 12:
            continue
        shown = [
            f"{label} {mean[m]:.3f}"
            for m, label in names.items()
            if m in mean.index and np.isfinite(mean[m])
        ]
        seeds = "/".join(map(str, sorted(set(r.groupby("method")["seed"].nunique()))))
        parts.append(f"{name} ({seeds}): " + ", ".join(shown))
    return (
        "At 25 % of the all-sensor cost on the problems beyond 12 sensors "
        "(`bench_afa.py`, mean over the seeds in brackets; hull: fixed subsets "
        "chosen on training rows): " + "; ".join(parts) + "."
    )


def speed_table(results: Results) -> str:
    """The user guide's speed table: fit, policies, refit, all-sensor error."""
    header, fit, policies, error, refit = [""], [], [], [], []
    for name, s, _, stats in results.run_all:
        ref = s.get("reference")
        if not ref:
            continue
        sec, unit = s["seconds"], ref["fit_s"]
        header.append(f"{name} ({s['n_states']} states, {s['bank_kind']} bank)")
        whole, one = sec["fit (bank + one policy)"], sec["one policy fit (bank reused)"]
        fit.append(f"{whole:.1f} s = {whole / unit:.3g}×")
        policies.append(f"{one:.2g} s")
        error.append(f"{np.mean(stats.all_errors):.4f}")
        refit.append(f"{one / unit:.3g}×")
    rows = [
        ["fit (bank + one policy)", *fit],
        ["of which the policies (``refit_policies``)", *policies],
        ["``refit_policies`` against the HGB fit", *refit],
        ["all-sensor test error", *error],
    ]
    summaries = [s for _, s, _, _ in results.run_all]
    return "\n".join(
        [
            "Measured by ``benchmarks/run_all.py`` (saved in "
            "``benchmarks/results/run_all``; "
            f"{_commands(summaries).replace('`', '``')}), every time also as "
            "a ratio to one single-threaded "
            "``HistGradientBoostingClassifier(max_iter=200, early_stopping=True)`` "
            "on all features in the same process:",
            "",
            rst_table(header, rows),
        ]
    )


def afa_readings(results: Results) -> str:
    """The many-sensor page's table: each method at 10/25/50 % of the cost."""
    if not results.afa:
        return "No ``bench_afa.py`` runs are saved."
    names = {
        "dag": "default",
        "paper": f"paper's ``n_subsets={PAPER_SUBSETS}``",
        "cascade": "cascade",
        "hull": "fixed-subset hull, subsets chosen on test rows",
        "hull_oof": "fixed-subset hull, subsets chosen on training rows",
        "aaco": "AACO",
        "greedy": "greedy CMI",
    }
    present = [
        m for m in names if any(m in set(r["method"]) for r in results.afa.values())
    ]
    rows = []
    for name, r in results.afa.items():
        mean = r.groupby("method")[["e10", "e25", "e50"]].mean()
        values = {
            m: list(mean.loc[m].to_numpy(float)) if m in mean.index else [np.nan] * 3
            for m in present
        }
        cells = triple_cells(values, digits=3)
        cells |= {m: "not run" for m in present if m not in mean.index}
        rows.append([_afa_label(name, r), *(cells[m] for m in present)])
    runs = "; ".join(
        f"``{where}``: ``{info.get('command', 'command not recorded')}`` at "
        f"commit ``{info.get('commit', 'unknown')}``"
        for where, info in sorted(results.afa_info.items())
    )
    return "\n".join(
        [
            "Test error at 10 / 25 / 50 % of the all-sensor cost (mean over "
            "seeds; the cascade and both fixed-subset hulls read on the "
            "default's bank, the hull's subsets chosen on the test rows "
            "themselves, an optimistic bound, or on the training rows, as a "
            "user would; best in bold; ``n/a``: past a peer's capped rollout), "
            f"saved in ``benchmarks/results/`` ({runs}):",
            "",
            rst_table(["data", *(names[m] for m in present)], rows),
        ]
    )


def dask_table(results: Results) -> str:
    """bench_dask's local and 2-worker cluster fits, their tasks and what
    the tasks ship (``results/dask/dask.json``)."""
    saved = results.dask
    kinds = ("fit_fold", "_score_state", "_candidate_scores", "fit_node")
    rows = [
        [
            f"{r['rows']:,} ({r['kept']} kept, {r['states']} states)",
            f"{r['local_s']:.1f} s",
            f"{r['dask_s']:.1f} s ({r['dask_s'] / r['local_s']:.2f}×)",
            ", ".join(str(r["tasks"].get(k, 0)) for k in kinds),
            f"{r['shared_kB']:.0f} kB; "
            + ", ".join(
                f"{r['task_kB'][k]:.1f} kB (at most {r['task_max_kB'][k]:.1f})"
                if k in r["task_kB"]
                else "none"
                for k in kinds[1:]
            ),
        ]
        for r in saved["runs"]
    ]
    header = [
        "rows",
        "local fit",
        "2-worker cluster",
        "tasks: bank folds, growth states, routing candidates, node fits",
        "shipped: once per growth or routing search; per growth, routing, "
        "node task (median)",
    ]
    return "\n".join(
        [
            f"Measured by ``{saved['command']}`` at commit ``{saved['commit']}``"
            f" (load average {saved['load_average']} on 2 vCPUs):",
            "",
            rst_table(header, rows),
        ]
    )


BLOCKS: dict[str, Callable[[Results], str]] = {
    "readme-comparison": readme_comparison,
    "readme-many-sensors": readme_many_sensors,
    "speed-table": speed_table,
    "afa-readings": afa_readings,
    "dask-table": dask_table,
}


def fill(text: str, results: Results, where: str = "page") -> str:
    """``text`` with every generated block's body rewritten from ``results``."""

    def body(match: re.Match) -> str:
        name = match["name"]
        if name not in BLOCKS:
            raise KeyError(f"{where}: unknown generated block {name!r}")
        return f"{match['open']}\n{BLOCKS[name](results).rstrip()}\n\n{match['close']}"

    return BLOCK.sub(body, text)


def blocks_of(text: str) -> list[tuple[str, str]]:
    """``(name, body)`` of each generated block in ``text``."""
    return [(m["name"], m["body"]) for m in BLOCK.finditer(text)]
