"""Fit, predict, session and sweep speed as ratios to one HGB, in one run.

Every time is printed with its ratio to ONE single-threaded
``HistGradientBoostingClassifier(max_iter=200, early_stopping=True)`` fitted on
all features of the same data in the same run (the reference), so the ratios
stay comparable on a busy machine:

- the default ``BudgetDAGClassifier`` fit (bank and policies timed apart) on
  the ``run_all.py`` datasets (landsat, letter, pima, spam with
  ``n_subsets=8`` and a masked bank, dna, shuttle) and on a many-sensor table
  (``many56``: 56 one-feature sensors, 1 000 training rows, the default
  sparse DAG), and the all-sensor state's test error beside the reference's;
- on every dataset: batch ``predict``, ``predict_proba`` and ``trace`` rows/s
  of the fitted DAG beside the reference's ``predict``, both single-threaded
  (the model's and its bank's ``n_jobs=1``, one OpenMP/BLAS thread), on the
  test rows tiled to 20 000 and shuffled, and their ratio (issue 54: the DAG
  should predict at least as many rows/s);
- on landsat: batch ``predict`` rows/s on the test split tiled to 100 000
  rows, shuffled and in file order (and apart: the routing's, and the
  bank's with one thread and with ``n_jobs=2``), the session's
  next_sensor/observe/predict time per step, ``refit_policies`` for a new
  cost scale and a 10-point ``tradeoff_curve`` sweep reusing the bank;
- landsat again with ``bank_serve="refit"`` (one model per state refit on
  all rows instead of the fold models' average): fit, error and the above;
- ``--model-cache DIR``: the predict speeds only, of the models fitted by
  the first run with that folder (kept there): after a change to inference,
  the same fitted models measured again;
- ``--save``: the predict speeds merged into
  ``benchmarks/results/predict_speed.json``, which ``render_report.py``
  tables in BENCHMARKS.md;
- ``--stretch``: the masked bank on a 100 000 x 50 ``make_classification``
  table with ``n_subsets=8`` (issue 17).

Run ``PYTHONPATH=. nice -n 10 python benchmarks/bench_fit_predict_speed.py``
(``--only landsat`` etc. to run part of it; ``--repeats 3`` alternates the
reference and each default fit three times and reports the best of each).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # this checkout's package first

from _common import (  # noqa: E402
    RESULTS,
    BenchData,
    load,
    predict_rows_per_second,
    reference_fit,
    seconds,
    tiled,
    warm_up,
)
from _report import PREDICT_SPEED_FILE, current_commit  # noqa: E402

from budgetdag_core import BudgetDAGClassifier, SensorSpec, tradeoff_curve  # noqa: E402
from budgetdag_core._threads import single_threaded  # noqa: E402
from budgetdag_core.bank import resolve_bank_kind  # noqa: E402

DATASETS = ("landsat", "letter", "pima", "spam", "dna", "shuttle", "many56")
#: Rows of the batch the predict speeds are measured on (run_all.py's).
PREDICT_ROWS = 20_000
#: Each dataset's predict speeds of this run (rows/s), saved with ``--save``.
PREDICT_SPEEDS: dict[str, dict] = {}


def save_predict_speeds(command: str) -> Path:
    """Merge this run's predict speeds into ``results/predict_speed.json``
    (what ``render_report.py`` tables in BENCHMARKS.md)."""
    path = RESULTS / PREDICT_SPEED_FILE
    saved = json.loads(path.read_text()) if path.exists() else {"datasets": {}}
    run = {"command": command, "commit": current_commit()}
    run["load"] = os.getloadavg()[0]
    saved["datasets"].update({n: s | run for n, s in PREDICT_SPEEDS.items()})
    order = [n for n in DATASETS if n in saved["datasets"]]
    saved["datasets"] = {n: saved["datasets"][n] for n in order}
    path.write_text(json.dumps(saved, indent=1) + "\n")
    return path


def many_sensor_data() -> BenchData:
    """A many-sensor table a new user might bring: 56 one-feature sensors of
    unit cost, 3 classes, 1 000 training and 400 test rows (issue 54)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(1400, 56, n_informative=12, n_classes=3, random_state=0)
    cols = [f"s{i:02d}" for i in range(56)]
    frame = pd.DataFrame(X, columns=cols)
    return BenchData(
        "many56",
        frame.iloc[:1000].reset_index(drop=True),
        y[:1000],
        frame.iloc[1000:].reset_index(drop=True),
        y[1000:],
        SensorSpec.per_column(cols, cost=1.0),
        "56 one-feature sensors (make_classification)",
    )


def load_bench(name: str) -> BenchData:
    """``name``'s benchmark data (``many56``: :func:`many_sensor_data`)."""
    if name == "many56":
        return many_sensor_data()
    return load(name, quick=False, max_train=None)


def thread_seconds(call) -> float:
    """CPU seconds of this thread in ``call()``: on a shared machine, time
    other processes take is left out (the calls below run in this thread)."""
    t = time.thread_time()
    call()
    return time.thread_time() - t


def bench_predict_speed(
    name: str, model: BudgetDAGClassifier, reference, X_test: pd.DataFrame
) -> None:
    """Single-threaded batch rows/s of the DAG's predict, predict_proba and
    trace and of the reference's predict, on the same rows, alternated."""
    batch = tiled(X_test, PREDICT_ROWS).sample(frac=1.0, random_state=0)
    n_jobs, bank_jobs = model.n_jobs, model.bank_.n_jobs
    model.n_jobs = model.bank_.n_jobs = 1
    calls = {
        "predict": lambda: model.predict(batch),
        "predict_proba": lambda: model.predict_proba(batch),
        "trace": lambda: model.trace(batch),
        "reference": lambda: reference.predict(batch),
    }
    best = dict.fromkeys(calls, np.inf)
    try:
        with threadpool_limits(1), single_threaded():
            model.predict(batch.iloc[:1000])  # lazy set-up stays out
            reference.predict(batch.iloc[:1000])
            for _ in range(3):
                for what, call in calls.items():
                    best[what] = min(best[what], thread_seconds(call))
    finally:
        model.n_jobs, model.bank_.n_jobs = n_jobs, bank_jobs
    rate = {what: len(batch) / s for what, s in best.items()}
    PREDICT_SPEEDS[name] = {
        "states": int(model.sensor_dag_.n_states),
        "hgb": rate["reference"],
        "predict": rate["predict"],
        "predict_proba": rate["predict_proba"],
        "trace": rate["trace"],
    }
    print(
        f"{name:8s} predict rows/s, one thread ({len(batch)} rows): DAG "
        f"{rate['predict']:10,.0f} | HGB {rate['reference']:10,.0f} | ratio "
        f"{rate['predict'] / rate['reference']:5.2f}x | DAG predict_proba "
        f"{rate['predict_proba']:10,.0f}, trace {rate['trace']:10,.0f}",
        flush=True,
    )


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


def cached_fit(name: str, folder: Path) -> BudgetDAGClassifier:
    """The default model and the reference of ``name`` fitted by an earlier
    run with ``--model-cache folder`` (fit times not measured again), or
    fitted now and kept there: predict speeds measured again after a change
    to inference, on the same fitted models."""
    path = folder / f"{name}.pkl"
    data = load_bench(name)
    if not path.exists():
        model = bench_dataset(name, predict=False)
        folder.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            pickle.dump({"model": model, "ref": model.reference_}, f)
    with open(path, "rb") as f:
        saved = pickle.load(f)
    print(f"{name:8s} fitted model from {path}", flush=True)
    bench_predict_speed(name, saved["model"], saved["ref"], data.X_test)
    return saved["model"]


def bench_dataset(
    name: str, bank_serve: str = "folds", repeats: int = 1, predict: bool = True
) -> BudgetDAGClassifier:
    """Reference fit and default fit, alternated ``repeats`` times; the best
    (least disturbed) time of each is reported, with every repeat's ratio;
    then (``predict``) the predict speeds."""
    data = load_bench(name)
    params: dict = {"n_subsets": 8} if name == "spam" else {}
    params["bank_serve"] = bank_serve
    if data.degrees == (1,):  # as the benchmark run fits the many-sensor data
        params["policy_degree"] = 1
    refs, fits = [], []
    for _ in range(repeats):
        reference, ref, ref_err = reference_fit(
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
    model.reference_ = reference
    if predict:
        bench_predict_speed(name, model, reference, data.X_test)
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
        "--save",
        action="store_true",
        help="merge the predict speeds into benchmarks/results/predict_speed.json "
        "(tabled in BENCHMARKS.md by render_report.py)",
    )
    parser.add_argument(
        "--model-cache",
        metavar="DIR",
        help="only the predict speeds, of the default models fitted by the first "
        "run with this folder and kept there (pickles)",
    )
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
    if args.model_cache:  # predict speeds only, on models fitted once
        for name in args.only or DATASETS:
            cached_fit(name, Path(args.model_cache))
        models = {}
    else:
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
    if args.save:
        command = "python benchmarks/bench_fit_predict_speed.py " + " ".join(
            sys.argv[1:]
        )
        print(f"predict speeds saved in {save_predict_speeds(command.strip())}")


if __name__ == "__main__":
    main()
