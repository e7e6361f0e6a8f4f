"""Which learned policy beats the confidence cascade? Candidate configurations
(node learner x policy inputs x stop loss) against the cascade and the
fixed-subset hull, read at 25/50/75 % of the all-sensor cost.

    PYTHONPATH=. python benchmarks/bench_policy_configs.py landsat letter pima \
        [--configs paper ft-proba-expected ...] [--out benchmarks/out/policy_configs.md]

Data files are found as in ``run_all.py``; from a worktree outside the main
checkout set ``BUDGETDAG_DATA=/work/shared/datasets``. shuttle (512 states) is
supported but was not run (its bank takes long on a shared 2-core machine).

For each dataset there is a validation problem (bank and policies fitted on 75 %
of the TRAIN rows, evaluated on the other 25 %; pima: 5 seeded splits) and the
test problem (fitted on all training rows, evaluated on the test split). The
configuration is chosen on validation numbers only; test numbers are reported.
The bank of a problem is fitted once (cached on disk, see
``_common.cached_bank``) and reused by every configuration and cost scale.

Every curve is read on the lower convex hull of its own points (cost, error):
the DAG's points over a grid of cost scales, the cascade's over thresholds, the
fixed subsets' (every DAG state's classifier for all rows).

The cascade (issue 14): sensors (DAG units) in one order, chosen greedily on
out-of-fold error decrease per unit cost; stop at the first state whose
classifier's top-class probability reaches tau; tau swept over quantiles of the
out-of-fold confidences. Same bank and cost accounting as the DAG.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from _common import (  # noqa: E402
    Problem,
    bank_params,
    cached_bank,
    problems,
)

from budgetdag_core import BudgetDAGClassifier  # noqa: E402
from budgetdag_core.decisions import encode_labels  # noqa: E402
from budgetdag_core.tradeoff._baselines import (  # noqa: E402
    StatePredictions,
    bank_state_predictions,
    curve_at,
    dag_point,
    lower_convex_hull,
)
from budgetdag_core.tradeoff._sweep import check_fit_data  # noqa: E402

FRACTIONS = (0.25, 0.5, 0.75)

#: name -> estimator parameters of a candidate policy configuration.
#: The library's default configuration, what the paired table compares against.
DEFAULT_CONFIG = "ft1-proba-expected"
CONFIGS: dict[str, dict] = {
    # the paper: filter tree on sensor values, 0/1 stop losses, degree 2 (explicit:
    # the library's defaults are no longer the paper's)
    "paper": {
        "policy_features": "sensors",
        "stop_loss": "zero_one",
        "policy_degree": 2,
    },
    "ft-sensors+conf": {"policy_features": "sensors+confidence"},
    # sensor values + confidence with the expected losses, linear (degree 2 on
    # the wide states of spam and dna is too slow to sweep)
    "ft1-sensors+conf-expected": {
        "policy_features": "sensors+confidence",
        "stop_loss": "expected",
        "policy_degree": 1,
    },
    # sensor values beside the probabilities (issue 30: a routing sensor leaves
    # the probabilities at the prior); "auto" resolves to expected losses, degree 1
    "ft1-sensors+proba-expected": {"policy_features": "sensors+proba"},
    "ft-conf": {"policy_features": "confidence"},
    "ft-conf-soft": {"policy_features": "confidence", "stop_loss": "soft"},
    "ft-conf-expected": {"policy_features": "confidence", "stop_loss": "expected"},
    "ft-proba": {"policy_features": "proba"},
    "ft-proba-soft": {"policy_features": "proba", "stop_loss": "soft"},
    "ft-proba-expected": {"policy_features": "proba", "stop_loss": "expected"},
    "ft1-proba-expected": {
        "policy_features": "proba",
        "stop_loss": "expected",
        "policy_degree": 1,
    },
    "csr-proba-expected": {
        "policy_learner": "cost_regression",
        "policy_features": "proba",
        "stop_loss": "expected",
    },
    "boost-proba-expected": {
        "policy_learner": "boosted",
        "policy_features": "proba",
        "stop_loss": "expected",
    },
    "boost-proba": {"policy_learner": "boosted", "policy_features": "proba"},
}


# ------------------------------------------------------------------ readouts
def hull_at(cost: np.ndarray, error: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Error of the lower convex hull of the points at costs ``at``."""
    cost, error = np.asarray(cost, float), np.asarray(error, float)
    idx = lower_convex_hull(cost, error)
    return curve_at(cost[idx], error[idx], at)


# ------------------------------------------------------------------- cascade
def cascade_order(train: StatePredictions, dag) -> list[int]:
    """States of a greedy chain from the root: each step adds the unit with the
    largest out-of-fold error decrease per unit of cost (ties: cheapest)."""
    err = (~train.correct).mean(axis=0)
    cost = train.costs.mean(axis=0)
    chain = [0]
    while dag.children[chain[-1]]:
        k = chain[-1]
        best = max(
            dag.children[k],
            key=lambda uc: (
                (err[k] - err[uc[1]]) / max(cost[uc[1]] - cost[k], 1e-12),
                -cost[uc[1]],
            ),
        )
        chain.append(best[1])
    return chain


def cascade_points(
    train: StatePredictions,
    evalv: StatePredictions,
    chain: list[int],
    top_train: np.ndarray,
    top_eval: np.ndarray,
    n_tau: int = 60,
) -> pd.DataFrame:
    """(avg_cost, error) of the cascade on ``evalv`` for thresholds tau."""
    qs = np.quantile(top_train[:, chain[1:]], np.linspace(0, 1, n_tau))
    taus = np.unique(np.concatenate([[0.0], qs, [1.01]]))
    rows = np.arange(evalv.n_samples)
    conf = top_eval[:, chain]  # (n, len(chain))
    out = []
    for tau in taus:
        ok = conf >= tau
        ok[:, -1] = True
        stop = np.asarray(chain)[ok.argmax(axis=1)]
        out.append(
            {
                "tau": tau,
                "avg_cost": float(evalv.costs[rows, stop].mean()),
                "error": float((evalv.pred[rows, stop] != evalv.y).mean()),
            }
        )
    return pd.DataFrame(out)


# ---------------------------------------------------------------- one problem
def views(p: Problem, bank, dag) -> tuple[StatePredictions, StatePredictions]:
    """Out-of-fold training view and evaluation view, with probabilities +
    confidences as ``conf`` (the "proba" inputs; the last 3 are confidences)."""
    template = BudgetDAGClassifier(p.spec, **bank_params(p))
    data = check_fit_data(template, p.X_fit, p.y_fit, None)
    train = bank_state_predictions(
        bank,
        data.Xv,
        data.y_enc,
        dag,
        data.costs,
        out_of_fold=True,
        with_confidence="proba",
        split="train",
    )
    Xe = p.X_eval[list(p.spec.columns)].to_numpy(float)
    evalv = bank_state_predictions(
        bank,
        Xe,
        encode_labels(p.y_eval, data.classes),
        dag,
        data.costs,
        out_of_fold=False,
        with_confidence="proba",
        split="eval",
    )
    # The whole input tables, sliced per configuration by view_for.
    return (
        dataclasses.replace(train, conf=train.model_inputs()),
        dataclasses.replace(evalv, conf=evalv.model_inputs()),
    )


def view_for(sp: StatePredictions, mode: str) -> StatePredictions:
    if mode in ("confidence", "sensors+confidence"):
        return dataclasses.replace(sp, conf=sp.conf[..., -3:])
    if mode == "sensors":
        return dataclasses.replace(sp, conf=None)
    return sp


def prepared(
    p: Problem, bank
) -> tuple[Any, StatePredictions, StatePredictions, tuple[float, float]]:
    """The problem's sensor DAG, out-of-fold training view, evaluation view and
    the range of cost scales worth sweeping (from a reference fit with the bank)."""
    ref = BudgetDAGClassifier(p.spec, cost_scale=1e9, **bank_params(p))
    ref.fit(p.X_fit, p.y_fit, bank=bank)
    dag = ref.sensor_dag_
    train, evalv = views(p, bank, dag)
    scales = check_fit_data(ref, p.X_fit, p.y_fit, None).scale_range()
    return dag, train, evalv, scales


def run_problem(p: Problem, configs: list[str], cache_dir: Path, n_scales: int):
    bank = cached_bank(p, cache_dir)
    params = bank_params(p)
    dag, train, evalv, (low, high) = prepared(p, bank)
    all_cost = float(evalv.costs[:, -1].mean())
    at = np.array(FRACTIONS) * all_cost
    rows = []

    def record(method: str, pts: pd.DataFrame, seconds: float = 0.0) -> None:
        errs = hull_at(pts["avg_cost"], pts["error"], at)
        rows.append(
            {
                "dataset": p.dataset,
                "role": p.role,
                "seed": p.seed,
                "method": method,
                **{f"e{int(f * 100)}": e for f, e in zip(FRACTIONS, errs, strict=True)},
                "n_points": len(pts),
                "seconds": seconds,
                "all_err": float((evalv.pred[:, -1] != evalv.y).mean()),
            }
        )

    fixed = pd.DataFrame(
        {
            "avg_cost": evalv.costs.mean(axis=0),
            "error": (~evalv.correct).mean(axis=0),
        }
    )
    record("hull", fixed)
    chain = cascade_order(train, dag)
    top_train, top_eval = train.conf[..., -3], evalv.conf[..., -3]
    record("cascade", cascade_points(train, evalv, chain, top_train, top_eval))

    for name in configs:
        cfg = CONFIGS[name]
        mode = cfg.get("policy_features", "sensors")
        sp, sp_train = view_for(evalv, mode), view_for(train, mode)
        t0 = time.perf_counter()
        pts = sweep(p, bank, params, cfg, sp, sp_train, low, high, n_scales)
        seconds = (time.perf_counter() - t0) / len(pts)
        record(name, pd.DataFrame(pts), seconds)
    for r in rows:
        print(
            f"  {p.tag:16s} {r['method']:22s} "
            + " ".join(f"{r[c]:.4f}" for c in ("e25", "e50", "e75", "all_err"))
            + f" {r['seconds']:.2f}s",
            flush=True,
        )
    return rows


def sweep(p, bank, params, cfg, sp, sp_train, low, high, n_scales) -> list[dict]:
    """DAG points over cost scales: a geometric grid, then scales placed in the
    widest gaps of the TRAINING (out-of-fold) curve's average cost, so the
    curve has points where it moves (the evaluation rows are not looked at)."""
    n_grid = max(3, n_scales // 2)
    scales = [0.0, *np.geomspace(low, high, n_grid - 1)]
    done: dict[float, tuple[dict, dict]] = {}

    def point(s: float) -> None:
        model = BudgetDAGClassifier(p.spec, cost_scale=float(s), **params, **cfg)
        model.fit(p.X_fit, p.y_fit, bank=bank)
        done[s] = (dag_point(model, sp), dag_point(model, sp_train))

    for s in scales:
        point(s)
    while len(done) < n_scales:
        order = sorted(done)
        costs = [done[s][1]["avg_cost"] for s in order]
        gaps = [abs(a - b) for a, b in zip(costs, costs[1:], strict=False)]
        i = int(np.argmax(gaps))
        lo, hi = order[i], order[i + 1]
        point(float(np.sqrt(lo * hi)) if lo > 0 else hi / 4)
    return [done[s][0] for s in sorted(done)]


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per (dataset, role, method); datasets and roles in the
    order they first appear (rows of runs combined later join their dataset)."""
    cols = ["e25", "e50", "e75", "all_err", "seconds"]
    first = {name: i for i, name in enumerate(frame.dataset.unique())}
    roles = {role: i for i, role in enumerate(frame.role.unique())}
    frame = frame.sort_values(
        ["dataset", "role"],
        key=lambda c: c.map(first if c.name == "dataset" else roles),
        kind="stable",
    )
    return frame.groupby(["dataset", "role", "method"], sort=False)[cols].mean()


def validation_errors(frame: pd.DataFrame) -> pd.DataFrame:
    """The validation rows of ``frame`` with ``error``: the mean of the errors
    at 25/50/75 % of the cost, what the choice tables compare."""
    val = frame[frame.role == "val"]
    return val.assign(error=val[["e25", "e50", "e75"]].mean(axis=1))


def validation_ranks(frame: pd.DataFrame) -> pd.DataFrame:
    """How the configurations compare on validation rows: per dataset, each
    configuration's error averaged over 25/50/75 % and over the validation
    splits, ranked within the dataset (1 = lowest; ties share); then the mean
    rank and the mean excess over the dataset's best configuration."""
    val = validation_errors(frame)
    # Baselines and the paper's configuration (reported apart) are not candidates.
    val = val[~val.method.isin(["hull", "cascade", "paper"])]
    per = val.groupby(["dataset", "method"]).error.mean()
    table = per.unstack("dataset")
    ranks = table.rank()
    return pd.DataFrame(
        {
            "mean rank": ranks.mean(axis=1),
            "mean excess over best": (table - table.min()).mean(axis=1),
            "datasets": table.notna().sum(axis=1),
            "validation splits": val.groupby("method").size(),
        }
    ).sort_values(["mean rank", "mean excess over best"])


def paired_with_default(frame: pd.DataFrame) -> pd.DataFrame:
    """Each configuration against the default on the same validation splits:
    the mean and standard error over (dataset, split) of its error (averaged
    over 25/50/75 %) minus the default's, and on how many splits it is lower
    or higher. Unlike ranks, this does not move when a candidate is added."""
    table = validation_errors(frame).pivot_table(
        index=["dataset", "seed"], columns="method", values="error"
    )
    rows = {}
    for method in table.columns.drop(DEFAULT_CONFIG):
        diff = (table[method] - table[DEFAULT_CONFIG]).dropna()
        rows[method] = {
            "mean difference": diff.mean(),
            "standard error": diff.std(ddof=1) / np.sqrt(len(diff)),
            "lower": int((diff < 0).sum()),
            "higher": int((diff > 0).sum()),
            "splits": len(diff),
        }
    counts = dict.fromkeys(("lower", "higher", "splits"), int)
    return pd.DataFrame(rows).T.astype(counts).sort_values("mean difference")


def main() -> None:
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*")
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS))
    parser.add_argument("--roles", nargs="*", default=["val", "test"])
    parser.add_argument("--n-scales", type=int, default=14)
    parser.add_argument(
        "--val-seeds",
        nargs="*",
        type=int,
        default=[0],
        help="seeds of the validation splits of the TRAIN rows (pima: its 5 "
        "seeded train/test splits, one validation split each)",
    )
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/h4_banks"))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--from-csv",
        nargs="*",
        type=Path,
        default=None,
        help="only combine the per-problem rows of earlier runs (their .csv)",
    )
    args = parser.parse_args()
    if args.from_csv:
        frame = pd.concat([pd.read_csv(f) for f in args.from_csv], ignore_index=True)
    else:
        rows = []
        for name in args.datasets:
            for p in problems(name, val_seeds=tuple(args.val_seeds)):
                if p.role in args.roles:
                    rows.extend(
                        run_problem(p, args.configs, args.cache_dir, args.n_scales)
                    )
        frame = pd.DataFrame(rows)
    table = summarise(frame)
    text = table.round(4).to_string()
    if (frame.role == "val").any():
        text += (
            "\n\nValidation ranks (per dataset: error averaged over 25/50/75 % and "
            "the validation splits; then the mean over datasets):\n\n"
            + validation_ranks(frame).round(5).to_string()
        )
        if DEFAULT_CONFIG in set(frame.method):
            text += (
                f"\n\nPaired with the default ({DEFAULT_CONFIG}) on the same "
                "validation splits (error averaged over 25/50/75 %, minus the "
                "default's; negative: lower than the default):\n\n"
                + paired_with_default(frame).round(5).to_string()
            )
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(args.out.with_suffix(".csv"), index=False)
        args.out.write_text(
            "Policy configurations vs cascade and fixed-subset hull: error on the "
            "lower convex hull at 25/50/75 % of the all-sensor cost "
            "(role val: 25 % of TRAIN held out, seeded splits, used to choose; "
            "role test: reported; both the mean over their splits). seconds: "
            "mean policy fit per cost scale (bank reused).\n\n" + text + "\n"
        )


if __name__ == "__main__":
    main()
