"""BENCHMARKS.md from the saved results of run_all.py (and of bench_afa.py).

One table per question: quality (error at 25/50/75 % of the all-sensor cost),
speed (ratios to one single-threaded HGB on all features, measured in the same
process), scale (rows, states, seconds, memory), where we lose, how to rerun.
Every number is read from the files in ``benchmarks/out/``: the report holds
the current numbers only; their history is in git.

Every method's error at a budget is read off the lower convex hull of its test
points (``_common.hull_of``). A dataset run on several seeded splits (a
``seed`` column in its curve CSV) is read split by split, and its numbers are
averaged over them.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import platform
import re
import subprocess
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from _common import (
    FRACTIONS,
    PAPER_SUBSETS,
    TOLERANCE,
    cost_to_reach,
    error_at,
    hull_of,
)
from threadpoolctl import threadpool_info

#: The paper's many-sensor configuration (run_all's and bench_afa's "paper").
PAPER_LABEL = f"DAG, paper's n_subsets={PAPER_SUBSETS}"
METHODS = {
    "dag": "DAG (Graph-Reduce), library default",
    "paper": f"{PAPER_LABEL} (Alg. 2 subsets, own bank)",
    "dag_paper": "DAG, paper's policy inputs (sensor inputs, 0/1 losses)",
    "hull": "fixed-subset hull, subsets chosen on test rows",
    "hull_oof": "fixed-subset hull, subsets chosen on training rows",
    "cascade": "confidence cascade",
    "cegb": "LightGBM CEGB",
    "aaco": "AACO (k-NN oracle)",
    "greedy": "greedy CMI acquirer",
    "oracle": "oracle (unreachable)",
}
#: Short column names of the quality tables.
SHORT = {
    "dag": "DAG (default)",
    "paper": PAPER_LABEL,
    "dag_paper": "DAG, paper's policy inputs",
    "hull": "fixed-subset hull, chosen on test rows",
    "hull_oof": "fixed-subset hull, chosen on training rows",
    "cascade": "cascade",
    "cegb": "CEGB",
    "aaco": "AACO",
    "greedy": "greedy CMI",
    "oracle": "oracle",
}
#: The methods the DAG is compared with (the oracle is a bound, not a method).
BASELINES = ("paper", "dag_paper", "hull", "hull_oof", "cascade", "cegb")
BASELINES += ("aaco", "greedy")
#: A baseline "beats" the DAG when its error is lower by more than this (0.5 pt).
LOSS_MARGIN = 0.005
COLOURS = {
    "dag": "#1f77b4",
    "dag_paper": "#17becf",
    "hull": "#7f7f7f",
    "hull_oof": "#bcbd22",
    "cascade": "#ff7f0e",
    "cegb": "#d62728",
    "aaco": "#9467bd",
    "greedy": "#8c564b",
    "oracle": "#2ca02c",
    "paper": "#e377c2",
}


# ------------------------------------------------------------ reading curves
def dataset_table(curve: pd.DataFrame) -> tuple[pd.DataFrame, float, float]:
    """Rows per method: error at budget fractions and cost to match all sensors."""
    alls = curve[curve["method"] == "all_sensors"].iloc[0]
    all_cost, all_err = float(alls["avg_cost"]), float(alls["error"])
    rows = []
    for method, label in METHODS.items():
        part = curve[curve["method"] == method]
        if part.empty:
            continue
        hc, he = hull_of(part)
        row = {"method": label}
        for f in FRACTIONS:
            row[f"error @ {f:.0%} cost"] = error_at(hc, he, f * all_cost)
        reach = cost_to_reach(hc, he, all_err + TOLERANCE)
        row["cost to all-sensor error + 0.5 pt"] = reach / all_cost
        row["lowest error"] = float(he.min())
        row["points"] = len(part)
        rows.append(row)
    return pd.DataFrame(rows), all_cost, all_err


def split_curves(curve: pd.DataFrame) -> list[tuple[int | None, pd.DataFrame]]:
    """Each seeded split's rows of ``curve`` (one, seed ``None``, without a
    ``seed`` column: a fixed split)."""
    if "seed" not in curve.columns:
        return [(None, curve)]
    return [(int(k), part) for k, part in curve.groupby("seed", sort=True)]


@dataclass
class SplitStats:
    """Per-method numbers of ``dataset_table`` over one or more seeded splits.

    ``mean``, ``low`` and ``high`` have ``dataset_table``'s layout (a ``method``
    column, then one column per number); ``n_missing`` counts the splits in
    which a number is n/a (the method never spends that little, never reaches
    the target, or is missing). A mean is n/a unless every split has the number,
    so all methods' means are over the same splits.
    """

    seeds: list[int | None]
    tables: list[pd.DataFrame]
    all_errors: list[float]
    all_costs: list[float]
    mean: pd.DataFrame
    low: pd.DataFrame
    high: pd.DataFrame
    n_missing: pd.DataFrame

    @property
    def n_splits(self) -> int:
        return len(self.seeds)

    def at(self, method: str, column: str, frame: str = "mean") -> float:
        """One number of ``frame`` (mean, low, high) for a method key; NaN if absent."""
        t = getattr(self, frame).set_index("method")
        label = METHODS[method]
        return float(t.at[label, column]) if label in t.index else float("nan")


def split_stats(curve: pd.DataFrame) -> SplitStats:
    """``dataset_table`` of every split in ``curve`` and their mean and spread.

    Each split's numbers are read off its own lower hulls, relative to its own
    all-sensor cost and error, before they are averaged.
    """
    seeds, tables, errs, costs = [], [], [], []
    for seed, part in split_curves(curve):
        table, all_cost, all_err = dataset_table(part)
        seeds.append(seed)
        tables.append(table)
        costs.append(all_cost)
        errs.append(all_err)
    labels = list(dict.fromkeys(m for t in tables for m in t["method"]))
    cube = np.stack(
        [t.set_index("method").reindex(labels).to_numpy(float) for t in tables]
    )
    columns = [c for c in tables[0].columns if c != "method"]
    with warnings.catch_warnings():  # all-NaN cells are n/a, not an error
        warnings.simplefilter("ignore", RuntimeWarning)
        stats = {
            "mean": cube.mean(axis=0),
            "low": np.nanmin(cube, axis=0),
            "high": np.nanmax(cube, axis=0),
            "n_missing": np.isnan(cube).sum(axis=0),
        }
    frames = {
        key: pd.DataFrame(values, columns=columns).assign(method=labels)[
            ["method", *columns]
        ]
        for key, values in stats.items()
    }
    return SplitStats(seeds, tables, errs, costs, **frames)


def dataset_label(name: str, stats: SplitStats) -> str:
    """``name``, or ``"pima (mean of 5 splits)"`` for several splits."""
    if stats.n_splits == 1:
        return name
    return f"{name} (mean of {stats.n_splits} splits)"


def _col(f: float) -> str:
    return f"error @ {f:.0%} cost"


REACH = "cost to all-sensor error + 0.5 pt"


# ------------------------------------------------------------------- tables
def table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def triple_cells(values: dict[str, list[float]], digits: int = 4) -> dict[str, str]:
    """``"a / b / c"`` per method, the lowest of each budget in bold.

    ``values`` maps a method key to its errors at 25/50/75 %; the oracle is
    never bold (it is a bound).
    """
    n = len(FRACTIONS)
    best = []
    for i in range(n):
        cands = [v[i] for m, v in values.items() if m != "oracle" and np.isfinite(v[i])]
        best.append(min(cands) if cands else np.nan)
    cells = {}
    for m, v in values.items():
        parts = []
        for i in range(n):
            text = f"{v[i]:.{digits}f}" if np.isfinite(v[i]) else "n/a"
            if m != "oracle" and np.isfinite(v[i]) and v[i] <= best[i] + 1e-9:
                text = f"**{text}**"
            parts.append(text)
        cells[m] = " / ".join(parts)
    return cells


def quality_row(
    label: str,
    stats: SplitStats,
    methods: tuple[str, ...],
    absent: dict[str, str] | None = None,
) -> list[str]:
    """All-sensor error, then each method's error at 25/50/75 % of the cost
    (``absent[m]``, else ``"not run"``, for a method without points)."""
    values = {m: [stats.at(m, _col(f)) for f in FRACTIONS] for m in methods}
    present = {m: v for m, v in values.items() if not np.all(np.isnan(v))}
    cells = triple_cells(present)
    absent = absent or {}
    return [
        label,
        f"{np.mean(stats.all_errors):.4f}",
        *(cells.get(m, absent.get(m, "not run")) for m in methods),
    ]


def reach_row(
    label: str,
    stats: SplitStats,
    methods: tuple[str, ...],
    absent: dict[str, str] | None = None,
) -> list[str]:
    """Each method's least cost (share of all sensors) to all-sensor error + 0.5 pt."""
    out = [label]
    for m in methods:
        if METHODS[m] not in set(stats.mean["method"]):
            out.append((absent or {}).get(m, "not run"))
            continue
        v = stats.at(m, REACH)
        missing = int(stats.at(m, REACH, "n_missing"))
        if np.isfinite(v):
            out.append(f"{v:.1%}")
        elif missing < stats.n_splits:  # a mean needs every split's number
            out.append(f"never in {missing} of {stats.n_splits} splits")
        else:
            out.append("never")
    return out


@dataclass
class Loss:
    """A budget at which a baseline errs less than the DAG by > ``LOSS_MARGIN``."""

    label: str
    fraction: float
    method: str
    error: float
    dag_error: float
    #: Splits (or seeds) in which the baseline is ahead, of ``n``.
    ahead: int
    n: int


def find_losses(
    label: str,
    values: dict[str, list[float]],
    per_split: list[dict[str, list[float]]],
    methods: tuple[str, ...] = BASELINES,
) -> list[Loss]:
    """Losses from mean errors at ``FRACTIONS`` (``values``, keyed by method)
    and the same numbers per split, to count the splits a baseline is ahead in."""
    found = []
    for i, f in enumerate(FRACTIONS):
        dag = values["dag"][i]
        for m in methods:
            other = values.get(m, [np.nan] * len(FRACTIONS))[i]
            if np.isfinite(dag) and np.isfinite(other) and dag - other > LOSS_MARGIN:
                # Splits (seeds) where both ran: a peer may have fewer seeds.
                both = [
                    (split.get(m, [np.nan] * len(FRACTIONS))[i], split["dag"][i])
                    for split in per_split
                ]
                both = [(o, d) for o, d in both if np.isfinite(o) and np.isfinite(d)]
                ahead = sum(o < d for o, d in both)
                found.append(Loss(label, f, m, other, dag, ahead, len(both)))
    return found


def losses(label: str, stats: SplitStats) -> list[Loss]:
    """``find_losses`` of one run_all dataset (mean over its splits)."""
    keys = ("dag", *BASELINES)
    values = {m: [stats.at(m, _col(f)) for f in FRACTIONS] for m in keys}
    per_split = [
        {m: [_split_value(t, m, _col(f)) for f in FRACTIONS] for m in keys}
        for t in stats.tables
    ]
    return find_losses(label, values, per_split)


def loss_lines(found: list[Loss], digits: int = 4) -> list[str]:
    """One line per dataset and budget: the DAG's error and each baseline ahead."""
    groups: dict[tuple[str, float], list[Loss]] = {}
    for loss in found:
        groups.setdefault((loss.label, loss.fraction), []).append(loss)
    lines = []
    for (label, f), group in groups.items():
        parts = []
        for x in group:
            where = f", ahead in {x.ahead} of {x.n}" if x.n > 1 else ""
            parts.append(
                f"{SHORT[x.method]} {x.error:.{digits}f} "
                f"({(x.dag_error - x.error) * 100:+.1f} pt{where})"
            )
        lines.append(
            f"- {label} at {f:.0%}: DAG {group[0].dag_error:.{digits}f}; "
            + ", ".join(parts)
        )
    return lines


def _split_value(t: pd.DataFrame, method: str, column: str) -> float:
    t = t.set_index("method")
    label = METHODS[method]
    return float(t.at[label, column]) if label in t.index else float("nan")


def _ratio(seconds: float, unit: float | None) -> str:
    """``seconds`` as a multiple of the reference; plain seconds without one."""
    if not unit:
        return f"{seconds:.1f} s"
    r = seconds / unit
    return f"{r:.1f}×" if r >= 1 else f"{r:.2g}×"


def speed_row(name: str, s: dict) -> list[str]:
    """Fit, refit, sweep and predict as ratios to the HGB reference of the run:
    of CPU seconds where the run recorded them (marked ``(CPU)``; CEGB's
    stay wall seconds), else of wall seconds."""
    sec, ref = s["seconds"], s.get("reference")
    unit = ref["fit_s"] if ref else None
    cpu = ref is not None and "fit_cpu_s" in ref and "cpu_seconds" in s
    times, time_unit = (s["cpu_seconds"], ref["fit_cpu_s"]) if cpu else (sec, unit)

    def timed(key: str, note: str = "") -> str:
        if key not in times:  # runs before the column came
            return "not timed"
        notes = ", ".join(n for n in (note, "CPU" if cpu else "") if n)
        return _ratio(times[key], time_unit) + (f" ({notes})" if notes else "")

    rows_ratio = (
        f"{s['predict_rows_per_s'] / ref['predict_rows_per_s']:.2f}×"
        if ref
        else f"{s['predict_rows_per_s']:,.0f} rows/s"
    )
    return [
        name,
        f"{unit:.2f}" if unit else "not measured",
        timed("default fit (cost_scale auto)"),
        timed("fit (bank + one policy)"),
        timed("one policy fit (bank reused)"),
        timed("sweep (bank reused)", f"{s['n_points']} points"),
        _ratio(sec["CEGB fits only"], unit),
        rows_ratio,
    ]


def scale_row(name: str, s: dict) -> list[str]:
    """Sizes and absolute seconds and memory of one dataset's run."""
    sec = s["seconds"]
    return [
        name,
        f"{s['n_train']:,} / {s['n_test']:,}",
        str(s["n_sensors"]),
        s.get("strategy", "not recorded"),
        str(s["n_states"]),
        s["bank_kind"],
        f"{sec['bank fit']:.1f}",
        f"{sec['sweep (bank reused)']:.1f}",
        f"{s['predict_rows_per_s']:,.0f}",
        f"{s['peak_mib']:.0f}",
        f"{s['load_average_1m']:.1f}" if "load_average_1m" in s else "n/a",
    ]


# ------------------------------------------------------------ bench_afa runs
def afa_runs(afa_dir: Path) -> dict[str, dict[str, Path]]:
    """Per AFA dataset and method, the saved bench_afa folder with the most
    seeds of that method; on a tie the one that finished last (``run.json``).

    Every folder under ``afa_dir`` (itself included) holding ``readings.csv``
    and ``speed.csv`` is a run. Choosing per method lets a run of the DAG
    alone (``--methods dag allfeat``) stand beside the peers' slower runs on
    the same rows; the all-feature reference follows the DAG's run.
    """
    best: dict[tuple[str, str], tuple[int, str, Path]] = {}
    if not afa_dir.exists():
        return {}
    for readings in sorted(afa_dir.rglob("readings.csv")):
        folder = readings.parent
        if not (folder / "speed.csv").exists():
            continue
        frame = pd.read_csv(readings)
        for (name, method), part in frame.groupby(["dataset", "method"]):
            key = (part["seed"].nunique(), afa_stamp(folder), folder)
            slot = (str(name), str(method))
            if slot not in best or key[:2] > best[slot][:2]:
                best[slot] = key
    runs: dict[str, dict[str, Path]] = {}
    for (name, method), key in sorted(best.items()):
        runs.setdefault(name, {})[method] = key[2]
    for methods in runs.values():
        if "dag" in methods:
            methods["allfeat"] = methods["dag"]
    return runs


def afa_run_info(folder: Path) -> dict:
    """A saved bench_afa run's ``run.json`` (command, commit, finish time)."""
    path = folder / "run.json"
    return json.loads(path.read_text()) if path.exists() else {}


def afa_stamp(folder: Path) -> str:
    """When a saved run finished (``run.json``; file times do not survive a
    clone, so they must not choose between runs), else the empty string."""
    return str(afa_run_info(folder).get("finished_utc", ""))


def _afa_readings(name: str, methods: dict[str, Path]) -> pd.DataFrame:
    """One dataset's readings, each method's rows from its own run."""
    parts = []
    for method, folder in methods.items():
        r = pd.read_csv(folder / "readings.csv")
        parts.append(r[(r["dataset"] == name) & (r["method"] == method)])
    return pd.concat(parts, ignore_index=True)


def _seeds_label(name: str, r: pd.DataFrame) -> str:
    """``"cube (3 seeds)"``, or the seeds per method where they differ."""
    per_method = r.groupby("method")["seed"].nunique()
    shown = [m for m in AFA_METHODS if m in per_method.index]
    counts = {int(per_method[m]) for m in shown}
    if len(counts) == 1:
        n = counts.pop()
        return f"{name} ({n} seed{'s' if n > 1 else ''})"
    others = {int(per_method[m]) for m in shown if m != "dag"}
    if "dag" in shown and len(others) == 1:
        return f"{name} (DAG {per_method['dag']} seeds, others {others.pop()})"
    seeds = ", ".join(f"{SHORT[m]} {per_method[m]}" for m in shown)
    return f"{name} (seeds: {seeds})"


AFA_METHODS = ("dag", "paper", "hull", "hull_oof", "cascade", "aaco", "greedy")


def _afa_speed_ratios(
    name: str, method: str, methods: dict[str, Path]
) -> tuple[float, float, bool]:
    """A bench_afa method's fit time and rows/s as ratios to its run's HGB,
    and whether the fit's ratio is of CPU seconds (where the run recorded
    them: a loaded machine moves wall seconds more)."""
    if method not in methods:
        return float("nan"), float("nan"), False
    sp = pd.read_csv(methods[method] / "speed.csv")
    sp = sp[sp["dataset"] == name]
    fit = cpu_ratios(sp, f"{method}_fit")
    cpu = fit is not None
    if fit is None:
        fit = sp[f"{method}_fit_s"] / sp["hgb_fit_s"]
    rows = (sp[f"{method}_rows_per_s"] / sp["hgb_rows_per_s"]).mean()
    return float(fit.mean()), float(rows), cpu


def _afa_speed_cells(name: str, methods: dict[str, Path]) -> list[str]:
    """Sensors, the HGB's fit seconds, then fit time and rows/s of the DAG
    and the peers, each a ratio to the HGB of its own run (side by side)."""

    def ratios(method: str) -> tuple[str, str]:
        if method not in methods:
            return "not run", "not run"
        fit, rows, cpu = _afa_speed_ratios(name, method, methods)
        return f"{fit:.1f}×" + (" (CPU)" if cpu else ""), f"{rows:.2g}×"

    own = pd.read_csv(methods.get("dag", next(iter(methods.values()))) / "speed.csv")
    own = own[own["dataset"] == name]
    cells = [ratios(m) for m in ("dag", "aaco", "greedy")]

    def dag_cpu(column: str, digits: int) -> str:
        """The DAG's ``column`` CPU ratio, mean over the seeds."""
        if "dag" not in methods:
            return "not run"
        ratio = cpu_ratios(own, column)
        return "not timed" if ratio is None else f"{ratio.mean():.{digits}f}× (CPU)"

    return [
        f"{own['n_sensors'].iloc[0]}",
        f"{own['hgb_fit_s'].mean():.1f}",
        dag_cpu("dag_default_fit", 1),
        cells[0][0],
        dag_cpu("dag_refit", 2),
        dag_cpu("dag_whatif", 2),
        *(fit for fit, _ in cells[1:]),
        *(rows for _, rows in cells),
    ]


def cpu_ratios(speed: pd.DataFrame, column: str) -> pd.Series | None:
    """A bench_afa run's ``column`` CPU seconds over its HGB fit's, per seed
    (rows of ``speed.csv``), or None where the run did not record them."""
    cols = [f"{column}_cpu_s", "hgb_fit_cpu_s"]
    if not all(c in speed and speed[c].notna().all() for c in cols):
        return None
    return speed[cols[0]] / speed[cols[1]]


def afa_sections(afa_dir: Path) -> tuple[str, str, list[Loss], list[str]]:
    """Quality table, speed table, losses and floor notes of saved bench_afa runs."""
    runs = afa_runs(afa_dir)
    if not runs:
        return "", "", [], []
    q_rows, s_rows, lost, floors = [], [], [], []
    for name, methods in runs.items():
        r = _afa_readings(name, methods)
        mean = r.groupby("method")[["e25", "e50", "e75"]].mean()
        values = {
            m: list(mean.loc[m].to_numpy(float)) if m in mean.index else [np.nan] * 3
            for m in AFA_METHODS
        }
        cells = triple_cells(values, digits=3)
        cells |= {m: "not run" for m in AFA_METHODS if m not in mean.index}
        label = _seeds_label(name, r)
        q_rows.append([label, *(cells[m] for m in AFA_METHODS)])
        per_seed = [
            {
                m: list(
                    g.set_index("method")
                    .reindex([m])[["e25", "e50", "e75"]]
                    .to_numpy(float)[0]
                )
                for m in AFA_METHODS
            }
            for _, g in r.groupby("seed")
        ]
        lost += find_losses(label, values, per_seed, AFA_METHODS[1:])
        lowest = r.groupby("method")["lowest"].mean()
        if {"dag", "allfeat"} <= set(lowest.index):
            gap = lowest["dag"] - lowest["allfeat"]
            if gap > 2 * LOSS_MARGIN:
                floors.append(
                    f"- **{name}: the bank sets the floor.** The DAG's lowest error "
                    f"({lowest['dag']:.3f}) is {gap * 100:.1f} points above the "
                    f"all-feature HGB's ({lowest['allfeat']:.3f}), so at large "
                    "budgets its state classifiers, not its routing, lose."
                )
        s_rows.append([label, *_afa_speed_cells(name, methods)])
    quality = table(
        ["data (seeds)", *(SHORT[m] for m in AFA_METHODS)],
        q_rows,
    )
    speed = table(
        [
            "data (seeds)",
            "sensors",
            "HGB fit s",
            "DAG default fit",
            "DAG fit",
            "DAG refit",
            "DAG what-if refit",
            "AACO fit",
            "greedy CMI fit",
            "DAG rows/s",
            "AACO rows/s",
            "greedy CMI rows/s",
        ],
        s_rows,
    )
    folders = sorted({p for m in runs.values() for p in m.values()})
    note = ["Saved `bench_afa.py` runs these numbers come from:", ""]
    for folder in folders:
        info = afa_run_info(folder)
        where = folder.relative_to(afa_dir.parent).as_posix()
        note.append(
            f"- `{where}`: commit `{info.get('commit', 'not recorded')}`"
            + (
                f", finished {info['finished_utc']} UTC"
                if "finished_utc" in info
                else ""
            )
            + (f", `{info['command']}`" if "command" in info else "")
        )
    return quality + "\n\n" + "\n".join(note), speed, lost, floors


# --------------------------------------------------------------- figures
#: Where the report's figures live, relative to the repository root.
FIGURES = Path("docs") / "images" / "benchmarks"
#: Line style per method on the curve figures: dashed for the bound and the
#: non-adaptive hull.
DASHED = ("oracle", "hull", "hull_oof")
#: Largest ratio of the highest to the lowest positive error drawn on a
#: linear axis.
LOG_SPAN = 30


def _hull_series(part: pd.DataFrame, label: str, colour: str, dashed: bool):
    from _svg import Series

    hc, he = hull_of(part)
    return Series(label, list(hc), list(he), colour, dashed=dashed)


def curve_figure(curve: pd.DataFrame, title: str, labels: dict[str, str]) -> str:
    """SVG: every method's lower hull on one test split, same axes.

    ``labels`` maps the curve's method keys to legend labels (in drawing
    order); the fixed subsets are grey dots, all sensors a black square.
    """
    from _svg import Series, line_chart

    series = []
    fixed = curve[curve["method"] == "fixed"]
    if not fixed.empty:
        series.append(
            Series(
                "fixed subsets",
                list(fixed["avg_cost"]),
                list(fixed["error"]),
                "#bbbbbb",
                line=False,
                marker="dot",
            )
        )
    for method, label in labels.items():
        part = curve[curve["method"] == method]
        if not part.empty:
            colour = COLOURS.get(method, "#000000")
            series.append(_hull_series(part, label, colour, method in DASHED))
    alls = curve[curve["method"].isin(["all_sensors", "allfeat"])]
    if not alls.empty:
        series.append(
            Series(
                "all sensors",
                list(alls["avg_cost"])[:1],
                list(alls["error"])[:1],
                "#000000",
                line=False,
                marker="star",
            )
        )
    errors = [e for s in series for e in s.y if e > 0]
    # Errors spanning orders of magnitude (shuttle, CUBE) need a log axis to
    # show where the methods differ; zero errors then drop off the chart.
    log_y = bool(errors) and max(errors) / min(errors) > LOG_SPAN
    return line_chart(
        series,
        title=title,
        x_label="average acquisition cost per test example",
        y_label="test error (log scale)" if log_y else "test error",
        log_y=log_y,
    )


#: Curve labels of run_all's methods (the oracle last: a bound).
RUN_ALL_LABELS = {m: SHORT[m] for m in METHODS}
#: Curve labels of bench_afa's methods (its keys differ from run_all's).
AFA_LABELS = {
    "dag": "DAG (default)",
    "paper": PAPER_LABEL,
    "hull": SHORT["hull"],
    "hull_oof": SHORT["hull_oof"],
    "cascade": "cascade",
    "aaco": "AACO",
    "greedy": "greedy CMI",
}


def _peer_rows_ratio(s: dict, rollout_key: str) -> float:
    """A peer's test-row rollout speed (rows/s) against the HGB's prediction."""
    seconds = s["seconds"].get(rollout_key)
    if not seconds:
        return float("nan")
    return s["n_test"] / seconds / s["reference"]["predict_rows_per_s"]


def speed_points(
    summaries: list[tuple[str, dict]], afa_dir: Path
) -> tuple[list[str], dict[str, list[float]]]:
    """Rows (datasets) and, per measure, its ratio to the HGB on each row."""
    keys = ("DAG fit", "DAG refit", "CEGB fits", "DAG predict")
    keys += ("AACO rollout", "greedy CMI rollout")
    rows, values = [], {k: [] for k in keys}
    nan = float("nan")
    for name, s in summaries:
        ref = s.get("reference")
        if not ref:
            continue
        sec, unit = s["seconds"], ref["fit_s"]
        rows.append(name)
        values["DAG fit"].append(sec["fit (bank + one policy)"] / unit)
        values["DAG refit"].append(sec["one policy fit (bank reused)"] / unit)
        values["CEGB fits"].append(sec["CEGB fits only"] / unit)
        values["DAG predict"].append(
            s["predict_rows_per_s"] / ref["predict_rows_per_s"]
        )
        values["AACO rollout"].append(_peer_rows_ratio(s, "AACO rollout (test rows)"))
        values["greedy CMI rollout"].append(
            _peer_rows_ratio(s, "greedy CMI rollout (test rows)")
        )
    for name, methods in afa_runs(afa_dir).items():
        rows.append(f"{name} (AFA)")
        ratio = {
            m: _afa_speed_ratios(name, m, methods) for m in ("dag", "aaco", "greedy")
        }
        values["DAG fit"].append(ratio["dag"][0])
        values["DAG refit"].append(nan)
        values["CEGB fits"].append(nan)
        values["DAG predict"].append(ratio["dag"][1])
        values["AACO rollout"].append(ratio["aaco"][1])
        values["greedy CMI rollout"].append(ratio["greedy"][1])
    return rows, values


def speed_figure(summaries: list[tuple[str, dict]], afa_dir: Path) -> str:
    """SVG: fit time and prediction speed of every method as ratios to the HGB."""
    from _svg import Series, dot_chart

    rows, values = speed_points(summaries, afa_dir)
    colours = {
        "DAG fit": COLOURS["dag"],
        "DAG refit": COLOURS["dag_paper"],
        "CEGB fits": COLOURS["cegb"],
        "DAG predict": COLOURS["oracle"],
        "AACO rollout": COLOURS["aaco"],
        "greedy CMI rollout": COLOURS["greedy"],
    }
    labels = {
        "DAG predict": "DAG predict rows/s",
        "AACO rollout": "AACO rows/s",
        "greedy CMI rollout": "greedy CMI rows/s",
    }
    series = [Series(labels.get(k, k), v, [], colours[k]) for k, v in values.items()]
    return dot_chart(
        rows,
        series,
        title="speed against one single-threaded HGB (1 = as fast or as long)",
        x_label="ratio to the HGB (time for fits, rows/s for the rest; log scale)",
    )


def afa_curves(afa_dir: Path) -> dict[str, str]:
    """SVG per AFA dataset: every method's hull on its first seed's test rows."""
    figs = {}
    for name, methods in afa_runs(afa_dir).items():
        parts = []
        for method, folder in methods.items():
            points = pd.read_csv(folder / "points.csv")
            parts.append(
                points[(points["dataset"] == name) & (points["method"] == method)]
            )
        points = pd.concat(parts, ignore_index=True)
        seed = int(points["seed"].min())
        first = points[points["seed"] == seed]
        title = f"{name} (bench_afa.py, seed {seed}): test error against cost"
        figs[f"afa_{name}"] = curve_figure(first, title, AFA_LABELS)
    return figs


def report_figures(read: list[tuple], afa_dir: Path) -> dict[str, str]:
    """Every figure of the report (file stem -> SVG text)."""
    figs = {}
    for name, _, curve, stats in read:
        seed, first = split_curves(curve)[0]
        which = f", split seed {seed}" if stats.n_splits > 1 else ""
        title = f"{name} (run_all.py{which}): test error against cost"
        figs[name] = curve_figure(first, title, RUN_ALL_LABELS)
    speed = [(name, s) for name, s, _, _ in read]
    if any(s.get("reference") for _, s in speed):
        figs["speed"] = speed_figure(speed, afa_dir)
    figs.update(afa_curves(afa_dir))
    return figs


# ------------------------------------------------------------- provenance
def current_commit() -> str:
    """Short hash of this checkout's HEAD (with "+changes" when code is modified)."""
    try:
        run = functools.partial(
            subprocess.run, capture_output=True, text=True, cwd=Path(__file__).parent
        )
        commit = run(["git", "rev-parse", "--short", "HEAD"]).stdout.strip()
        # What the results generate (the report, figures, pages) and the
        # results themselves do not make the code that ran "changed".
        generated = ("BENCHMARKS.md", "README.md", "docs", "benchmarks/results")
        dirty = run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ":/"]
            + [f":(top,exclude){path}" for path in generated]
        ).stdout
    except OSError:
        return "unknown"
    return f"{commit}+changes" if dirty.strip() else commit or "unknown"


def machine() -> str:
    """CPU, cores, memory and versions, on one line."""
    import lightgbm
    import sklearn

    import budgetdag_core

    cpu, mem = "unknown CPU", "unknown memory"
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        info = {
            key.strip(): value.strip()
            for key, value in (line.split(":", 1) for line in lines if ":" in line)
        }
        if "model name" in info:
            # Two CPUs of one brand name can differ in generation, and so in
            # the BLAS kernel chosen at run time (below), which changes the
            # rounding of the AFA peers' neural network and so their readings.
            cpu = f"{info['model name']} (family {info.get('cpu family', '?')}, "
            cpu += f"model {info.get('model', '?')})"
        mem_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        mem = f"{mem_kb / 1024**2:.0f} GiB"
    except (OSError, StopIteration):
        pass
    kernels = sorted(
        {str(p["architecture"]) for p in threadpool_info() if p.get("architecture")}
    )
    blas = f"BLAS kernel {'/'.join(kernels)}; " if kernels else ""
    return (
        f"{cpu}, {os.cpu_count()} cores, {mem}; {blas}Python "
        f"{platform.python_version()}, numpy {np.__version__}, pandas "
        f"{pd.__version__}, scikit-learn {sklearn.__version__}, lightgbm "
        f"{lightgbm.__version__}, budgetdag_core {budgetdag_core.__version__}"
    )


def machine_line(summaries: list[dict]) -> str:
    """The machine the results were measured on (saved with each dataset)."""
    saved = {s.get("machine") for s in summaries}
    if len(saved) == 1 and None not in saved:
        return f"Machine: {saved.pop()}."
    if saved - {None}:
        return "Machines: " + "; ".join(sorted(saved - {None})) + "."
    return f"Machine (not saved with the results; the one writing this): {machine()}."


def provenance(summaries: dict[str, dict]) -> str:
    """Which commit and command (and when) each dataset's saved results come from."""
    by_run: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
    for name, s in summaries.items():
        if "failed" not in s:
            key = (s.get("commit") or "unknown", s.get("command") or "")
            by_run.setdefault(key, []).append((name, s.get("finished_utc")))
    parts = []
    for (commit, command), runs in by_run.items():
        times = sorted(t for _, t in runs if t)
        when = ""
        if times:
            span = times[0] if times[0] == times[-1] else f"{times[0]}–{times[-1][-5:]}"
            when = f", finished {span} UTC"
        how = f", `{command}`" if command else ", command not recorded"
        names = ", ".join(n for n, _ in runs)
        parts.append(f"{names}: commit `{commit}`{when}{how}")
    return "; ".join(parts)


def script_list(bench_dir: Path) -> list[list[str]]:
    """Each ``bench_*.py`` with the first line of its docstring."""
    rows = []
    for path in sorted(bench_dir.glob("bench_*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        first = re.split(
            r"(?<=[.?])\s+(?=[A-Z])", " ".join(doc.split("\n\n")[0].split())
        )[0]
        first = re.sub(r"\s*\(issues? [^)]*\)", "", first)
        rows.append([f"`{path.name}`", first])
    return rows


# ------------------------------------------------------------------- report
WHY = [
    "- **Many sensors.** Beyond 12 sensors the default chooses its DAG on "
    "validation rows carved from the training rows (the cascade's order as a "
    "chain, or routes per example; the "
    "scale table names the choice); AACO and the greedy CMI acquirer choose "
    "among all sensors for each example from the values seen so far. Where a "
    "peer leads on an AFA problem, that freedom is why; the peers pay in speed: "
    "compare their rollouts' rows/s with the DAG's in the speed table.",
    "- **The classifier, not the policy.** Where a method errs less than "
    "the *all sensors* column, its own model is better than the DAG's bank "
    "(the peers' masked neural network, CEGB's cost-penalised boosting): no "
    "policy on that bank can reach it, and a better bank is the remedy.",
    "- **The paper's subsets.** Where a few large subsets suffice, "
    "`n_subsets` (the paper's configuration) can err less than the "
    f"many-sensor default: compare the *DAG (default)* and *{PAPER_LABEL}* "
    "columns.",
    "- **Two fixed-subset hulls.** The hull *chosen on test rows* mixes the "
    "subsets that erred least on the test rows themselves: a bound no user "
    "can reach. The hull *chosen on training rows* picks its subsets on the "
    "out-of-fold training predictions, as a user must, and is read on the "
    "test rows: the honest non-adaptive baseline.",
]


def small_data_note(read: list[tuple]) -> list[str]:
    """A line on each dataset run on several small splits (from its summary)."""
    return [
        f"- **Small data.** {name} has {s['n_train']:,} training rows per split; "
        "a gap there is worth reading with the number of splits in which the "
        "baseline is ahead."
        for name, s, _, stats in read
        if stats.n_splits > 1 and s["n_train"] < 2000
    ]


def read_results(summaries: dict[str, dict], work: Path) -> tuple[list, list[str]]:
    """Each finished dataset's (name, summary, curve, stats); lines on the others."""
    read, failed = [], []
    for name, s in summaries.items():
        if "failed" in s:
            failed.append(f"- {name}: not finished ({s['failed']})")
            continue
        curve = pd.read_csv(work / f"{name}_curve.csv")
        read.append((name, s, curve, split_stats(curve)))
    return read, failed


def ran_methods(read: list[tuple]) -> tuple[str, ...]:
    """run_all's methods that some dataset ran (the peers only with peers)."""
    methods = ("dag", "paper", "dag_paper", "hull", "hull_oof", "cascade")
    methods += ("cegb", "aaco", "greedy")
    return tuple(
        m
        for m in methods
        if any(METHODS[m] in set(st.mean["method"]) for _, _, _, st in read)
    )


def figure_links(read: list[tuple], figs: dict[str, str]) -> list[str]:
    """Markdown images of the curve figures, one per dataset."""
    lines = []
    for stem in figs:
        if stem == "speed":
            continue
        name = stem.removeprefix("afa_")
        lines += [
            f"![{name}: test error against average cost]"
            f"({FIGURES.as_posix()}/{stem}.svg)",
            "",
        ]
    return lines


def not_applicable(summary: dict) -> dict[str, str]:
    """Cells of methods that do not apply to a run_all dataset: the paper's
    ``n_subsets`` configuration up to 12 sensors (the DAG is full there)."""
    return {"paper": "-"} if summary["n_sensors"] <= 12 else {}


def quality_section(read: list[tuple], methods: tuple[str, ...]) -> list[str]:
    """Quality and reach tables of the run_all datasets."""
    quality, reach, spreads = [], [], []
    for name, s, _, stats in read:
        label = dataset_label(name, stats)
        absent = not_applicable(s)
        quality.append(quality_row(label, stats, (*methods, "oracle"), absent))
        reach.append(reach_row(label, stats, methods, absent))
        if stats.n_splits > 1:
            col = _col(0.5)
            spreads.append(
                f"{name}: the DAG's error at 50 % ranges "
                f"{stats.at('dag', col, 'low'):.4f}–{stats.at('dag', col, 'high'):.4f}"
                f" over its {stats.n_splits} splits"
            )
    header = [SHORT[m] for m in methods]
    return [
        "## Quality: test error at 25 / 50 / 75 % of the all-sensor cost",
        "",
        "Each method's error when it may spend that share of the all-sensor "
        "cost on average, read off the lower convex hull of its test points "
        "(mixing two operating points spends and errs in between); `n/a`: no "
        "point that cheap. The lowest of each budget is in bold (the oracle, "
        "which picks per example the cheapest subset whose classifier is "
        "right, is a bound, not a method). *DAG (default)* is the library's "
        "default settings (as the scale table's strategy and bank say); "
        f"*{PAPER_LABEL}* the paper's many-sensor configuration (the unions "
        "of Alg. 2's greedy subsets and all sensors, on its own bank; only "
        "beyond 12 sensors, `-` elsewhere); *paper's policy inputs* the "
        "default's bank with sensor-value policy inputs and 0/1 losses; the "
        "*fixed-subset hulls* mix non-adaptive subsets, chosen on the test "
        "rows themselves (an optimistic bound) or on the out-of-fold training "
        "rows (as a user would choose them; `not run` in results saved before "
        "it was recorded), and the *cascade* buys sensors in one greedy order "
        "until the top-class probability reaches a threshold, all three on "
        "the default's bank; *CEGB* is "
        "LightGBM's cost-efficient boosting with the same per-example cost "
        "accounting; AACO and greedy CMI are the AFA peers "
        "(`_aaco.py`, `_greedy_cmi.py`).",
        "",
        table(["dataset", "all sensors", *header, "oracle"], quality),
        "",
        *([f"{'; '.join(spreads)}.", ""] if spreads else []),
        "Least cost (share of the all-sensor cost) at which each hull's error is "
        "within 0.5 points of the all-sensor classifier's:",
        "",
        table(["dataset", *header], reach),
        "",
    ]


def speed_section(read: list[tuple], afa_speed: str, figs: dict) -> list[str]:
    """Speed ratios of the run_all datasets (and the AFA runs), with the figure."""
    text = [
        "## Speed: ratios to one single-threaded HGB on all features",
        "",
        "The unit is one `HistGradientBoostingClassifier(max_iter=200, "
        "early_stopping=True)` fitted on all features of the same training rows, "
        "with one thread, in the same process just before the DAG "
        "(the machine is shared, so only ratios measured side by side compare). "
        "Default fit: a new estimator's `fit` with the default "
        '`cost_scale="auto"` (the bank, then policies at the scales its '
        "search tries), what a user's first call costs; "
        "fit: bank and one policy; refit: the policies for a new cost scale, "
        "bank reused; sweep: the whole trade-off curve, bank reused; CEGB: its "
        "fits over all its settings; predict: rows/s of one DAG policy against "
        "the HGB's, both single-threaded on the test rows tiled to 20 000; "
        "*(CPU)*: a ratio of the process's CPU seconds to the HGB fit's, where "
        "the run recorded them (a shared machine moves wall seconds more), "
        "else of wall seconds.",
        "",
        table(
            ["dataset", "HGB fit s", "default fit", "DAG fit", "refit", "sweep"]
            + ["CEGB"]
            + ["DAG predict rows/s"],
            [speed_row(name, s) for name, s, _, _ in read],
        ),
        "",
    ]
    if "speed" in figs:
        text += [f"![speed ratios]({FIGURES.as_posix()}/speed.svg)", ""]
    if afa_speed:
        text += [
            "On the AFA problems (default fit: a new estimator's `fit` with "
            'the default `cost_scale="auto"`, the bank and the policies at '
            "the scales its search tries, what a user's first call costs; "
            "fit: the DAG's bank and one policy at the curve's middle scale, "
            "its strategy already chosen by the curve; refit: the policies "
            "for twice that scale, after the curve grew every candidate's "
            "held-out parts; what-if refit: the default fit's policies for "
            "twice its chosen scale, what the app's retrain at a new cost "
            "runs after a first training (its choice grows the held-out "
            "parts the default fit did not); the peers' fit: their masked classifier "
            "and their own models; rows/s of the DAG's "
            "`predict` and of the peers' rollouts, one thread; a fit marked "
            "*(CPU)* is a ratio of CPU seconds, where its run recorded them):",
            "",
            afa_speed,
            "",
        ]
    return text


#: Saved by ``bench_fit_predict_speed.py --save`` beside ``run_all/``.
PREDICT_SPEED_FILE = "predict_speed.json"


def predict_speed_section(path: Path) -> list[str]:
    """Single-threaded batch predict rows/s of the default DAG beside the
    HGB's, as ``bench_fit_predict_speed.py --save`` measured them (issue 54);
    nothing where none is saved."""
    if not path.exists():
        return []
    saved = json.loads(path.read_text())
    rows = [
        [
            name,
            str(s["states"]),
            f"{s['hgb']:,.0f}",
            f"{s['predict']:,.0f}",
            f"{s['predict'] / s['hgb']:.2f}×",
            f"{s['predict_proba']:,.0f}",
            f"{s['trace']:,.0f}",
        ]
        for name, s in saved["datasets"].items()
    ]
    runs = sorted(
        {
            (s["command"], s["commit"], round(s["load"], 1))
            for s in saved["datasets"].values()
        }
    )
    said = "; ".join(f"`{c}` (commit {h}, load {load})" for c, h, load in runs)
    return [
        "### Batch predict, one thread",
        "",
        f"{said}: the default DAG as that script fits it "
        "(`cost_scale=0.05`; pima's buys no sensor there) and the HGB predict "
        "the test rows tiled to 20 000 and shuffled, each with one thread "
        "(the model's and its bank's `n_jobs=1`, one OpenMP/BLAS thread), "
        "timed in CPU seconds of the thread, best of 3, alternated. The "
        "*DAG predict* column of the table above is `run_all.py`'s (the curve's "
        "middle cost scale, rows in file order, wall-clock seconds).",
        "",
        table(
            ["dataset", "states", "HGB predict rows/s", "DAG predict rows/s"]
            + ["ratio", "DAG predict_proba rows/s", "DAG trace rows/s"],
            rows,
        ),
        "",
    ]


def scale_section(read: list[tuple], failed: list[str]) -> list[str]:
    """Sizes, states, absolute seconds and memory of the run_all datasets."""
    subsets = [
        f"{name} over `n_subsets={s['params']['n_subsets']}` greedy subsets"
        for name, s, _, _ in read
        if "n_subsets" in s.get("params", {})
    ]
    return [
        "## Scale",
        "",
        "Rows, sensors, the default DAG's strategy and states (full DAG up to "
        "12 sensors"
        + (f"; {', '.join(subsets)}" if subsets else "")
        + "; beyond, `model.strategy_` at the curve's middle cost scale: "
        "`chain` or `routed`; `grown` in runs from before the default left "
        "it out), its bank, absolute seconds on one "
        "core, the peak memory of each dataset's process and the machine's "
        "load average (1 min) when it finished (above the number of cores, "
        "other work shared them).",
        "",
        table(
            ["dataset", "train / test rows", "sensors", "strategy", "states"]
            + ["bank", "bank fit s", "sweep s", "predict rows/s", "peak MiB"]
            + ["load"],
            [scale_row(name, s) for name, s, _, _ in read],
        ),
        "",
        *(failed + [""] if failed else []),
    ]


RERUN = [
    "## How to rerun",
    "",
    "```bash",
    "python benchmarks/run_all.py --quick  # every dataset and method, short settings",
    "python benchmarks/run_all.py          # the full settings (much longer)",
    "python benchmarks/run_all.py --datasets letter  # one; the others kept",
    "python benchmarks/bench_afa.py --datasets cube digits --seeds 0 1 2 \\",
    "    --out benchmarks/results/afa/NAME  # AFA problems; the report merges them",
    "python benchmarks/render_report.py    # pages and figures from saved results",
    "```",
    "",
    "Results are saved in `benchmarks/results/` (committed: `run_all/` per "
    "dataset a summary JSON with its commit and command, and its curve CSV; "
    "`afa/` the `bench_afa.py` runs, each with a `run.json`). "
    "`render_report.py` rewrites this file, the figures in "
    "`docs/images/benchmarks/` and the generated blocks of README.md and the "
    "user guide from them; `tests/docs/test_generated_figures.py` fails when "
    "a page differs from what they produce. `run_all.py --help` lists the "
    "options (`--no-peers`, `--data-dir`, `--splits`, `--parallel`). The other "
    "scripts each answer one question and print their numbers "
    "(`python benchmarks/<script> --help`):",
    "",
]


#: What issue 55's tables (``bench_bank_kinds.py --visited``) show.
BANK_VISITS_INTRO = (
    "`bench_bank_kinds.py --visited` per sparse bank kind on many-sensor "
    "tables (one sensor per feature, unit costs; letter16: letter's 16 "
    "features as 16 sensors, 26 classes, training rows drawn by seed): "
    "*visited* is the bank's test error at the 8 states the default DAG at "
    "half the all-sensor cost visits most, weighted by the test rows reaching "
    "each, beside one HGB trained on just that subset; *all-sensor* the "
    "bank at every sensor beside one HGB on all features; the DAG, the "
    "cascade and the fixed-subset hull chosen on training rows at 25 / 50 / "
    "75 % of the cost on that bank (hull of test points); the bank's fit "
    "seconds against that HGB's, in the same run. *before*: the "
    "`AutoMaskedBank` the default built before issue 55; *dedicated*: "
    "today's default (`DedicatedMaskedBank`: a cross-fitted all-feature "
    "model blended in at the all-sensor state with an out-of-fold weight "
    "`w`); *both*: that and every row's all-sensor mask in the masked "
    "model's training. *The all-sensor state, fold models alone* "
    "(`--all-sensor`) fits only today's default bank's fold models (no DAG "
    "grown, so cheap enough for a loaded machine) and reads the all-sensor "
    "state with the masked model alone (the bank before issue 55), the "
    "blend of the weight chosen out of fold (now) and the dedicated model "
    "alone."
)


#: Per change, ``change.json`` (``title``, ``what``) and two folders of
#: ``bench_afa.py`` runs, ``before/`` and ``after/``, of the same datasets,
#: seeds and methods, run side by side (speed ratios compare only so).
CHANGES_DIR = "changes"


def _runs_under(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Readings and speed of every bench_afa run under ``folder``."""
    found = [p.parent for p in sorted(folder.rglob("readings.csv"))]
    return (
        pd.concat([pd.read_csv(f / "readings.csv") for f in found]),
        pd.concat([pd.read_csv(f / "speed.csv") for f in found]),
    )


def change_rows(
    before: Path, after: Path, default_fit: bool = False
) -> list[list[str]]:
    """Per dataset run both before and after: the DAG's mean test error at
    10 / 25 / 50 / 75 % of the all-sensor cost and its fit's and 20-point
    sweep's time (median ratio to each run's own HGB), before -> after: in
    CPU seconds where both runs recorded them (``(CPU)``; two runs side by
    side on a shared machine move their wall seconds more), else wall;
    with ``default_fit``, also the default fit's (CPU seconds only)."""
    (rb, sb), (ra, sa) = _runs_under(before), _runs_under(after)
    rows = []
    for name in sorted(set(ra["dataset"]) & set(rb["dataset"])):
        errs = []
        for k in ("e10", "e25", "e50", "e75"):
            b, a = (
                r[(r["dataset"] == name) & (r["method"] == "dag")][k].mean()
                for r in (rb, ra)
            )
            errs.append(f"{b:.4f} → {a:.4f}")
        ratio = {}
        pb, pa = (s[s["dataset"] == name] for s in (sb, sa))
        # CPU seconds where both runs recorded them (see change_rows).
        cpu = all(
            "hgb_fit_cpu_s" in p and p["hgb_fit_cpu_s"].notna().all() for p in (pb, pa)
        )
        unit = "_cpu_s" if cpu else "_s"
        for key in ("dag_fit", "dag_sweep"):
            b, a = ((p[key + unit] / p["hgb_fit" + unit]).median() for p in (pb, pa))
            ratio[key] = f"{b:.1f}× → {a:.1f}×" + (" (CPU)" if cpu else "")
        seeds = ra[ra["dataset"] == name]["seed"].nunique()
        rows.append([f"{name} ({seeds})", *errs, ratio["dag_fit"]])
        rows[-1].append(ratio["dag_sweep"])
        if default_fit:
            rows[-1].append(_change_default_fit(pb, pa))
    return rows


def _change_default_fit(pb: pd.DataFrame, pa: pd.DataFrame) -> str:
    """The default fit's CPU ratio to each run's HGB (median), before ->
    after, or "not timed" where a run did not record it."""
    before, after = (cpu_ratios(p, "dag_default_fit") for p in (pb, pa))
    if before is None or after is None:
        return "not timed"
    return f"{before.median():.1f}× → {after.median():.1f}× (CPU)"


def changes_section(folder: Path) -> list[str]:
    """What each measured change bought: its before/after table (issue 54);
    then the designs measured and not kept (``"kept": false`` in their
    ``change.json``), with the default fit's time."""
    if not folder.exists():
        return []
    found = sorted(p for p in folder.iterdir() if (p / "change.json").exists())
    infos = {p: json.loads((p / "change.json").read_text()) for p in found}
    kept = [p for p in found if infos[p].get("kept", True)]
    tried = [p for p in found if not infos[p].get("kept", True)]
    text = ["### What each change bought", ""]
    text += _change_tables(kept, infos, default_fit=False)
    if tried:
        text += ["### Designs measured and not kept", ""]
        text += _change_tables(tried, infos, default_fit=True)
    return text


def _change_tables(
    changes: list[Path], infos: dict[Path, dict], default_fit: bool
) -> list[str]:
    """Each change's paragraph and before/after table (:func:`change_rows`)."""
    text = []
    for change in changes:
        info = infos[change]
        commits = {
            side: sorted(
                {
                    afa_run_info(p.parent).get("commit", "?")
                    for p in (change / side).rglob("readings.csv")
                }
            )
            for side in ("before", "after")
        }
        text += [
            f"**{info['title']}** ({info['what']}; `bench_afa.py` runs saved in "
            f"`benchmarks/results/{CHANGES_DIR}/{change.name}/`, before at commit "
            f"{', '.join(commits['before'])}, after at {', '.join(commits['after'])}, "
            "run side by side; the DAG's mean test error over the seeds at each "
            "share of the all-sensor cost; fit: the bank and one policy, sweep: "
            "the 20-point curve with the bank reused, each the median ratio to "
            "its run's HGB, in CPU seconds where marked, else wall seconds"
            + (
                '; default fit: a new estimator\'s `fit` with `cost_scale="auto"`'
                if default_fit
                else ""
            )
            + "):",
            "",
            table(
                ["data (seeds)", "10 %", "25 %", "50 %", "75 %", "DAG fit", "sweep"]
                + (["default fit"] if default_fit else []),
                change_rows(change / "before", change / "after", default_fit),
            ),
            "",
        ]
    return text


def saved_tables_section(
    folder: Path, title: str, intro: str, demote: Callable[[str], str]
) -> list[str]:
    """The saved tables of ``folder`` (``*.md``, in name order) under the
    heading ``title`` and ``intro``, each file's text through ``demote``
    (its headings under this section's), or nothing."""
    files = sorted(folder.glob("*.md")) if folder.is_dir() else []
    if not files:
        return []
    text = [title, "", intro, ""]
    for f in files:
        text += [demote(f.read_text().strip()), ""]
    return text


def bank_visits_section(folder: Path) -> list[str]:
    """The saved ``bench_bank_kinds.py --visited`` tables (``*.md`` in
    ``folder``), or nothing."""
    return saved_tables_section(
        folder,
        "## The bank at the states the policies visit (issue 55)",
        BANK_VISITS_INTRO,
        lambda body: re.sub(r"^#{3,} ", "### ", body, flags=re.M),
    )


#: Saved by ``bench_regressor.py --many-sensors`` (each written table, copied
#: into this folder of the results): the regressor's quality and speed on
#: many-sensor regression tables, the default's first, then any design
#: measured beside it with ``--params``.
REGRESSOR_MANY_DIR = "regressor_many"


def regressor_section(folder: Path) -> list[str]:
    """The saved many-sensor regressor tables (``*.md`` in ``folder``, in
    name order) under one heading, each under its own title one level
    down, or nothing."""

    def demote(body: str) -> str:
        body = re.sub(r"^#+ ", "### ", body, count=1)
        return re.sub(r"^#{4,} ", "#### ", body, flags=re.M)

    return saved_tables_section(
        folder,
        "## The regressor beyond 12 sensors",
        "`bench_regressor.py --many-sensors`: the default first; a table "
        "whose command has `--params` measured a design beside it (not the "
        "default).",
        demote,
    )


#: Where issue 53's estimates still miss, and why (under the table).
ESTIMATE_NOTES = [
    "- **Fit time** is the estimate for one thread against the fit's CPU "
    "seconds: the machine was shared (see the load), so wall times say more "
    "of the other work than of the fit. A per-state bank's time and size "
    "come from a probe that fits up to `PROBE_STATES` random states' first "
    "fold on the data (`PROBE_MIN_STATES` where they take over "
    "`PROBE_MORE_SECONDS`; early stopping runs many more rounds at some "
    "states than at others, so a few states' mean swings); a masked bank's "
    "from its first fold. The policies count "
    'one Graph-Reduce per scale `cost_scale="auto"` tries (5.5 on '
    "average), each a fixed cost per state and per action beside the "
    "rows'; a many-sensor fit adds the choice among its strategies and the "
    "grown DAG's rollouts (1.5 times a state's cost). `dag=\"auto\"` with "
    "two classes is estimated as keeping the chain after the routed DAG's "
    "tests; with three or more as judging the chain and the routed DAG "
    "(and a rival bank kind's routed DAG, where the probe's kind choice "
    "leaves one) in two held-out parts on average (a close call takes "
    "four, as digits64 auto's did) and keeping the routed DAG in half the "
    "fits. The masked bank's probe fits a few rows before it times its "
    "first fold: a process's first fit loads the kernels, which the timed "
    "fold would count once per fold.",
    "- **Stored size** counts the bank's fold models at the size the probe "
    "measured, the out-of-fold probabilities and the policies; for many "
    "sensors the shared fold models once, each strategy's growth (every "
    "row at a chain's states, and per row some cells per state of its DAG: "
    "its search's and its rollouts'), the training rows, and the kept "
    "strategy's policies. *Slim* is what the session store keeps over its "
    "cap: since issue 53 a many-sensor model's slim snapshot, as a slim "
    "policy file, keeps its kept bank without the growth and none of the "
    "other strategies' banks (before, slim was as large as full).",
    "- **Where it still misses:** on `bench_afa.py`'s tables the estimate "
    "falls short of fits that keep the routed DAG and of close calls (four "
    "held-out parts): the routed DAG's states, its rollouts and a rival "
    "kind's bank vary more with the data than the model above says (a "
    "rival network bank can take several times a logistic one's time). "
    "Fits that keep the chain are estimated closely.",
    "- The measured columns are one run, two cases at a time on 2 cores; "
    "the estimates were made again beside them on the final commit "
    "(`--measured`).",
]


def estimates_section(path: Path) -> list[str]:
    """Issue 53's estimates against the measurements (``bench_cold_start.py
    --part many --save``), or nothing when not saved."""
    if not path.is_file():
        return []
    saved = json.loads(path.read_text())
    lines = [
        "## Estimates against measurements",
        "",
        "`bench_cold_start.py --part many` (issue 53; "
        f"{saved['command']}, commit `{saved['commit']}`): the fit-time "
        "estimate (`estimates.estimate_fit_seconds_for` with its "
        "`probe_fit`) against the fit's CPU seconds on one thread, and the "
        "stored-size estimate (`ui.footprint.model_footprint`) against the "
        "session store's bytes of the fitted model, with and without its "
        "training-only parts (slim); the target is within 1.5×. *ref* is one "
        "fixed HistGradientBoosting fit, wall / CPU seconds, in the same "
        "process (the machine's load).",
        "",
        f"*before*: the estimates at `{saved.get('before_commit', 'dab5034')}`, "
        "before this table's changes, on the same measurements.",
        "",
        "| case | states | est. s | before | CPU s | ratio | wall s | ref "
        "| est. MB | before | MB | ratio | slim est. | slim MB | ratio "
        "| skops MB | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in saved["rows"]:
        lines.append(_estimate_row(r))
    return [*lines, "", *ESTIMATE_NOTES, ""]


def _estimate_row(r: dict) -> str:
    """One case of the estimate table; a measurement not taken reads "–"."""

    def num(value: float | None, digits: int = 1, scale: float = 1.0) -> str:
        return "–" if value is None else f"{value / scale:.{digits}f}"

    def ratio(a: float | None, b: float | None) -> str:
        return "–" if a is None or b is None else f"{a / b:.2f}"

    ref = r.get("reference") or []
    wall = sum(w for w, _ in ref) / len(ref) if ref else None
    cpu = sum(c for _, c in ref) / len(ref) if ref else None
    mb = 1e6
    cells = [
        r["case"],
        str(r["states"]),
        num(r["estimate"]),
        num(r.get("estimate_before")),
        num(r["cpu"]),
        ratio(r["estimate"], r["cpu"]),
        num(r.get("fit"), 0),
        "–" if wall is None else f"{wall:.1f} / {cpu:.1f}",
        num(r.get("size_estimate"), 2, mb),
        num(r.get("size_estimate_before"), 2, mb),
        num(r.get("size"), 2, mb),
        ratio(r.get("size_estimate"), r.get("size")),
        num(r.get("slim_estimate"), 2, mb),
        num(r.get("slim"), 2, mb),
        ratio(r.get("slim_estimate"), r.get("slim")),
        num(r.get("skops"), 2, mb),
        num(r.get("load"), 0),
    ]
    return "| " + " | ".join(cells) + " |"


def report_text(
    summaries: dict[str, dict],
    work: Path,
    afa_dir: Path,
    estimates: Path | None = None,
) -> tuple[str, dict]:
    """BENCHMARKS.md's text and its figures (stem -> SVG) from saved results
    (``estimates``: issue 53's saved estimate table)."""
    read, failed = read_results(summaries, work)
    methods = ran_methods(read)
    lost = [x for name, _, _, st in read for x in losses(dataset_label(name, st), st)]
    figs = report_figures(read, afa_dir)
    afa_quality, afa_speed, afa_lost, floors = afa_sections(afa_dir)
    text = [
        "# Benchmarks",
        "",
        "Generated by `python benchmarks/render_report.py` from the results "
        "saved in `benchmarks/results/`: "
        f"{provenance(summaries)}. Do not edit by hand: rerun it "
        "(*How to rerun* below).",
        "",
        machine_line([summary for _, summary, _, _ in read]),
        "",
        *quality_section(read, methods),
    ]
    if afa_quality:
        text += [
            "### Many sensors, one at a time: the AFA problems",
            "",
            "`bench_afa.py` on AFABench's synthetic CUBE problems and the 8×8 "
            "digits (a sensor per column, unit costs; cube_nm6: CUBE-NM as 6 "
            "sensors) and small tables with a sensor per feature (wine, breast "
            "cancer; spam_400 and dna_400: 400 training rows drawn by seed, "
            "the rest as test), the same train/test rows for every method; "
            "mean over the seeds. *DAG (default)* is the library's default; "
            "both fixed-subset hulls (subsets chosen on the test rows, or on "
            "the out-of-fold training rows) and the cascade are read on its "
            f"bank; *{PAPER_LABEL}* is the paper's configuration on its own "
            "bank.",
            "",
            afa_quality,
            "",
        ]
    text += [
        "## Curves",
        "",
        "Each method's lower hull of test error against average cost on one "
        "test split (the first seed where there are several), on the same axes; "
        "grey dots are the fixed subsets, the black square all sensors.",
        "",
        *figure_links(read, figs),
        *speed_section(read, afa_speed, figs),
        *predict_speed_section(work.parent / PREDICT_SPEED_FILE),
        *changes_section(afa_dir.parent / CHANGES_DIR),
        *scale_section(read, failed),
        *bank_visits_section(afa_dir.parent / "bank_visits"),
        *regressor_section(work.parent / REGRESSOR_MANY_DIR),
        *([] if estimates is None else estimates_section(estimates)),
        "## Where we lose, and why",
        "",
        "Every budget at which a method's error is more than 0.5 points below "
        "the default DAG's (generated from the tables above):",
        "",
        *loss_lines(lost),
        *loss_lines(afa_lost, digits=3),
        *([] if lost or afa_lost else ["- none"]),
        "",
        "Why:",
        "",
        *WHY,
        *small_data_note(read),
        *floors,
        "",
        *RERUN,
        table(["script", "what it measures"], script_list(Path(__file__).parent)),
    ]
    return "\n".join(text) + "\n", figs


def write_report(summaries: dict[str, dict], args, total_s: float) -> None:
    """Write ``args.out`` (BENCHMARKS.md) and its figures beside it
    (``FIGURES`` under the report's folder)."""
    out = Path(args.out)
    text, figs = report_text(summaries, Path(args.work_dir), Path(args.afa_dir))
    out.write_text(text)
    if not getattr(args, "no_figures", False):
        folder = out.parent / FIGURES
        folder.mkdir(parents=True, exist_ok=True)
        for stem, svg in figs.items():
            (folder / f"{stem}.svg").write_text(svg)


def summaries_from(work: Path, names: list[str]) -> dict[str, dict]:
    """The saved summary of each dataset, or why there is none."""
    out = {}
    for name in names:
        path = work / f"{name}.json"
        out[name] = (
            json.loads(path.read_text())
            if path.exists()
            else {"name": name, "failed": "no saved result"}
        )
    return out
