"""Train/validation and train/test problems of the policy benchmark, with banks.

Every configuration is chosen on validation rows: a seeded 75/25 stratified split
of the TRAIN rows (never the test split). The bank of each problem is fitted once
and cached on disk (pickle, keyed by dataset, split and bank settings), so every
policy configuration and cost scale reuses it.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from _bench_data import SEED, load
from sklearn.model_selection import train_test_split

from budgetdag_core import BudgetDAGClassifier, SensorSpec, load_demo
from budgetdag_core.bank import boosting_classifier

#: pima has no standard test split: this many seeded train/test splits.
PIMA_SEEDS = (0, 1, 2, 3, 4)


@dataclass
class Problem:
    """Rows to fit the bank and policies on, rows to evaluate on."""

    dataset: str
    role: str  # "val" (choosing) or "test" (reporting)
    seed: int
    X_fit: pd.DataFrame
    y_fit: np.ndarray
    X_eval: pd.DataFrame
    y_eval: np.ndarray
    spec: SensorSpec
    params: dict = field(default_factory=dict)

    @property
    def tag(self) -> str:
        return f"{self.dataset}-{self.role}-{self.seed}"


def _val_split(
    X: pd.DataFrame, y: np.ndarray, seed: int
) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray]:
    fit_idx, val_idx = train_test_split(
        np.arange(len(X)), test_size=0.25, random_state=seed, stratify=y
    )
    return (
        X.iloc[fit_idx].reset_index(drop=True),
        y[fit_idx],
        X.iloc[val_idx].reset_index(drop=True),
        y[val_idx],
    )


def problems(
    name: str, *, quick_shuttle: bool = True, val_seeds: tuple[int, ...] = (SEED,)
) -> list[Problem]:
    """The validation problem(s) and test problem(s) of one dataset.

    ``val_seeds``: seeds of the validation splits of the TRAIN rows (pima has its
    own seeded train/test splits, one validation split each)."""
    out = []
    if name == "pima":
        for seed in PIMA_SEEDS:
            demo = load_demo("pima", random_state=seed)
            Xtr, ytr = demo.X_train.reset_index(drop=True), demo.y_train.to_numpy()
            Xte, yte = demo.X_test.reset_index(drop=True), demo.y_test.to_numpy()
            out.append(
                Problem("pima", "val", seed, *_val_split(Xtr, ytr, seed), demo.spec)
            )
            out.append(Problem("pima", "test", seed, Xtr, ytr, Xte, yte, demo.spec))
        return out
    d = load(name, quick=name == "shuttle" and quick_shuttle, max_train=None)
    for seed in val_seeds:
        out.append(
            Problem(
                name,
                "val",
                seed,
                *_val_split(d.X_train, d.y_train, seed),
                d.spec,
                d.params,
            )
        )
    out.append(
        Problem(
            name,
            "test",
            SEED,
            d.X_train,
            d.y_train,
            d.X_test,
            d.y_test,
            d.spec,
            d.params,
        )
    )
    return out


def bank_params(p: Problem) -> dict:
    return {"random_state": 0, "cv": 5, "n_jobs": 1, **p.params}


def cached_bank(p: Problem, cache_dir: Path) -> object:
    """The problem's bank (default bank kind), fitted once and pickled.

    The key holds the default boosting template's settings, so a bank cached by
    older code with other settings is not reused."""
    template = repr(boosting_classifier(0))
    key = hashlib.sha256(
        pickle.dumps((p.tag, sorted(bank_params(p).items()), len(p.X_fit), template))
    ).hexdigest()[:12]
    path = cache_dir / f"{p.tag}-{key}.pkl"
    if path.exists():
        with open(path, "rb") as fh:
            return pickle.load(fh)
    bank = BudgetDAGClassifier(p.spec, **bank_params(p)).fit_bank(p.X_fit, p.y_fit)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        pickle.dump(bank, fh)
    return bank


if __name__ == "__main__":  # fit (and cache) the banks only
    import argparse
    import time

    parser = argparse.ArgumentParser()
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/h4_banks"))
    args = parser.parse_args()
    for name in args.datasets:
        for prob in problems(name):
            t0 = time.perf_counter()
            cached_bank(prob, args.cache_dir)
            print(f"{prob.tag}: {time.perf_counter() - t0:.1f}s", flush=True)
