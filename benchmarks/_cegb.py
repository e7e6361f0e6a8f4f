"""LightGBM cost-efficient gradient boosting (CEGB) with BudgetDAG's cost accounting.

CEGB (Peter et al., NIPS 2017) charges ``cegb_penalty_feature_lazy[j]`` for each
example the first time feature j is used on its path, weighted by
``cegb_tradeoff``. The curve here sweeps ``cegb_tradeoff``.

Cost accounting is the one of the DAG: for each test example, every feature
tested on its decision path in any tree counts once, features are mapped to
sensors, and the example pays the sum of the costs of the sensors touched.

A sensor with several columns cannot be declared to LightGBM as a group, so two
per-column penalties are swept, and all points are kept: the sensor's cost on
each of its columns (first use right, later columns of the same sensor
over-charged) and the sensor's cost split evenly over its columns (under-charged).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from budgetdag_core import SensorSpec

TRADEOFFS = (0.0, *np.geomspace(1e-3, 10, 11).round(6))
QUICK_TRADEOFFS = (0.0, *np.geomspace(1e-3, 10, 6).round(6))
#: Extra settings placed in the widest gaps of average cost after the grid.
N_REFINE = 4


def leaf_path_features(booster, n_features: int) -> list[np.ndarray]:
    """Per tree, a (n_leaves, n_features) bool matrix: features on each leaf's path."""
    out = []
    for info in booster.dump_model()["tree_info"]:
        root = info["tree_structure"]
        n_leaves = int(info["num_leaves"])
        paths = np.zeros((max(n_leaves, 1), n_features), dtype=bool)
        stack = [(root, np.zeros(n_features, dtype=bool))]
        while stack:
            node, used = stack.pop()
            if "leaf_index" in node or "split_feature" not in node:
                paths[int(node.get("leaf_index", 0))] = used
                continue
            here = used.copy()
            here[int(node["split_feature"])] = True
            stack.append((node["left_child"], here))
            stack.append((node["right_child"], here))
        out.append(paths)
    return out


def features_used(booster, X: np.ndarray) -> np.ndarray:
    """(n, n_features) bool: features tested on each example's paths, all trees."""
    n_features = X.shape[1]
    leaves = booster.predict(X, pred_leaf=True)
    leaves = leaves.reshape(len(X), -1)
    used = np.zeros((len(X), n_features), dtype=bool)
    for t, paths in enumerate(leaf_path_features(booster, n_features)):
        used |= paths[leaves[:, t]]
    return used


def sensor_costs_of(
    used: np.ndarray, spec: SensorSpec
) -> tuple[np.ndarray, np.ndarray]:
    """Per-example cost and sensor count from the used-feature matrix."""
    col_of = {c: i for i, c in enumerate(spec.columns)}
    touched = np.stack(
        [used[:, [col_of[c] for c in spec.groups[s]]].any(axis=1) for s in spec.names],
        axis=1,
    )
    return touched @ spec.cost_vector, touched.sum(axis=1)


def _penalties(spec: SensorSpec, split: bool) -> list[float]:
    # In units of the mean sensor cost, so one tradeoff grid fits every dataset.
    unit = float(np.mean(spec.cost_vector)) or 1.0
    per_col = {}
    for s in spec.names:
        cols = spec.groups[s]
        for c in cols:
            per_col[c] = float(spec.costs[s]) / unit / (len(cols) if split else 1)
    return [per_col[c] for c in spec.columns]


def cegb_curve(
    X_train: pd.DataFrame,
    y_train: np.ndarray,
    X_test: pd.DataFrame,
    y_test: np.ndarray,
    spec: SensorSpec,
    *,
    tradeoffs: tuple[float, ...] = TRADEOFFS,
    n_estimators: int = 300,
) -> tuple[pd.DataFrame, float]:
    """Test (avg_cost, error) of CEGB per ``cegb_tradeoff`` and penalty variant.

    Boosting rounds are early-stopped on a stratified quarter of the training rows.
    Returns the frame and the total fit seconds.
    """
    import lightgbm as lgb

    classes = np.unique(y_train)
    ytr = np.searchsorted(classes, y_train)
    yte = np.searchsorted(classes, y_test)
    Xtr = X_train[spec.columns].to_numpy(float)
    Xte = X_test[spec.columns].to_numpy(float)
    fit_idx, val_idx = train_test_split(
        np.arange(len(Xtr)), test_size=0.25, random_state=0, stratify=ytr
    )
    variants = {"sensor cost per column": False}
    if any(len(cols) > 1 for cols in spec.groups.values()):
        variants["sensor cost split over columns"] = True
    rows = []
    fit_seconds = 0.0

    def fit_one(variant: str, penalty: list[float], tradeoff: float) -> None:
        nonlocal fit_seconds
        model = lgb.LGBMClassifier(
            n_estimators=n_estimators,
            learning_rate=0.1,
            num_leaves=31,
            n_jobs=1,
            verbose=-1,
            random_state=0,
            cegb_tradeoff=tradeoff,
            cegb_penalty_feature_lazy=penalty,
        )
        t0 = time.perf_counter()
        model.fit(
            Xtr[fit_idx],
            ytr[fit_idx],
            eval_X=(Xtr[val_idx],),
            eval_y=(ytr[val_idx],),
            callbacks=[lgb.early_stopping(20, verbose=False)],
        )
        fit_seconds += time.perf_counter() - t0
        booster = model.booster_
        n_iter = model.best_iteration_ or None
        if n_iter:
            booster = lgb.Booster(
                model_str=booster.model_to_string(num_iteration=n_iter)
            )
        pred = np.asarray(booster.predict(Xte))
        pred = (pred > 0.5).astype(int) if pred.ndim == 1 else pred.argmax(axis=1)
        cost, n_sensors = sensor_costs_of(features_used(booster, Xte), spec)
        rows.append(
            {
                "method": "cegb",
                "variant": variant,
                "cegb_tradeoff": float(tradeoff),
                "avg_cost": float(cost.mean()),
                "avg_sensors": float(n_sensors.mean()),
                "error": float((pred != yte).mean()),
                "n_trees": booster.num_trees(),
            }
        )

    for variant, split in variants.items():
        penalty = _penalties(spec, split)
        for tradeoff in tradeoffs:
            fit_one(variant, penalty, tradeoff)
        # Refine where the cost jumps most between neighbouring settings.
        for _ in range(N_REFINE):
            done = sorted(
                (r["cegb_tradeoff"], r["avg_cost"])
                for r in rows
                if r["variant"] == variant
            )
            gaps = [
                (abs(c0 - c1), t0, t1)
                for (t0, c0), (t1, c1) in zip(done[:-1], done[1:], strict=True)
                if t1 > 0 and (t0 == 0 or t1 / t0 > 1.05)
            ]
            if not gaps:
                break
            _, t0, t1 = max(gaps)
            fit_one(variant, penalty, t1 / 10 if t0 == 0 else float(np.sqrt(t0 * t1)))
    return pd.DataFrame(rows), fit_seconds
