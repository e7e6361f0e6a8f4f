"""Fit, predict, session and sweep speed as ratios to one HGB, in one run.

Every time is printed with its ratio to ONE single-threaded
``HistGradientBoostingClassifier(max_iter=200, early_stopping=True)`` fitted on
all features of the same data in the same run (the reference), so the ratios
stay comparable on a busy machine:

- the default ``BudgetDAGClassifier`` fit (bank and policies timed apart) on
  landsat, letter, spam (``n_subsets=8``, masked bank) and shuttle (20 000
  stratified rows, full 512-state DAG), and the all-sensor state's test error
  beside the reference's;
- on landsat: batch ``predict`` rows/s on the test split tiled to 100 000
  rows, shuffled and in file order (and apart: the routing's, and the
  bank's with one thread and with ``n_jobs=2``), the session's
  next_sensor/observe/predict time per step, ``refit_policies`` for a new
  cost scale and a 10-point ``tradeoff_curve`` sweep reusing the bank;
- landsat again with ``bank_serve="refit"`` (one model per state refit on
  all rows instead of the fold models' average): fit, error and the above;
- ``--stretch``: the masked bank on a 100 000 x 50 ``make_classification``
  table with ``n_subsets=8`` (issue 17).

Run ``PYTHONPATH=. python benchmarks/bench_fit_predict_speed.py`` (``--only landsat``
etc. to run part of it; ``--repeats 3`` alternates the reference and each
default fit three times and reports the best of each).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # this checkout's package first

from _common import (  # noqa: E402
    load,
    predict_rows_per_second,
    reference_fit,
    seconds,
    tiled,
    warm_up,
)

from budgetdag_core import BudgetDAGClassifier, SensorSpec, tradeoff_curve  # noqa: E402
from budgetdag_core.bank import resolve_bank_kind  # noqa: E402

DATASETS = ("landsat", "letter", "spam", "shuttle")


def timed_fit(model: BudgetDAGClassifier, X, y) -> tuple[float, float]:
    """Total and bank seconds of ``model.fit`` (bank end read from progress)."""
    marks: dict[str, float] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "bank" and done == total:
            marks["bank"] = time.perf_counter()

    t = time.perf_counter()
    model.fit(X, y, progress=progress)
    total = time.perf_counter() - t
    return total, marks.get("bank", t) - t


def all_sensor_error(model: BudgetDAGClassifier, X_test, y_test) -> float:
    bank = model.bank_
    Xv = X_test[model.spec_.columns].to_numpy(dtype=float)
    proba = bank.predict_proba(Xv, bank.n_states - 1)
    return float(np.mean(model.classes_[proba.argmax(axis=1)] != np.asarray(y_test)))


def bench_dataset(
    name: str, bank_serve: str = "folds", repeats: int = 1
) -> BudgetDAGClassifier:
    """Reference fit and default fit, alternated ``repeats`` times; the best
    (least disturbed) time of each is reported, with every repeat's ratio."""
    data = load(name, quick=False, max_train=None)
    params: dict = {"n_subsets": 8} if name == "spam" else {}
    params["bank_serve"] = bank_serve
    if data.degrees == (1,):  # as the benchmark run fits the many-sensor data
        params["policy_degree"] = 1
    refs, fits = [], []
    for _ in range(repeats):
        _, ref, ref_err = reference_fit(
            data.X_train, data.y_train, data.X_test, data.y_test
        )
        model = BudgetDAGClassifier(
            data.spec, cost_scale=0.05, random_state=0, n_jobs=2, **params
        )
        refs.append(ref)
        fits.append(timed_fit(model, data.X_train, data.y_train))
    ref, (total, bank) = min(refs), min(fits)
    err = all_sensor_error(model, data.X_test, data.y_test)
    spread = ""
    if repeats > 1:
        ratios = sorted(t / r for r, (t, _) in zip(refs, fits, strict=True))
        spread = (
            f" | best of {repeats} each; per-repeat fit ratios "
            f"{ratios[0]:.1f}x-{ratios[-1]:.1f}x"
        )
    print(
        f"{name:8s} serve={bank_serve:5s} {len(data.X_train):6d} rows, "
        f"{model.bank_.n_states:3d} states, "
        f"bank {resolve_bank_kind('auto', None, model.bank_.n_states):6s}| "
        f"reference {ref:6.2f} s err {ref_err:.4f} | "
        f"fit {total:7.1f} s = {total / ref:5.1f}x (bank {bank:6.1f} s = "
        f"{bank / ref:5.1f}x, policies {total - bank:6.1f} s) | all-sensor err "
        f"{err:.4f} ({err - ref_err:+.4f}){spread}",
        flush=True,
    )
    model.reference_seconds_ = ref
    model.fit_seconds_ = total
    return model


def bench_landsat_use(model: BudgetDAGClassifier) -> None:
    data = load("landsat", quick=False, max_train=None)
    ref = model.reference_seconds_
    big = tiled(data.X_test, 100_000)
    # The test file lists similar rows together, which the tree walks' branch
    # prediction likes; shuffled rows are what a live batch looks like.
    shuffled = big.sample(frac=1.0, random_state=0)
    for order, batch in (("shuffled rows", shuffled), ("file order", big)):
        print(
            f"landsat predict (serve={model.bank_serve}, {order}): "
            f"{predict_rows_per_second(model, batch, 3):10,.0f} rows/s "
            f"(batch of {len(batch)})"
        )
    bench_predict_parts(model, shuffled)
    rows = data.X_test.iloc[:200]
    steps, t = 0, time.perf_counter()
    for _, row in rows.iterrows():
        session = model.start()
        while (sensor := session.next_sensor()) is not None:
            session.observe(sensor, {c: row[c] for c in data.spec.groups[sensor]})
            steps += 1
        session.predict()
        steps += 1
    per_step = (time.perf_counter() - t) / steps * 1000
    print(f"landsat session: {per_step:.2f} ms per step ({steps} steps, 200 rows)")
    bench_refit_policies("landsat", model)
    dt = seconds(
        lambda: tradeoff_curve(
            data.X_train,
            data.y_train,
            data.spec,
            n_points=10,
            bank=model.bank_,
            bank_serve=model.bank_serve,
            random_state=0,
            n_jobs=2,
        )
    )
    print(
        f"landsat 10-point sweep (bank reused): {dt:6.1f} s = {dt / ref:.1f}x the "
        f"reference = {dt / model.fit_seconds_:.2f}x the default fit"
    )


def bench_refit_policies(name: str, model: BudgetDAGClassifier) -> None:
    """``refit_policies`` for a new cost scale (the bank reused)."""
    data = load(name, quick=False, max_train=None)
    ref = model.reference_seconds_
    dt = seconds(lambda: model.refit_policies(data.X_train, data.y_train, 0.1))
    print(f"{name} refit_policies (new cost scale): {dt:6.2f} s = {dt / ref:.2f}x")


def bench_predict_parts(model: BudgetDAGClassifier, big: pd.DataFrame) -> None:
    """Where ``predict``'s time goes: routing (the policies) and the bank's
    probabilities at the stop states, the bank with one thread and with its
    fold models scored in threads (``n_jobs=2``), alternated in the same run."""
    Xv = model._features(big)
    route = min(seconds(lambda: model._route(Xv)) for _ in range(3))
    stops = model._route(Xv).stop_state
    bank, n_jobs = model.bank_, model.bank_.n_jobs
    per_threads: dict[int, list[float]] = {1: [], 2: []}
    try:
        for _ in range(3):
            for threads in (1, 2):
                bank.n_jobs = threads
                per_threads[threads].append(
                    seconds(lambda: model._proba_at_stops(Xv, stops))
                )
    finally:
        bank.n_jobs = n_jobs
    one, two = min(per_threads[1]), min(per_threads[2])
    print(
        f"landsat predict parts: routing {len(big) / route:10,.0f} rows/s | bank "
        f"{len(big) / one:10,.0f} rows/s (n_jobs=1), {len(big) / two:10,.0f} rows/s "
        f"(n_jobs=2, {one / two:.2f}x)"
    )


def bench_stretch(n_rows: int = 100_000, n_features: int = 50) -> None:
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_rows + 26_000, n_features, n_informative=20, random_state=0
    )
    cols = [f"x{i:02d}" for i in range(n_features)]
    frame = pd.DataFrame(X, columns=cols)
    Xtr, Xte = frame.iloc[:n_rows], frame.iloc[n_rows:]
    ytr, yte = y[:n_rows], y[n_rows:]
    _, ref, ref_err = reference_fit(Xtr, ytr, Xte, yte)
    model = BudgetDAGClassifier(
        SensorSpec.per_column(cols), n_subsets=8, random_state=0, n_jobs=2
    )
    total, bank = timed_fit(model, Xtr, ytr)
    err = all_sensor_error(model, Xte, yte)
    print(
        f"stretch {n_rows}x{n_features}: reference {ref:.1f} s err {ref_err:.4f} | "
        f"bank {bank:.1f} s = {bank / ref:.1f}x | fit {total:.1f} s = "
        f"{total / ref:.1f}x | all-sensor err {err:.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=DATASETS, nargs="*")
    parser.add_argument("--stretch", action="store_true")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="alternate the reference and the default fit this many times per "
        "dataset and report the best of each (the machine is shared)",
    )
    args = parser.parse_args()
    print(
        f"kernels loaded or compiled (one-off, not timed below): {warm_up():.1f} s",
        flush=True,
    )
    models = {
        name: bench_dataset(name, repeats=args.repeats)
        for name in args.only or DATASETS
    }
    if "letter" in models:
        bench_refit_policies("letter", models["letter"])
    if "landsat" in models:
        bench_landsat_use(models["landsat"])
        # the same with one refit model per state (bank_serve="refit")
        refit = bench_dataset("landsat", bank_serve="refit")
        bench_landsat_use(refit)
    if args.stretch:
        bench_stretch()


if __name__ == "__main__":
    main()
