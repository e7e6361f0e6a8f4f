"""Scale benchmark of issue 3: a MiniBooNE-sized table, every feature a sensor.

A seeded ``make_classification`` table of 130 000 rows x 50 features (MiniBooNE's
size; the real file is not obtainable here), 50 single-column sensors, greedy
subset selection with t=8 (7 greedy subsets + all features, as in the paper) and
Graph-Reduce over the unions. Prints the time of each stage and the peak resident
memory of the whole process tree (this process + joblib workers, sampled every
0.1 s), as well as ``ru_maxrss`` of this process.

Run from the repository root so the local package is used::

    python -m benchmarks.bench_many_sensors [--rows 130000] [--bank lda|logistic]

The bank classifier defaults to linear discriminant analysis (``solver="lsqr"``:
closed form from the class covariances, with probabilities), faster than the
default logistic regression bank for up to 2^7 + 1 = 129 states (with
``include_all``; ``--bank-256`` times the worst case of 2^8 = 256 states) x
(cv + 1) fits on 104k training rows (``--bank logistic`` measures the default
bank). The policies use ``policy_degree=1`` by default (the paper used
linear functions on MiniBooNE); ``--policy-degree 2`` measures the default.
"""

from __future__ import annotations

import argparse
import resource
import threading
import time

import numpy as np
import pandas as pd
import psutil
from sklearn.datasets import make_classification
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import train_test_split

from budgetdag_core import BudgetDAGClassifier, ClassifierBank, SensorDAG, SensorSpec
from budgetdag_core.bank import default_classifier


class PeakRSS:
    """Peak summed RSS of this process and its children, sampled in a thread."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval, self.peak, self._stop = interval, 0, threading.Event()
        self.proc = psutil.Process()

    def _sample(self) -> None:
        while not self._stop.is_set():
            total = 0
            for p in [self.proc, *self.proc.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            time.sleep(self.interval)

    def __enter__(self) -> PeakRSS:
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.thread.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=130_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--subsets", type=int, default=8)
    parser.add_argument("--bank", choices=["lda", "logistic"], default="lda")
    parser.add_argument("--cv", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--cost-scale", type=float, default=0.002)
    parser.add_argument("--policy-degree", type=int, default=1)
    parser.add_argument(
        "--bank-256",
        action="store_true",
        help="instead: time only a bank over 8 disjoint subsets (2^8 = 256 states)",
    )
    args = parser.parse_args()

    X, y = make_classification(
        n_samples=args.rows,
        n_features=args.features,
        n_informative=20,
        n_redundant=10,
        weights=[0.72],  # MiniBooNE: 28% signal
        flip_y=0.02,
        random_state=0,
    )
    cols = [f"f{i:02d}" for i in range(args.features)]
    X = pd.DataFrame(X, columns=cols)
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.2, stratify=y, random_state=0
    )
    spec = SensorSpec.per_column(cols, cost=1.0)
    bank = (
        LinearDiscriminantAnalysis(solver="lsqr")
        if args.bank == "lda"
        else default_classifier()
    )

    if args.bank_256:
        bank_256(X_tr, y_tr, cols, bank, args)
        return

    stages: dict[str, list[float]] = {}

    def progress(stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        stages.setdefault(stage, [now, now])[1] = now

    print(
        f"train {len(X_tr)} x {args.features} (every feature a sensor), "
        f"test {len(X_te)}; t={args.subsets} (include_all), bank={args.bank}, "
        f"cv={args.cv}, n_jobs={args.n_jobs}, policy_degree={args.policy_degree}"
    )
    model = BudgetDAGClassifier(
        spec,
        cost_scale=args.cost_scale,
        classifier=bank,
        n_subsets=args.subsets,
        include_all=True,
        policy_degree=args.policy_degree,
        cv=args.cv,
        random_state=0,
        n_jobs=args.n_jobs,
    )
    with PeakRSS() as peak:
        start = time.perf_counter()
        model.fit(X_tr, y_tr, progress=progress)
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        result = model.evaluate(X_te, y_te)
        eval_s = time.perf_counter() - start
    sel = model.subset_selection_
    print(
        f"subsets: {[len(s) for s in sel.subsets]} sensors; greedy reward G = "
        f"{sel.reward:.4f} on {sel.n_rows} rows, {sel.n_evaluations} candidate "
        f"fits, method {sel.method}"
    )
    print(f"DAG states: {model.sensor_dag_.n_states}")
    first = min(v[0] for v in stages.values())
    prev = first
    for stage in ("subsets", "bank", "policies"):
        if stage in stages:
            print(
                f"  {stage:9s} ends at {stages[stage][1] - first:7.1f} s "
                f"(stage {stages[stage][1] - prev:6.1f} s)"
            )
            prev = stages[stage][1]
    print(f"fit: {fit_s:.1f} s; evaluate on {len(X_te)} rows: {eval_s:.1f} s")
    print(
        f"test: error {result['error']:.4f}, avg sensors {result['avg_sensors']:.2f}"
        f" of {args.features}"
    )
    self_max = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    child_max = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    print(
        f"peak RSS, process tree (sampled): {peak.peak / 2**30:.2f} GiB; "
        f"ru_maxrss self {self_max:.2f} GiB, largest finished child "
        f"{child_max:.2f} GiB"
    )


def bank_256(X_tr, y_tr, cols, classifier, args) -> None:
    """The worst case of t=8: disjoint subsets, every union a distinct state."""
    units = [list(u) for u in np.array_split(np.arange(len(cols)), 8)]
    dag = SensorDAG(cols, units=units)
    spec = SensorSpec.per_column(cols)
    print(f"bank only: {dag.n_states} states x {args.cv + 1} fits, {args.bank}")
    with PeakRSS() as peak:
        start = time.perf_counter()
        bank = ClassifierBank(
            classifier, cv=args.cv, random_state=0, n_jobs=args.n_jobs
        ).fit(X_tr.to_numpy(), np.asarray(y_tr), dag, spec.column_indices(), 2)
        secs = time.perf_counter() - start
    mib = bank.oof_proba_.nbytes / 2**20
    print(f"bank fit: {secs:.1f} s; oof_proba_ {mib:.0f} MiB")
    print(f"peak RSS, process tree (sampled): {peak.peak / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
