"""A second model family blended into the all-sensor state (issue 55).

For each ``run_all.py`` dataset whose default bank is a per-state one (a
many-sensor bank blends a dedicated HGB in already; such a table is
named and skipped): that bank (as ``BudgetDAGClassifier.fit_bank`` fits
it), its all-sensor state's
out-of-fold probabilities on the training rows and its served
probabilities on the test rows; beside it a network on all features, its
out-of-fold probabilities from ``--folds`` seeded stratified folds and one
more fitted on every training row for the test rows. The blend weight is
chosen on the out-of-fold rows only, by the sparse bank's dedicated blend
(``bank._dedicated.blend_weight``: least calibrated log loss, kept only
where its gain is beyond noise), never on the test rows. It prints, per
dataset and network: the test error of the bank's all-sensor state, of the
network, of the blend at the chosen weight, and of one HGB on all features;
and CPU seconds of the bank, of the network's fold fits and of the HGB.

    BUDGETDAG_DATA=... PYTHONPATH=$PWD python benchmarks/bench_bank_blend.py \
        [--datasets letter landsat] [--networks sklearn own]

The machine is shared: CPU seconds are this process's (one thread).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import load  # noqa: E402

from budgetdag_core import BudgetDAGClassifier  # noqa: E402
from budgetdag_core.bank import MaskEncodedClassifier  # noqa: E402
from budgetdag_core.bank._dedicated import blend_weight  # noqa: E402
from budgetdag_core.bank._masked import masked_proba  # noqa: E402

DATASETS = ("letter", "landsat", "pima", "shuttle")


def network(kind: str, seed: int):
    """A network on all features: scikit-learn's MLP (256, 128) with early
    stopping (``sklearn``), or this package's float32 network of the same
    widths at its defaults (``own``: tuned for masked rows) or with a weak
    penalty and a slower rate (``own_tuned``)."""
    if kind == "sklearn":
        return make_pipeline(
            StandardScaler(),
            MLPClassifier((256, 128), early_stopping=True, random_state=seed),
        )
    tuned = {"alpha": 1e-4, "learning_rate_init": 1e-3} if kind == "own_tuned" else {}
    return MaskEncodedClassifier(
        hidden_layer_sizes=(256, 128), mask_dropout=0.0, random_state=seed, **tuned
    )


def error(proba: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(proba.argmax(axis=1) != y))


def run(name: str, kinds: list[str], folds: int, seed: int) -> None:
    d = load(name, quick=False, max_train=None)
    est = BudgetDAGClassifier(d.spec, random_state=seed, n_jobs=1)
    cpu = time.process_time()
    bank = est.fit_bank(d.X_train, d.y_train)
    bank_cpu = time.process_time() - cpu
    if not hasattr(bank, "oof_proba_"):  # the default chose a many-sensor DAG
        print(f"| {name} | (not a per-state bank: {type(bank).__name__}) |")
        return
    classes = np.unique(d.y_train)
    y = np.searchsorted(classes, np.asarray(d.y_train))
    yt = np.searchsorted(classes, np.asarray(d.y_test))
    X = d.X_train[d.spec.columns].to_numpy(float)
    Xt = d.X_test[d.spec.columns].to_numpy(float)
    C, K = len(classes), bank.n_states
    oof_bank = np.asarray(bank.oof_proba_[:, K - 1], dtype=float)
    test_bank = bank.predict_proba(Xt, K - 1)
    cpu = time.process_time()
    hgb = HistGradientBoostingClassifier(
        max_iter=200, early_stopping=True, random_state=seed
    ).fit(X, y)
    hgb_cpu = time.process_time() - cpu
    hgb_err = error(masked_proba(hgb, Xt, C), yt)
    for kind in kinds:
        cpu = time.process_time()
        oof = np.zeros((len(X), C))
        split = StratifiedKFold(folds, shuffle=True, random_state=seed)
        for train, test in split.split(X, y):
            model = network(kind, seed).fit(X[train], y[train])
            oof[test] = masked_proba(model, X[test], C)
        folds_cpu = time.process_time() - cpu
        served = network(kind, seed).fit(X, y)
        test_net = masked_proba(served, Xt, C)
        w, _ = blend_weight(oof_bank, oof, y)
        blend = (1 - w) * test_bank + w * test_net
        print(
            f"| {name} | {kind} | {error(test_bank, yt):.4f} | "
            f"{error(test_net, yt):.4f} | {w:g} | {error(blend, yt):.4f} | "
            f"{hgb_err:.4f} | {bank_cpu / hgb_cpu:.1f} | "
            f"{folds_cpu / hgb_cpu:.1f} |",
            flush=True,
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    parser.add_argument(
        "--networks", nargs="*", default=["sklearn", "own", "own_tuned"]
    )
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(
        "| data | network | bank all-sensor | network | weight (OOF) | blend | "
        "one HGB | bank CPU × HGB | network folds CPU × HGB |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in args.datasets:
            run(name, args.networks, args.folds, args.seed)


if __name__ == "__main__":
    main()
