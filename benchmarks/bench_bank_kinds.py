"""Classifier banks compared: test error by number of sensors, fit seconds, calibration.

For each dataset and bank kind, fits the bank (out-of-fold predictions included,
``cv`` folds) and prints one markdown row: the test error of the best state of each
size (the "1 band / 2 bands / ..." columns of issue 8), the error of the mean state
of each size, the bank's wall-clock fit seconds and the test calibration error
(top-label ECE, mean over states) without and with the bank's temperature scaling.

``--curve`` adds the DAG trade-off curve on landsat with the default bank: one
estimator fit, then ``refit_policies`` per ``cost_scale`` (the bank is reused).

The machine is shared: the load average is printed before and after each fit so
noisy timings can be recognised. ``cpu s`` is this process's CPU time: with
``--n-jobs 1`` (all fits in-process) it is the bank's total compute, which on an
idle machine with ``c`` cores and ``n_jobs=c`` takes about ``cpu s / c`` of wall
time (the fits are independent).

Usage::

    python -m benchmarks.bench_bank_kinds                       # landsat letter pima
    python -m benchmarks.bench_bank_kinds --datasets spam --kinds hgb masked
    python -m benchmarks.bench_bank_kinds --datasets landsat --kinds hgb --curve
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from budgetdag_core import SensorDAG, SensorSpec, load_demo
from budgetdag_core.bank import DEFAULT_BANK_KIND, make_bank
from budgetdag_core.bank._calibration import expected_calibration_error


@dataclass
class Data:
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    spec: SensorSpec


def load(name: str) -> Data:
    if name == "spam":
        from sklearn.model_selection import train_test_split

        from budgetdag_core.datasets import find_file

        df = pd.read_csv(find_file("spam.csv.gz"))
        cols = [c for c in df.columns if c != "label"]
        # 57 single-feature sensors would make 2^57 states: 6 column blocks.
        groups = {
            "words_a": cols[0:12],
            "words_b": cols[12:24],
            "words_c": cols[24:36],
            "words_d": cols[36:48],
            "chars": cols[48:54],
            "capitals": cols[54:57],
        }
        spec = SensorSpec(groups, dict.fromkeys(groups, 1.0))
        train, test = train_test_split(
            df, test_size=0.25, random_state=0, stratify=df["label"]
        )
    else:
        demo = load_demo(name)
        spec, train, test = demo.spec, demo.train, demo.test
    classes = np.unique(train["label"])
    return Data(
        train[spec.columns].to_numpy(float),
        np.searchsorted(classes, train["label"].to_numpy()),
        test[spec.columns].to_numpy(float),
        np.searchsorted(classes, test["label"].to_numpy()),
        spec,
    )


def make(kind: str, cv: int, n_jobs: int):
    if kind == "lgbm":  # reference only: LightGBM per state, 100 rounds, no stop
        import lightgbm as lgb

        clf = lgb.LGBMClassifier(
            n_estimators=100, learning_rate=0.1, n_jobs=1, verbose=-1, random_state=0
        )
        return make_bank("per_subset", clf, cv=cv, random_state=0, n_jobs=n_jobs)
    return make_bank(kind, cv=cv, random_state=0, n_jobs=n_jobs)


LABELS = {
    "per_subset": "logistic regression per subset",
    "hgb": "LightGBM per subset (cross-fitted, early stop)",
    "masked": "one masked LightGBM (cross-fitted)",
    "lgbm": "LightGBM per subset (100 rounds, reference)",
}


def bench_bank(data: Data, kind: str, cv: int, n_jobs: int) -> dict:
    dag = SensorDAG(data.spec.names)
    bank = make(kind, cv, n_jobs)
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    bank.fit(
        data.X_train,
        data.y_train,
        dag,
        data.spec.column_indices(),
        int(data.y_train.max()) + 1,
    )
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    load1 = os.getloadavg()[0]
    by_size: dict[int, list[float]] = {}
    ece_raw, ece_cal = [], []
    for k in range(1, dag.n_states):
        raw = bank._raw_proba(data.X_test, k)
        cal = bank.predict_proba(data.X_test, k)
        by_size.setdefault(len(dag.sensors_in(k)), []).append(
            float((cal.argmax(1) != data.y_test).mean())
        )
        ece_raw.append(expected_calibration_error(raw, data.y_test))
        ece_cal.append(expected_calibration_error(cal, data.y_test))
    return {
        "best": {s: min(v) for s, v in sorted(by_size.items())},
        "mean": {s: float(np.mean(v)) for s, v in sorted(by_size.items())},
        "seconds": seconds,
        "cpu": cpu,
        "load": (load0, load1),
        "ece_raw": float(np.mean(ece_raw)),
        "ece": float(np.mean(ece_cal)),
        "bank": bank,
    }


def print_header(name: str, n_sensors: int) -> None:
    sizes = range(1, n_sensors + 1)
    head = " | ".join(f"{s} sensor{'s' * (s > 1)}" for s in sizes)
    print(f"\n### {name}: best state of each size (mean over states of that size)\n")
    print(f"| bank | {head} | fit s | cpu s | load | test ECE raw -> calibrated |")
    print("|---|" + "---|" * (n_sensors + 4), flush=True)


def print_row(kind: str, r: dict) -> None:
    cells = " | ".join(f"{b:.3f} ({r['mean'][s]:.3f})" for s, b in r["best"].items())
    print(
        f"| {LABELS[kind]} | {cells} | {r['seconds']:.1f} | {r['cpu']:.1f} | "
        f"{r['load'][0]:.1f}->{r['load'][1]:.1f} | "
        f"{r['ece_raw']:.3f} -> {r['ece']:.3f} |",
        flush=True,
    )


def curve(n_jobs: int, scales: list[float], kind: str = "auto") -> None:
    from budgetdag_core import BudgetDAGClassifier

    demo = load_demo("landsat")
    label = f"default bank ({DEFAULT_BANK_KIND})" if kind == "auto" else kind
    print(f"\n### landsat DAG curve, {label}, cv=5\n")
    t0 = time.perf_counter()
    model = BudgetDAGClassifier(
        demo.spec, cost_scale=scales[0], random_state=0, n_jobs=n_jobs, bank_kind=kind
    )
    timings: dict[str, float] = {}
    last = {"stage": None, "t": t0}

    def progress(stage: str, done: int, total: int) -> None:
        if done == total:
            timings[stage] = time.perf_counter() - last["t"]
            last["t"] = time.perf_counter()

    model.fit(demo.X_train, demo.y_train, progress=progress)
    total = time.perf_counter() - t0
    print(
        f"first fit {total:.1f} s (bank {timings.get('bank', float('nan')):.1f} s, "
        f"policies {timings.get('policies', float('nan')):.1f} s), "
        f"load {os.getloadavg()[0]:.1f}\n"
    )
    print("| cost_scale | avg sensors | test error | policy refit s |")
    print("|---|---|---|---|")
    for i, scale in enumerate(scales):
        t0 = time.perf_counter()
        m = model if i == 0 else model.refit_policies(demo.X_train, demo.y_train, scale)
        secs = time.perf_counter() - t0 if i else float("nan")
        ev = m.evaluate(demo.X_test, demo.y_test)
        print(
            f"| {scale:g} | {ev['avg_sensors']:.2f} | {ev['error']:.4f} | {secs:.1f} |",
            flush=True,
        )
    print(
        "\nLightGBM cost-efficient gradient boosting (issue 8): 0.0885 error with "
        "4 bands, 0.1245 at 3.5 bands on average."
    )


def big(n_jobs: int, cv: int) -> None:
    """The masked bank on the many-sensor worst case: 256 states, 104 000 rows.

    Same synthetic table as ``bench_scale`` (130 000 x 50, seeded
    ``make_classification``), DAG over 8 disjoint column blocks (2^8 states).
    """
    from sklearn.datasets import make_classification
    from sklearn.model_selection import train_test_split

    from benchmarks.bench_scale import PeakRSS

    X, y = make_classification(
        n_samples=130_000,
        n_features=50,
        n_informative=20,
        n_redundant=10,
        weights=[0.72],
        flip_y=0.02,
        random_state=0,
    )
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.2, stratify=y, random_state=0
    )
    names = [f"f{i:02d}" for i in range(50)]
    units = [list(u) for u in np.array_split(np.arange(50), 8)]
    dag = SensorDAG(names, units=units)
    spec = SensorSpec.per_column(names)
    bank = make_bank("masked", cv=cv, random_state=0, n_jobs=n_jobs)
    print(f"\n### masked bank, {dag.n_states} states, train {len(y_tr)} x 50, cv={cv}")
    with PeakRSS() as peak:
        t0 = time.perf_counter()
        bank.fit(X_tr, y_tr, dag, spec.column_indices(), 2)
        secs = time.perf_counter() - t0
    print(
        f"fit {secs:.1f} s, peak RSS (process tree) {peak.peak / 2**30:.2f} GiB, "
        f"oof_proba_ {bank.oof_proba_.nbytes / 2**20:.0f} MiB, load "
        f"{os.getloadavg()[0]:.1f}"
    )
    per_units: dict[int, list[float]] = {}
    for k in range(1, dag.n_states):
        units_in = sum(1 for u in dag.unit_masks if dag.states[k] & u == u)
        err = float((bank.predict_proba(X_te, k).argmax(1) != y_te).mean())
        per_units.setdefault(units_in, []).append(err)
    print("test error by number of blocks held (best / mean):")
    for u, errs in sorted(per_units.items()):
        print(f"  {u} blocks: {min(errs):.4f} / {np.mean(errs):.4f}")


def warm_up(kinds: list[str], cv: int, n_jobs: int) -> None:
    """Start the joblib workers and import the models there, outside the timings."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    spec = SensorSpec.per_column(["a", "b"])
    tiny = Data(X, y, X, y, spec)
    for kind in kinds:
        bench_bank(tiny, kind, cv, n_jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=["landsat", "letter", "pima"])
    parser.add_argument("--kinds", nargs="+", default=["per_subset", "hgb", "masked"])
    parser.add_argument("--cv", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--curve", action="store_true")
    parser.add_argument(
        "--curve-kind", default="auto", help="bank_kind of the --curve estimator"
    )
    parser.add_argument(
        "--big", action="store_true", help="masked bank on 256 states x 104k rows"
    )
    parser.add_argument(
        "--scales",
        type=float,
        nargs="+",
        default=[0.0, 0.002, 0.005, 0.01, 0.02, 0.05],
    )
    args = parser.parse_args()
    print(f"cpu count {os.cpu_count()}, n_jobs {args.n_jobs}, cv {args.cv}")
    warm_up(args.kinds, args.cv, args.n_jobs)
    for name in args.datasets:
        data = load(name)
        title = f"{name} (train {len(data.y_train)}, test {len(data.y_test)})"
        print_header(title, data.spec.n_sensors)
        for kind in args.kinds:
            print_row(kind, bench_bank(data, kind, args.cv, args.n_jobs))
    if args.curve:
        curve(args.n_jobs, args.scales, args.curve_kind)
    if args.big:
        big(args.n_jobs, 3)


if __name__ == "__main__":
    main()
