"""Any-subset banks on small data with many sensors (issue 37, item 3).

    python benchmarks/bench_banks_small.py [--datasets digits cube_nm spam400
        dna400] [--seeds 0] [--kinds masked masked_mlp masked_logistic auto]

For each dataset and seed, each sparse-DAG bank kind (``make_sparse_bank``:
LightGBM boosting, a network or a logistic regression on the mask encoding,
and ``"auto"``'s choice on validation rows) is fitted as the estimator fits
it (``fit_models``: ``cv=5`` fold models on random sensor subsets, one
thread) on the same training rows. Printed per bank: the test log loss and
error of the served models (the fold models' average, raw: the estimator
calibrates per subset size after growing its DAG) at one random subset of
10 / 25 / 50 % of the sensors per test row and at all sensors, and the fit
seconds as a ratio to one single-threaded
``HistGradientBoostingClassifier(max_iter=200, early_stopping=True)`` fitted
on all features of the same rows in the same run (``_common.reference_fit``).

Datasets: ``digits`` (64 pixel sensors, 1 347 training rows, AFABench's
split by seed), ``cube_nm`` (AFABench's CUBE-NM, 51 sensors, 600 training
rows), ``spam400`` and ``dna400`` (57 and 60 sensors: 400 training rows drawn
by seed from all rows, stratified, the rest as test).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from _common import AFA_TEST_ROWS, load, reference_fit  # noqa: E402

from budgetdag_core.bank import make_sparse_bank  # noqa: E402
from budgetdag_core.datasets import cube_nm_dataset, digits_dataset  # noqa: E402

FRACTIONS = (0.1, 0.25, 0.5)
KINDS = ("masked", "masked_mlp", "masked_logistic", "auto")


def small_version(name: str, seed: int, n_train: int = 400):
    """``name``'s rows pooled, ``n_train`` drawn by seed (stratified), the
    rest as test."""
    data = load(name, quick=False, max_train=None, seed=seed)
    X = pd.concat([data.X_train, data.X_test], ignore_index=True)
    y = np.concatenate([data.y_train, data.y_test])
    rng = np.random.default_rng(seed)
    take = []
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        k = max(2, int(round(n_train * len(rows) / len(y))))
        take.append(rng.choice(rows, size=k, replace=False))
    train = np.sort(np.concatenate(take))
    test = np.setdiff1d(np.arange(len(y)), train)
    return X.iloc[train], y[train], X.iloc[test], y[test], data.spec


def dataset(name: str, seed: int):
    """(X_train, y_train, X_test, y_test, spec) as frames and label arrays."""
    if name in ("spam400", "dna400"):
        return small_version(name.removesuffix("400"), seed)
    if name == "digits":
        demo = digits_dataset(random_state=seed)
    elif name == "cube_nm":
        demo = cube_nm_dataset(600, AFA_TEST_ROWS, random_state=seed)
    else:
        raise ValueError(f"Unknown dataset {name!r}.")
    return (
        demo.X_train,
        demo.y_train.to_numpy(),
        demo.X_test,
        demo.y_test.to_numpy(),
        demo.spec,
    )


def test_subsets(n_rows: int, n_sensors: int, rng: np.random.Generator) -> dict:
    """Per reading, one sensor subset per test row (rows x sensors of bool)."""
    out = {}
    for fraction in FRACTIONS:
        size = max(1, int(round(fraction * n_sensors)))
        ranks = rng.random((n_rows, n_sensors)).argsort(axis=1).argsort(axis=1)
        out[f"{fraction:.0%}"] = ranks < size
    out["all"] = np.ones((n_rows, n_sensors), dtype=bool)
    return out


def readings(bank, X: np.ndarray, y: np.ndarray, subsets: dict) -> dict:
    """Test log loss and error of ``bank`` at each reading's subsets."""
    out = {}
    for label, masks in subsets.items():
        proba = np.empty((len(X), bank.n_classes_))
        # Rows sharing nothing: score each row at its own subset, in blocks.
        for start in range(0, len(X), 256):
            rows = np.arange(start, min(len(X), start + 256))
            p = bank.predict_proba_subsets(X[rows], masks[rows])
            proba[rows] = p[np.arange(len(rows)), np.arange(len(rows))]
        picked = np.clip(proba[np.arange(len(y)), y], 1e-15, 1.0)
        out[f"logloss {label}"] = float(-np.mean(np.log(picked)))
        out[f"error {label}"] = float(np.mean(proba.argmax(axis=1) != y))
    return out


def run(name: str, seed: int, kinds: list[str]) -> list[dict]:
    Xtr, ytr, Xte, yte, spec = dataset(name, seed)
    classes, y_fit = np.unique(ytr, return_inverse=True)
    keep = np.isin(yte, classes)  # test rows of classes seen in training
    y_test = np.searchsorted(classes, yte[keep])
    X_fit = Xtr[spec.columns].to_numpy(float)
    X_test = Xte[spec.columns].to_numpy(float)[keep]
    _, ref_s, ref_err = reference_fit(
        Xtr[spec.columns], y_fit, Xte[spec.columns][keep], y_test
    )
    subsets = test_subsets(len(X_test), spec.n_sensors, np.random.default_rng(seed + 1))
    rows = []
    for kind in kinds:
        bank = make_sparse_bank(kind, cv=5, random_state=seed, n_jobs=1)
        with threadpool_limits(1):
            t = time.perf_counter()
            bank.fit_models(X_fit, y_fit, spec.column_indices(), len(classes))
            fit_s = time.perf_counter() - t
            row = {
                "dataset": name,
                "seed": seed,
                "bank": kind,
                "chosen": getattr(bank, "kind_", kind),
                "fit_s": round(fit_s, 2),
                "fit/HGB": round(fit_s / ref_s, 1),
                **readings(bank, X_test, y_test, subsets),
            }
        rows.append(row)
        print(
            f"{name} seed {seed} {kind:16s} ({row['chosen']}): fit {fit_s:6.1f}s "
            f"= {row['fit/HGB']:5.1f}x HGB; "
            + " ".join(
                f"{lab} {row[f'logloss {lab}']:.3f}/{row[f'error {lab}']:.3f}"
                for lab in subsets
            ),
            flush=True,
        )
        if kind == "auto" and bank.validation_:
            numbers = {
                k: round(v["log_loss"], 3)
                for k, v in bank.validation_.items()
                if k != "rows"
            }
            print(f"    auto validation log loss: {numbers}", flush=True)
    print(
        f"{name} seed {seed}: HGB(200) on all features: fit {ref_s:.2f}s, "
        f"test error {ref_err:.3f} ({len(X_fit)} training, {len(X_test)} test rows)",
        flush=True,
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets", nargs="+", default=["digits", "cube_nm", "spam400", "dna400"]
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--kinds", nargs="+", default=list(KINDS))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = [
        row
        for name in args.datasets
        for seed in args.seeds
        for row in run(name, seed, args.kinds)
    ]
    frame = pd.DataFrame(rows)
    cols = ["dataset", "bank", "chosen", "fit/HGB"] + [
        c for c in frame.columns if c.startswith(("logloss", "error"))
    ]
    summary = (
        frame[cols]
        .groupby(["dataset", "bank"], sort=False)
        .agg(lambda s: s.mean() if s.dtype.kind == "f" else "/".join(sorted(set(s))))
    )
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(
            "\nlog loss and error at a random subset of 10/25/50 % of the "
            "sensors and at all sensors (test rows; mean over seeds)"
        )
        print(summary.round(3).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
