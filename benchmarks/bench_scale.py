"""Fit time and memory at scale: 130 000 x 50, every feature a sensor.

A MiniBooNE-sized table (issues 3 and 17).

A seeded ``make_classification`` table of 130 000 rows x 50 features (MiniBooNE's
size; the real file is not obtainable here), 50 single-column unit-cost sensors,
``BudgetDAGClassifier`` with every setting default except ``n_subsets=8`` (the
issue's acceptance run) and the benchmark's ``cost_scale``. Beside it, in the same
run, one single-threaded ``HistGradientBoostingClassifier(max_iter=200,
early_stopping=True)`` on all features: the fit time is reported as a ratio to
that model's, the test error as a difference from its error. Memory is the peak
resident memory of the whole process tree (this process + joblib workers,
sampled every 0.1 s) minus the resident memory just before the fit.

Every run rewrites ``benchmarks/out/scale.md`` from the measured
numbers (``--no-write`` only prints). Run from the repository root so the local
package is used::

    python -m benchmarks.bench_scale [--rows 130000] [--n-jobs 1]
        [--cost-scale 0.002] [--more-scales 0.0005 ...]

``--rows`` below 130 000 takes a seeded stratified subsample of the same table
(the file says so). ``--bank-256`` instead times the worst case of t=8, a bank
over 8 disjoint subsets (2^8 = 256 states), and writes nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
from sklearn.datasets import make_classification
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from budgetdag_core import BudgetDAGClassifier, SensorDAG, SensorSpec
from budgetdag_core.bank import ClassifierBank

RESULTS = Path(__file__).parent / "out" / "scale.md"
#: Where a run on a generated table larger than the 130 000 rows is written.
LARGE_RESULTS = Path(__file__).parent / "out" / "scale_large.md"
FULL_ROWS = 130_000


class PeakRSS:
    """Peak summed RSS of this process and its children, sampled in a thread."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval, self.peak, self._stop = interval, 0, threading.Event()
        self.proc = psutil.Process()

    def rss(self) -> int:
        total = 0
        for p in [self.proc, *self.proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss())
            time.sleep(self.interval)

    def __enter__(self) -> PeakRSS:
        self.start = self.rss()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.thread.join()

    @property
    def growth(self) -> int:
        """Peak minus the resident memory when the block started."""
        return max(self.peak - self.start, 0)


def make_table(rows: int, features: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The seeded 130 000-row table, or a seeded stratified subsample of it; above
    130 000 rows, a table of that many rows drawn the same way (same seed)."""
    X, y = make_classification(
        n_samples=max(rows, FULL_ROWS),
        n_features=features,
        n_informative=20,
        n_redundant=10,
        weights=[0.72],  # MiniBooNE: 28% signal
        flip_y=0.02,
        random_state=0,
    )
    if rows < FULL_ROWS:
        X, _, y, _ = train_test_split(X, y, train_size=rows, stratify=y, random_state=0)
    cols = [f"f{i:02d}" for i in range(features)]
    return pd.DataFrame(X, columns=cols), y


def baseline(X_tr, y_tr, X_te, y_te) -> tuple[float, float]:
    """Fit seconds and test error of one single-threaded boosting model."""
    hgb = HistGradientBoostingClassifier(
        max_iter=200, early_stopping=True, random_state=0
    )
    with threadpool_limits(limits=1):
        start = time.perf_counter()
        hgb.fit(X_tr, y_tr)
        secs = time.perf_counter() - start
        err = float((hgb.predict(X_te) != y_te).mean())
    return secs, err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=FULL_ROWS)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--subsets", type=int, default=8)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--cost-scale", type=float, default=0.002)
    parser.add_argument(
        "--more-scales",
        type=float,
        nargs="*",
        default=[0.0005],
        help="further cost_scales, policies refitted on the same bank",
    )
    parser.add_argument("--no-write", action="store_true", help="only print")
    parser.add_argument(
        "--bank-256",
        action="store_true",
        help="instead: time only an LDA bank over 8 disjoint subsets (256 states)",
    )
    args = parser.parse_args()
    if args.rows < 1:
        raise ValueError(f"--rows must be at least 1, got {args.rows}.")

    X, y = make_table(args.rows, args.features)
    cols = list(X.columns)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.2, stratify=y, random_state=0
    )
    if args.bank_256:
        bank_256(X_tr, y_tr, cols, args)
        return

    stages: dict[str, list[float]] = {}

    def progress(stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        stages.setdefault(stage, [now, now])[1] = now

    command = (
        "python -m benchmarks.bench_scale"
        + (f" --rows {args.rows}" if args.rows != FULL_ROWS else "")
        + (f" --n-jobs {args.n_jobs}" if args.n_jobs != 1 else "")
        + f" --cost-scale {args.cost_scale:g}"
        + (
            " --more-scales " + " ".join(f"{c:g}" for c in args.more_scales)
            if args.more_scales
            else ""
        )
    )
    print(
        f"train {len(X_tr)} x {args.features} (every feature a sensor), test "
        f"{len(X_te)}; n_subsets={args.subsets}, other settings default, "
        f"cost_scale={args.cost_scale}, n_jobs={args.n_jobs}"
    )
    hgb_s, hgb_err = baseline(X_tr, y_tr, X_te, y_te)
    print(
        f"one HGB (single-threaded, all features): {hgb_s:.1f} s, error {hgb_err:.4f}"
    )
    model = BudgetDAGClassifier(
        SensorSpec.per_column(cols, cost=1.0),
        cost_scale=args.cost_scale,
        n_subsets=args.subsets,
        random_state=0,
        n_jobs=args.n_jobs,
    )
    load_before = os.getloadavg()[0]
    with PeakRSS() as peak:
        start = time.perf_counter()
        model.fit(X_tr, y_tr, progress=progress)
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        result = model.evaluate(X_te, y_te)
        eval_s = time.perf_counter() - start
    load_after = os.getloadavg()[0]
    more = []
    for scale in args.more_scales:
        start = time.perf_counter()
        other = model.refit_policies(X_tr, y_tr, scale)
        refit_s = time.perf_counter() - start
        res = other.evaluate(X_te, y_te)
        more.append((scale, refit_s, res["error"], res["avg_sensors"]))
    sel = model.subset_selection_
    first = min(v[0] for v in stages.values())
    prev, stage_s = first, {}
    for stage in ("subsets", "bank", "policies"):
        if stage in stages:
            stage_s[stage] = stages[stage][1] - prev
            prev = stages[stage][1]
    numbers = {
        "command": command,
        "train": len(X_tr),
        "test": len(X_te),
        "subset_sizes": [len(s) for s in sel.subsets],
        "reward": sel.reward,
        "reward_rows": sel.n_rows,
        "n_states": model.sensor_dag_.n_states,
        "bank_kind": type(model.bank_).__name__,
        "stages": stage_s,
        "fit_s": fit_s,
        "eval_s": eval_s,
        "hgb_s": hgb_s,
        "hgb_err": hgb_err,
        "error": result["error"],
        "avg_sensors": result["avg_sensors"],
        "growth_gib": peak.growth / 2**30,
        "peak_gib": peak.peak / 2**30,
        "load": (load_before, load_after),
        "more": more,
        "args": args,
    }
    report = render(numbers)
    print(report)
    self_max = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"(ru_maxrss of this process: {self_max:.2f} GiB)")
    if not args.no_write:
        out = LARGE_RESULTS if args.rows > FULL_ROWS else RESULTS
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report)
        print(f"wrote {out}")


def render(m: dict) -> str:
    """The results file's markdown from one run's measured numbers."""
    args = m["args"]
    if args.rows < FULL_ROWS:
        sample = (
            f"a seeded stratified subsample of {args.rows} of its {FULL_ROWS} rows "
            "(the full table did not fit in the time available on the shared machine)"
        )
    elif args.rows > FULL_ROWS:
        sample = f"{args.rows} rows drawn with the same settings and seed"
    else:
        sample = f"all {FULL_ROWS} rows"
    stages = ", ".join(f"{k} {v:.1f} s" for k, v in m["stages"].items())
    large = args.rows > FULL_ROWS

    def bound(text: str) -> str:
        # Issue 17 bounds the 130 000-row run; a larger one must only fit.
        return "(not bounded at this size)" if large else f"(acceptance: {text})"

    ratio = m["fit_s"] / m["hgb_s"]
    gap = m["error"] - m["hgb_err"]
    lines = [
        "# Many sensors: measured run (issues 3 and 17)",
        "",
        "Written by `benchmarks/bench_scale.py` from the numbers it measured;",
        "do not edit by hand, rerun the command instead. Wall times come from the",
        "2-core project machine shared with other sessions (1-minute load",
        f"average {m['load'][0]:.1f} before the fit, {m['load'][1]:.1f} after), so",
        "they are pessimistic; the ratio to the boosting model, fitted in the",
        "same run, is the number to compare.",
        "",
        f"Command: `{m['command']}`",
        "",
        "Table: seeded `make_classification` (50 features, 20 informative), "
        f"{sample}; {m['train']} train / {m['test']} test rows, 50 single-column "
        "sensors of cost 1.",
        f"Estimator: `BudgetDAGClassifier(spec, n_subsets={args.subsets}, "
        f"cost_scale={args.cost_scale}, random_state=0, n_jobs={args.n_jobs})`, every "
        "other setting default.",
        "Baseline: one `HistGradientBoostingClassifier(max_iter=200, "
        "early_stopping=True, random_state=0)` on all features, single-threaded.",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| DAG fit | {m['fit_s']:.1f} s ({stages}) |",
        f"| baseline fit | {m['hgb_s']:.1f} s |",
        f"| **fit time / baseline fit time** | **{ratio:.1f}x** {bound('<= 40x')} |",
        f"| peak memory growth (process tree) | {m['growth_gib']:.2f} GiB "
        f"{bound('<= 3 GiB')} (peak {m['peak_gib']:.2f} GiB) |",
        f"| test error, DAG | {m['error']:.4f} |",
        f"| test error, baseline | {m['hgb_err']:.4f} |",
        f"| **DAG - baseline error** | **{gap:+.4f}** {bound('<= 0.01')} |",
        f"| **average sensors** | **{m['avg_sensors']:.1f} of 50** {bound('<= 25')} |",
        f"| evaluate on {m['test']} rows | {m['eval_s']:.1f} s |",
        f"| subsets chosen (sensors each) | {m['subset_sizes']} |",
        f"| greedy reward G | {m['reward']:.4f} on {m['reward_rows']} rows |",
        f"| DAG states | {m['n_states']} |",
        f"| bank | {m['bank_kind']} |",
        "",
        "Other `cost_scale` values, policies refitted on the same bank and DAG",
        "(`refit_policies`; the bank and subset selection are not refitted):",
        "",
        "| cost_scale | policy refit | test error | DAG - baseline | avg sensors |",
        "| --- | --- | --- | --- | --- |",
        *(
            f"| {c:g} | {t:.1f} s | {e:.4f} | {e - m['hgb_err']:+.4f} | {a:.1f} |"
            for c, t, e, a in m["more"]
        ),
        "",
        *(
            []
            if args.rows > FULL_ROWS
            else [
                "Larger tables (1 000 000 x 50): `--rows 1000000` writes "
                "`benchmarks/out/scale_large.md`.",
                "",
            ]
        ),
    ]
    return "\n".join(lines)


def bank_256(X_tr, y_tr, cols, args) -> None:
    """The worst case of t=8: disjoint subsets, every union a distinct state."""
    units = [list(u) for u in np.array_split(np.arange(len(cols)), 8)]
    dag = SensorDAG(cols, units=units)
    spec = SensorSpec.per_column(cols)
    print(f"bank only: {dag.n_states} states x 4 fits, LDA (lsqr)")
    with PeakRSS() as peak:
        start = time.perf_counter()
        bank = ClassifierBank(
            LinearDiscriminantAnalysis(solver="lsqr"),
            cv=3,
            random_state=0,
            n_jobs=args.n_jobs,
        ).fit(X_tr.to_numpy(), np.asarray(y_tr), dag, spec.column_indices(), 2)
        secs = time.perf_counter() - start
    mib = bank.oof_proba_.nbytes / 2**20
    print(f"bank fit: {secs:.1f} s; oof_proba_ {mib:.0f} MiB")
    print(f"peak RSS, process tree (sampled): {peak.peak / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
