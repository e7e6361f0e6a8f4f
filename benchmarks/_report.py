"""BENCHMARKS.md and its figures from the per-dataset results of run_all.py.

Every method's error at a budget is read off the lower convex hull of its test
points (a random mix of two policies spends and errs in between), flat past its
lowest error: the same rule for the DAG, the fixed-subset hull, the confidence
cascade and CEGB. A dataset run on several seeded splits (a ``seed`` column in
its curve CSV) is read split by split, and its numbers are averaged over them.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from budgetdag_core.tradeoff import lower_convex_hull

FRACTIONS = (0.25, 0.5, 0.75)
TOLERANCE = 0.005
#: Error difference (0.3 points) within which the DAG ties a baseline (issue 14).
TIE = 0.003
METHODS = {
    "dag": "DAG (Graph-Reduce)",
    "dag_paper": "DAG, paper configuration (sensor inputs, 0/1 losses)",
    "hull": "fixed-subset hull",
    "cascade": "confidence cascade",
    "cegb": "LightGBM CEGB",
    "aaco": "AACO (k-NN oracle)",
    "greedy": "greedy CMI acquirer",
    "oracle": "oracle (unreachable)",
}
COLOURS = {
    "dag": "#1f77b4",
    "dag_paper": "#17becf",
    "hull": "#7f7f7f",
    "cascade": "#ff7f0e",
    "cegb": "#d62728",
    "aaco": "#9467bd",
    "greedy": "#8c564b",
    "oracle": "#2ca02c",
}


def hull_of(part: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    c, e = part["avg_cost"].to_numpy(float), part["error"].to_numpy(float)
    idx = lower_convex_hull(c, e)
    return c[idx], e[idx]


def error_at(hc: np.ndarray, he: np.ndarray, budget: float) -> float:
    """Hull error at ``budget``; NaN if the method cannot spend that little."""
    if budget < hc[0] - 1e-12:
        return float("nan")
    return float(np.interp(budget, hc, he))


def cost_to_reach(hc: np.ndarray, he: np.ndarray, target: float) -> float:
    """Least average cost at which the hull's error is at most ``target``."""
    if he[0] <= target:
        return float(hc[0])
    for i in range(1, len(hc)):
        if he[i] <= target:
            # linear between vertex i-1 and i
            t = (he[i - 1] - target) / (he[i - 1] - he[i])
            return float(hc[i - 1] + t * (hc[i] - hc[i - 1]))
    return float("nan")


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
    ``seed`` column: a fixed split or results saved before splits were seeded)."""
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
    """``name``, or ``"pima (mean of 5 seeded splits)"`` for several splits."""
    if stats.n_splits == 1:
        return name
    return f"{name} (mean of {stats.n_splits} seeded splits)"


def _cost_fraction(value: float) -> str:
    """A fraction of the all-sensor cost in %, to one decimal (a whole percent
    would show 50.1 % as "50%")."""
    return f"{value:.1%}"


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return "n/a" if not np.isfinite(v) else f"{v:.4f}"
    return str(v)


def verdict(name: str, table: pd.DataFrame) -> str:
    """One sentence: the DAG against the hull, the cascade, CEGB and the AFA
    peers at 25/50/75 % cost."""
    t = table.set_index("method")
    parts = []
    for other in ("hull", "cascade", "cegb", "aaco", "greedy"):
        label = METHODS[other]
        if label not in t.index:
            continue
        diffs = []
        for f in FRACTIONS:
            col = f"error @ {f:.0%} cost"
            d = t.loc[METHODS["dag"], col] - t.loc[label, col]
            if np.isfinite(d):
                diffs.append(f"{d * 100:+.1f}")
            else:
                diffs.append("n/a")
        parts.append(f"vs {label} {'/'.join(diffs)} pt")
    return f"- **{name}**: DAG error minus other at 25/50/75 % cost: " + "; ".join(
        parts
    )


def _wall(s: dict) -> str:
    if "wall_s" in s:
        return f"{s['wall_s']:.0f} s"
    return "not measured (run as a separate `--one` process)"


def markdown_table(frame: pd.DataFrame) -> str:
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in frame.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if c.startswith("cost to") and isinstance(v, float) and np.isfinite(v):
                cells.append(_cost_fraction(v))
            else:
                cells.append(_fmt(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def figure(curve: pd.DataFrame, title: str):
    import plotly.graph_objects as go

    fig = go.Figure()
    fixed = curve[curve["method"] == "fixed"]
    fig.add_trace(
        go.Scatter(
            x=fixed["avg_cost"],
            y=fixed["error"],
            mode="markers",
            name="fixed subsets",
            marker={"color": "#bbbbbb", "size": 6},
        )
    )
    for method, label in METHODS.items():
        part = curve[curve["method"] == method]
        if part.empty:
            continue
        hc, he = hull_of(part)
        fig.add_trace(
            go.Scatter(
                x=hc,
                y=he,
                mode="lines",
                name=label + (" (hull of points)" if method != "hull" else ""),
                line={
                    "color": COLOURS[method],
                    "dash": "dot" if method in ("oracle", "hull") else "solid",
                },
            )
        )
        if method in ("dag", "dag_paper", "cascade", "cegb", "aaco", "greedy"):
            fig.add_trace(
                go.Scatter(
                    x=part["avg_cost"],
                    y=part["error"],
                    mode="markers",
                    showlegend=False,
                    marker={"color": COLOURS[method], "size": 6, "opacity": 0.7},
                )
            )
    alls = curve[curve["method"] == "all_sensors"]
    fig.add_trace(
        go.Scatter(
            x=alls["avg_cost"],
            y=alls["error"],
            mode="markers",
            name="all sensors",
            marker={"color": "black", "symbol": "star", "size": 12},
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title="average acquisition cost per test example",
        yaxis_title="test error",
        template="plotly_white",
        width=760,
        height=460,
        margin={"l": 60, "r": 20, "t": 50, "b": 50},
        legend={"x": 0.98, "xanchor": "right", "y": 0.98},
    )
    return fig


def render_pngs(figs: dict[str, object], out_dir: Path) -> list[str]:
    """Write figures as PNG: kaleido if present, else HTML + headless Chromium."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        import kaleido  # noqa: F401

        for name, fig in figs.items():
            fig.write_image(out_dir / f"{name}.png")
            written.append(name)
        return written
    except ImportError:
        pass
    from figure_gallery import ARGS, CHROMIUM  # reuse the gallery's browser setup
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 780, "height": 480})
        for name, fig in figs.items():
            html = Path(tmp) / f"{name}.html"
            fig.write_html(html, include_plotlyjs=True, full_html=True)
            page.goto(html.as_uri())
            page.wait_for_selector(".main-svg")
            page.wait_for_timeout(300)
            page.locator(".plot-container").first.screenshot(
                path=str(out_dir / f"{name}.png")
            )
            written.append(name)
        browser.close()
    return written


def current_commit() -> str:
    """Short hash of this checkout's HEAD (with "+changes" when code is modified)."""
    try:
        run = functools.partial(
            subprocess.run, capture_output=True, text=True, cwd=Path(__file__).parent
        )
        commit = run(["git", "rev-parse", "--short", "HEAD"]).stdout.strip()
        # The run's own outputs do not make the code that ran "changed".
        outputs = ["BENCHMARKS.md", "benchmarks/results", "benchmarks/figures"]
        dirty = run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ":/"]
            + [f":(top,exclude){path}" for path in outputs]
        ).stdout
    except OSError:
        return "unknown"
    return f"{commit}+changes" if dirty.strip() else commit or "unknown"


def machine(commit: str | None = None) -> list[str]:
    import lightgbm
    import sklearn

    import budgetdag_core

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        mem = f"{mem_kb / 1024**2:.1f} GiB"
    except (OSError, StopIteration):
        mem = "unknown"
    commit = commit or current_commit()
    return [
        f"- CPU: {cpu}; {os.cpu_count()} cores (`nproc`); load average (1 min) "
        f"when the report was written: {os.getloadavg()[0]:.1f} (each dataset's "
        "section gives the one at its end)",
        f"- memory: {mem}",
        f"- Python {platform.python_version()}, numpy {np.__version__}, pandas "
        f"{pd.__version__}, scikit-learn {sklearn.__version__}, lightgbm "
        f"{lightgbm.__version__}, budgetdag_core {budgetdag_core.__version__} "
        f"(commit {commit})",
    ]


def _cell(column: str, value: float) -> str:
    """One number as the tables show it (cost fractions in %, points whole)."""
    if np.isfinite(value) and column.startswith("cost to"):
        return _cost_fraction(value)
    if np.isfinite(value) and column == "points":
        return f"{value:.0f}"
    return _fmt(float(value))


def spread_table(stats: SplitStats) -> pd.DataFrame:
    """The mean of each number over the splits with its min-max range, as text.

    A number that is n/a in some splits only says in how many.
    """
    n = stats.n_splits
    out = stats.mean.copy().astype(object)
    for col in out.columns[1:]:
        for i in range(len(out)):
            mean, lo, hi = (
                float(f.at[i, col]) for f in (stats.mean, stats.low, stats.high)
            )
            missing = int(stats.n_missing.at[i, col])
            if col == "points":
                text = _cell(col, lo) if lo == hi else f"{lo:.0f}–{hi:.0f}"
            elif 0 < missing < n:
                text = f"n/a ({missing} of {n} splits n/a)"
            elif missing:
                text = "n/a"
            else:
                text = f"{_cell(col, mean)} ({_cell(col, lo)}–{_cell(col, hi)})"
            out.at[i, col] = text
    return out


def per_split_table(stats: SplitStats) -> pd.DataFrame:
    """Every split's own table, one block of rows per split seed."""
    return pd.concat(
        [
            t.assign(**{"split seed": seed})
            for seed, t in zip(stats.seeds, stats.tables)
        ],
        ignore_index=True,
    )[["split seed", *stats.tables[0].columns]]


def all_sensor_text(stats: SplitStats) -> str:
    """The all-sensor cost and test error (mean, range and per split)."""
    cost = f"cost {np.mean(stats.all_costs):.4g}"
    if stats.n_splits == 1:
        return f"All sensors: {cost}, test error {stats.all_errors[0]:.4f}."
    errs = stats.all_errors
    each = ", ".join(
        f"seed {k} {e:.4f}" for k, e in zip(stats.seeds, errs, strict=True)
    )
    return (
        f"All sensors: {cost}, test error {np.mean(errs):.4f} (mean of "
        f"{stats.n_splits} splits; {min(errs):.4f}–{max(errs):.4f}; {each})."
    )


def acceptance_row(label: str, table: pd.DataFrame) -> str:
    """DAG, cascade and hull at 25/50/75 % and whether the DAG is at or below both.

    Ties within ``TIE`` (0.3 points) count as at or below, as issue 14 asks.
    """
    t = table.set_index("method")
    dag, others = METHODS["dag"], (METHODS["cascade"], METHODS["hull"])
    if dag not in t.index or any(o not in t.index for o in others):
        return f"| {label} | | | | not measured |"
    cells, losses = [], []
    for f in FRACTIONS:
        col = f"error @ {f:.0%} cost"
        cells.append(" / ".join(_fmt(t.at[m, col]) for m in (dag, *others)))
        for other in others:
            gap = t.at[dag, col] - t.at[other, col]
            # NaN (n/a) is not a win either; 1e-12 absorbs float rounding.
            if not gap <= TIE + 1e-12:
                losses.append(f"{f:.0%} vs {other} {gap * 100:+.2f} pt")
    return (
        f"| {label} | "
        + " | ".join(cells)
        + " | "
        + ("yes" if not losses else "no: " + "; ".join(losses))
        + " |"
    )


def headline_row(label: str, stats: SplitStats, seconds: dict) -> str:
    """The Summary table's row: all-sensor error and every method at 50 %."""
    at50 = stats.mean.set_index("method")["error @ 50% cost"]
    return (
        f"| {label} | {np.mean(stats.all_errors):.4f} | "
        + " | ".join(
            _fmt(at50.get(METHODS[m], float("nan")))
            for m in ("dag", "dag_paper", "hull", "cascade", "cegb", "aaco", "greedy")
        )
        + f" | {seconds['fit (bank + one policy)']:.0f} s / "
        f"{seconds['sweep (bank reused)']:.0f} s |"
    )


def dataset_section(name: str, s: dict, stats: SplitStats) -> str:
    """A dataset's section: settings, notes, tables, figure, timings."""
    notes = "\n".join(f"- {n}" for n in s["notes"])
    if stats.n_splits == 1:
        tables = markdown_table(stats.tables[0])
        timing_head = "| timing | seconds |"
    else:
        tables = (
            f"Mean over the {stats.n_splits} splits (min–max in brackets); each "
            "split's numbers are read off its own hulls:\n\n"
            f"{markdown_table(spread_table(stats))}\n\n"
            f"Each split:\n\n{markdown_table(per_split_table(stats))}\n\n"
            f"The figure shows split seed {stats.seeds[0]}."
        )
        timing_head = f"| timing (mean of {stats.n_splits} splits) | seconds |"
    timing = "\n".join(f"| {k} | {v:.1f} |" for k, v in s["seconds"].items())
    load = (
        f"; load average (1 min) at its end: {s['load_average_1m']:.1f}"
        if "load_average_1m" in s
        else ""
    )
    if "commit" in s:
        load += f"; commit `{s['commit']}`"
    return (
        f"## {name}\n\n{s['description']} {s['n_train']} training / "
        f"{s['n_test']} test rows, {s['n_sensors']} sensors, "
        f"{s['n_states']} DAG states, bank `{s['bank_kind']}`, "
        f"{s['n_points']} sweep points. Settings: `{json.dumps(s['params'])}`.\n\n"
        f"{notes}\n\n{all_sensor_text(stats)}\n\n"
        f"{tables}\n\n![{name}](benchmarks/figures/{name}.png)\n\n"
        f"{timing_head}\n|---|---|\n{timing}\n\n"
        f"Prediction: {s['predict_rows_per_s']:,.0f} rows/s (one DAG policy, "
        f"test rows tiled to 20 000). Peak memory of the dataset's process: "
        f"{s['peak_mib']:.0f} MiB. Wall time: {_wall(s)}{load}.\n"
    )


def _describe_run(run: dict) -> str:
    what = (
        f"`--datasets {' '.join(run['datasets'])}`"
        if run.get("datasets")
        else "an earlier run"
    )
    return (
        f"{what} on commit {run.get('commit') or 'unknown'}, "
        f"{run.get('total_s', 0) / 60:.1f} min"
    )


def provenance(args, total_s: float) -> str:
    """Where the report's numbers come from: this run, or the saved runs behind it."""
    if not getattr(args, "report_only", False):
        return f", {total_s / 60:.1f} min in total"
    runs = getattr(args, "runs", None) or []
    if any(r.get("datasets") for r in runs):
        return ", report rewritten from the saved results of " + "; ".join(
            map(_describe_run, runs)
        )
    minutes = getattr(args, "run_minutes", None)
    took = f", which took {minutes:.1f} min in total" if minutes else ""
    return ", report rewritten from the saved results of the last run" + took


def write_report(summaries: dict[str, dict], args, total_s: float) -> None:
    out = Path(args.out)
    fig_dir = out.parent / "benchmarks" / "figures"
    sections, figs, headline, verdicts, accepted = [], {}, [], [], []
    for name, s in summaries.items():
        if "failed" in s:
            sections.append(
                f"## {name}\n\nNot finished: {s['failed']} (wall time {_wall(s)}).\n"
            )
            headline.append(f"| {name} | failed |" + " |" * 8)
            continue
        curve = pd.read_csv(args.work_dir / f"{name}_curve.csv")
        stats = split_stats(curve)
        label = dataset_label(name, stats)
        first = split_curves(curve)[0][1]
        where = "" if stats.n_splits == 1 else f", split seed {stats.seeds[0]}"
        figs[name] = figure(first, f"{name}{where}: test error vs average cost")
        verdicts.append(verdict(label, stats.mean))
        accepted.append(acceptance_row(label, stats.mean))
        headline.append(headline_row(label, stats, s["seconds"]))
        sections.append(dataset_section(name, s, stats))
    rendered = render_pngs(figs, fig_dir) if figs else []
    missing = sorted(set(figs) - set(rendered))
    mode = "--quick" if args.quick else "full"
    cmd = " ".join(["python benchmarks/run_all.py", *sys.argv[1:]])
    body = [
        "# Benchmarks",
        "",
        "Generated by `python benchmarks/run_all.py` (this run: "
        f"`{cmd}`, mode {mode}{provenance(args, total_s)}). "
        "Do not edit by hand: rerun the command.",
        "",
        "## Machine and versions",
        "",
        *machine(getattr(args, "commit", None)),
        "",
        "## How to read the tables",
        "",
        "- All numbers are on the test split. Costs are in the spec's units "
        "(sum of the costs of the sensors an example acquires), averaged over "
        "test examples.",
        "- *error @ x% cost*: the method's error when it may spend x% of the "
        "all-sensor cost on average, read off the lower convex hull of its "
        "points (mixing two operating points at random spends and errs in "
        "between), flat past its lowest error. The same rule for every "
        "method; `n/a` means the method has no point that cheap.",
        "- *cost to all-sensor error + 0.5 pt*: least average cost (fraction "
        "of the all-sensor cost) at which the hull's error is at most the "
        "all-sensor classifier's error + 0.005; `n/a`: never.",
        "- A dataset labelled *mean of N seeded splits* ran on N random "
        "stratified 75/25 train/test splits (seeds 0 to N-1), each with its own "
        "choices made on its training rows; every number is read off that "
        "split's own hulls, then averaged. Its section gives the min–max range "
        "and each split's numbers.",
        "- The fixed-subset hull mixes non-adaptive subsets (every example "
        "pays for the whole subset), classified by the same bank as the DAG. "
        "The oracle picks, per test example, the cheapest subset whose "
        "classifier is right: a bound nobody reaches.",
        "- The confidence cascade (what an engineer builds first) uses the same "
        "bank: it buys the sensors in one order, chosen greedily on the bank's "
        "out-of-fold error drop per unit of cost, and stops an example once the "
        "current classifier's calibrated top-class probability reaches a "
        "threshold; one point per threshold (quantiles of the out-of-fold "
        "confidences, plus 0 and 1), chosen on the training rows.",
        "- LightGBM CEGB: `cegb_penalty_feature_lazy` = sensor costs (in units "
        "of the mean sensor cost; multi-column sensors both as full cost per "
        "column and split over the columns, all points kept), swept over "
        "`cegb_tradeoff`, 300 rounds at most with early stopping on a quarter "
        "of the training rows. Cost accounting as for the DAG: a feature tested "
        "on an example's path in any tree counts once, features map to sensors, "
        "the example pays each touched sensor once.",
        "- AFA peers (`benchmarks/_aaco.py`, `_greedy_cmi.py`; issue 30): AACO "
        "(Valancius et al., ICML 2024; k = 5 nearest training rows, 100 random "
        "candidate masks, AFABench's defaults) and a greedy acquirer of the "
        "largest estimated conditional mutual information per unit cost (the "
        "idea of GDFS and DIME), both with one masked classifier trained on "
        "random sensor masks. Their points: every row buys t sensors (t = 0, 1, "
        "...), AACO's own stopping rule, and the greedy acquirer's stopping "
        "thresholds; rollouts stop at 80 % of the all-sensor cost beyond 20 "
        "sensors.",
        "",
        "## Summary: error at 50 % of the all-sensor cost",
        "",
        "| dataset | all-sensor error | DAG | DAG, paper config | fixed-subset hull "
        "| confidence cascade | CEGB | AACO | greedy CMI | DAG fit / sweep |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *headline,
        "",
        "## Discussion",
        "",
        "Differences in percentage points (negative: the DAG errs less):",
        "",
        *verdicts,
        "",
        "The DAG against the confidence cascade and the fixed-subset hull: test "
        "error of DAG / cascade / hull at 25, 50 and 75 % of the all-sensor cost, "
        "and whether the DAG is at or below both everywhere (ties within "
        f"{TIE * 100:.1f} points count):",
        "",
        "| dataset | 25 % | 50 % | 75 % | DAG at or below both |",
        "|---|---|---|---|---|",
        *accepted,
        "",
        "DISCUSSION_PLACEHOLDER",
        "",
        *sections,
    ]
    if missing:
        body.append(f"Figures not rendered: {', '.join(missing)}.")
    text = "\n".join(body) + "\n"
    # Hand-written reading of the last full run, kept next to the script.
    discussion = Path(__file__).parent / "discussion.md"
    if discussion.exists():
        text = text.replace("DISCUSSION_PLACEHOLDER", discussion.read_text().strip())
    else:
        text = text.replace(
            "DISCUSSION_PLACEHOLDER",
            "(no discussion written for this run: see the tables)",
        )
    out.write_text(text)
