"""The regressor: the default (boosting) bank's DAG against its hull (issue 17).

On Friedman #1 (``make_friedman1``, synthetic) and diabetes (``load_diabetes``,
a real table that ships with scikit-learn; California housing is a download
and not available offline), with sensors of small column groups, prints and
writes to ``benchmarks/out/regressor.md``:

- the DAG's test MSE at 25/50/75 % of the all-sensor cost, read on the lower
  convex hull of its points over a ``cost_scale`` sweep (the bank is fitted
  once, the policies refitted per scale with ``refit_policies``), for the
  default boosting bank and for the ridge bank (``regressor="ridge"``);
- the fixed-subset hull: every DAG state's model applied to all test rows;
- one ``HistGradientBoostingRegressor(max_iter=200, early_stopping=True)`` and
  one standardised ridge on all features.

Diabetes has 442 rows, so its numbers are averaged over seeded 70/30 splits
(``--repeats``). Run from the repository root::

    python -m benchmarks.bench_regressor [--repeats 3] [--no-write]

``--many-sensors`` instead measures the default beyond 12 sensors (a sparse
DAG on the any-subset regressor bank, issue 37) on tables of one unit-cost
sensor per column: Friedman #1 with 24 columns (5 informative; 1 000 training
and 1 000 test rows per seed) and landsat's centre pixel's fourth band
predicted from the other 35 values (1 000 training rows drawn by seed from
the training file, its 2 000 test rows). It prints, and writes to
``benchmarks/out/regressor_many.md``, the default's test MSE at 10/25/50 % of
the all-sensor cost (lower convex hull of a ``cost_scale`` sweep on one bank)
beside the fixed-subset hull read on the same bank (the chain's prefixes: the
greedy order's first sensors for every row), and the speed of the default
fit, of a refit and of the sweep as CPU ratios to one single-threaded HGB,
mean over ``--repeats`` seeds::

    python -m benchmarks.bench_regressor --many-sensors [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from budgetdag_core import BudgetDAGRegressor, SensorSpec, load_demo
from budgetdag_core.tradeoff import lower_convex_hull

RESULTS = Path(__file__).parent / "out" / "regressor.md"
RESULTS_MANY = Path(__file__).parent / "out" / "regressor_many.md"
FRACTIONS = (0.25, 0.5, 0.75)
#: cost_scale grid as multiples of var(y) per unit of cost (0 = buy freely).
#: Dense enough that the policies' jumps between cost levels leave no gap (with
#: 10 points diabetes had none between 1.4 and 5.0 of its 7 cost units).
RELATIVE_SCALES = (0.0, *np.geomspace(1e-3, 1.0, 19).round(5))


def friedman() -> tuple[pd.DataFrame, np.ndarray, SensorSpec]:
    """2000 rows, 10 columns (5 informative); 5 sensors of 2 columns, cost 1."""
    X, y = make_friedman1(n_samples=2000, n_features=10, noise=1.0, random_state=0)
    X = pd.DataFrame(X, columns=[f"x{i}" for i in range(10)])
    sensors = [
        {"name": f"x{2 * i}x{2 * i + 1}", "columns": [f"x{2 * i}", f"x{2 * i + 1}"]}
        for i in range(5)
    ]
    return X, y, SensorSpec.from_dict({"sensors": [s | {"cost": 1.0} for s in sensors]})


def diabetes() -> tuple[pd.DataFrame, np.ndarray, SensorSpec]:
    """442 patients; demographics, BMI, blood pressure (cost 1 each) and two
    panels of three blood serum measurements (cost 2 each)."""
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    groups = {
        "demographics": (["age", "sex"], 1.0),
        "bmi": (["bmi"], 1.0),
        "bp": (["bp"], 1.0),
        "serum_123": (["s1", "s2", "s3"], 2.0),
        "serum_456": (["s4", "s5", "s6"], 2.0),
    }
    spec = SensorSpec.from_dict(
        {
            "sensors": [
                {"name": k, "columns": cols, "cost": c}
                for k, (cols, c) in groups.items()
            ]
        }
    )
    return X, y.to_numpy(float), spec


DATASETS: dict[str, Callable[[], tuple[pd.DataFrame, np.ndarray, SensorSpec]]] = {
    "friedman1": friedman,
    "diabetes": diabetes,
}


def hull_at(cost: np.ndarray, mse: np.ndarray, at: np.ndarray) -> np.ndarray:
    """MSE of the lower convex hull of the points at costs ``at`` (NaN below
    the cheapest point)."""
    idx = lower_convex_hull(cost, mse)
    hc, he = np.asarray(cost)[idx], np.asarray(mse)[idx]
    out = np.interp(at, hc, he)
    return np.where(at < hc[0] - 1e-12, np.nan, out)


def one_split(X, y, spec, seed: int) -> dict[str, np.ndarray | float]:
    """Budget readouts of one seeded 70/30 split."""
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed)
    total = spec.total_cost
    at = np.array(FRACTIONS) * total
    var = float(np.var(y_tr))
    out: dict[str, np.ndarray | float] = {}
    for kind in ("boosting", "ridge"):
        start = time.perf_counter()
        base = BudgetDAGRegressor(
            spec, regressor=kind, cost_scale=0.0, random_state=seed
        ).fit(X_tr, y_tr)
        points = []
        for rel in RELATIVE_SCALES:
            model = base if rel == 0 else base.refit_policies(X_tr, y_tr, rel * var)
            res = model.evaluate(X_te, y_te)
            points.append((res["avg_cost"], res["mse"]))
        out[f"{kind}_secs"] = time.perf_counter() - start
        states = base.evaluate_states(X_te, y_te)
        cost, mse = np.array(points).T
        # The empty state (cost 0) is always available to a policy too.
        cost = np.append(cost, 0.0)
        mse = np.append(mse, states["mse"].iloc[0])
        out[f"dag_{kind}"] = hull_at(cost, mse, at)
        out[f"fixed_{kind}"] = hull_at(
            states["avg_cost"].to_numpy(float), states["mse"].to_numpy(float), at
        )
        out[f"full_bank_{kind}"] = float(states["mse"].iloc[-1])
    with threadpool_limits(limits=1):
        hgb = HistGradientBoostingRegressor(
            max_iter=200, early_stopping=True, random_state=seed
        ).fit(X_tr, y_tr)
        out["hgb"] = float(np.mean((hgb.predict(X_te) - y_te) ** 2))
        ridge = make_pipeline(StandardScaler(), Ridge()).fit(X_tr, y_tr)
        out["ridge"] = float(np.mean((ridge.predict(X_te) - y_te) ** 2))
    return out


def run(name: str, repeats: int) -> tuple[str, dict]:
    X, y, spec = DATASETS[name]()
    splits = [one_split(X, y, spec, seed) for seed in range(repeats)]
    mean = {k: np.mean([s[k] for s in splits], axis=0) for k in splits[0]}
    total = spec.total_cost
    header = (
        f"{name}: {len(X)} rows, {spec.n_sensors} sensors "
        f"({', '.join(f'{n} {spec.costs[n]:g}' for n in spec.names)}; total cost "
        f"{total:g}), 70/30 split, mean over {repeats} seeded split(s)"
    )
    return header, mean


def render(results: dict[str, tuple[str, dict]], repeats: dict[str, int]) -> str:
    lines = [
        "# Regressor: default boosting bank vs its fixed-subset hull",
        "",
        "Written by `benchmarks/bench_regressor.py` from the numbers it measured;",
        "rerun the command, do not edit by hand. Test MSE (lower is better). The",
        "DAG columns read the lower convex hull of its points over a `cost_scale`",
        "sweep at 25/50/75 % of the all-sensor cost, as the classifier benchmarks",
        "do; the fixed-subset hull is every DAG state's model applied to all test",
        "rows; the last columns are one model on all features (single-threaded).",
        "",
        f"Command: `python -m benchmarks.bench_regressor --repeats "
        f"{max(repeats.values())}`",
        "",
    ]
    for name, (header, m) in results.items():
        lines += [
            f"## {name}",
            "",
            header + ".",
            "",
            "| budget | DAG, boosting bank | fixed-subset hull, boosting | "
            "DAG, ridge bank | fixed-subset hull, ridge |",
            "| --- | --- | --- | --- | --- |",
        ]
        for i, f in enumerate(FRACTIONS):
            lines.append(
                f"| {f:.0%} | {m['dag_boosting'][i]:.2f} | "
                f"{m['fixed_boosting'][i]:.2f} | {m['dag_ridge'][i]:.2f} | "
                f"{m['fixed_ridge'][i]:.2f} |"
            )
        lines += [
            "",
            "| all features | MSE |",
            "| --- | --- |",
            f"| one HistGradientBoostingRegressor(max_iter=200, early_stopping=True)"
            f" | {m['hgb']:.2f} |",
            f"| standardised ridge | {m['ridge']:.2f} |",
            f"| the boosting bank's all-sensor state | {m['full_bank_boosting']:.2f} |",
            f"| the ridge bank's all-sensor state | {m['full_bank_ridge']:.2f} |",
            "",
            f"Fit + {len(RELATIVE_SCALES) - 1} policy refits + evaluation per split: "
            f"boosting bank {m['boosting_secs']:.1f} s, ridge bank "
            f"{m['ridge_secs']:.1f} s (shared 2-core machine).",
            "",
        ]
    return "\n".join(lines)


# ------------------------------------------------------------ many sensors
#: Estimator settings of the many-sensor runs beyond the defaults
#: (``--params``, JSON): a design measured against the default.
PARAMS: dict = {}
MANY_FRACTIONS = (0.10, 0.25, 0.50)
#: cost_scale grid of the many-sensor sweep (multiples of var(y) per unit cost).
MANY_SCALES = (0.0, *np.geomspace(1e-3, 1.0, 10).round(5))
Split = tuple[pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray, SensorSpec]


def friedman_many(seed: int) -> Split:
    """Friedman #1 with 24 columns (5 informative), one unit-cost sensor each."""
    X, y = make_friedman1(n_samples=2000, n_features=24, noise=1.0, random_state=seed)
    X = pd.DataFrame(X, columns=[f"x{i}" for i in range(24)])
    spec = SensorSpec.per_column(list(X.columns))
    return X[:1000], y[:1000], X[1000:], y[1000:], spec


def landsat_centre(seed: int) -> Split:
    """Landsat's centre pixel's fourth band (``f19``) from the other 35 values
    (one unit-cost sensor each); 1 000 training rows drawn by seed."""
    demo = load_demo("landsat")
    rows = np.random.default_rng(seed).choice(len(demo.X_train), 1000, replace=False)
    train = demo.X_train.iloc[np.sort(rows)]
    X, Xt = train.drop(columns="f19"), demo.X_test.drop(columns="f19")
    spec = SensorSpec.per_column(list(X.columns))
    return X, train["f19"].to_numpy(float), Xt, demo.X_test["f19"].to_numpy(float), spec


MANY_DATASETS: dict[str, Callable[[int], Split]] = {
    "friedman1_24": friedman_many,
    "landsat_centre": landsat_centre,
}


def many_sensor_split(name: str, seed: int) -> dict[str, np.ndarray | float]:
    """The default's and the fixed-subset hull's MSE at the budgets, one seed."""
    X, y, Xt, yt, spec = MANY_DATASETS[name](seed)
    at = np.array(MANY_FRACTIONS) * spec.total_cost
    var = float(np.var(y))
    # The unit of the speed ratios: one single-threaded HGB, CPU seconds.
    with threadpool_limits(limits=1):
        cpu = time.process_time()
        hgb = HistGradientBoostingRegressor(
            max_iter=200, early_stopping=True, random_state=seed
        ).fit(X, y)
        hgb_cpu = time.process_time() - cpu
        # What a user's first call runs: no bank, cost_scale="auto".
        cpu = time.process_time()
        BudgetDAGRegressor(spec, random_state=seed, n_jobs=1, **PARAMS).fit(X, y)
        default_cpu = time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    # The bank of every strategy "auto" builds: a fitted model's ``bank_``
    # keeps only the DAG it chose, and the fixed subsets below need the chain.
    base = BudgetDAGRegressor(
        spec, cost_scale=0.0, random_state=seed, n_jobs=1, **PARAMS
    )
    bank = base.fit_bank(X, y)
    base.fit(X, y, bank=bank)
    fit_secs, fit_cpu = time.perf_counter() - start, time.process_time() - cpu
    points, grown, refit_cpu = [], 0, 0.0
    for rel in MANY_SCALES:
        cpu = time.process_time()
        model = base if rel == 0 else base.refit_policies(X, y, rel * var)
        refit_cpu += time.process_time() - cpu
        res = model.evaluate(Xt, yt)
        points.append((res["avg_cost"], res["mse"]))
        grown += model.strategy_ == "grown"
    # The fixed subsets on the same bank: the chain's states (its prefixes).
    chain = BudgetDAGRegressor(spec, dag="chain", random_state=seed, **PARAMS)
    states = chain.fit(X, y, bank=bank).evaluate_states(Xt, yt)
    cost, mse = np.array(points).T
    cost = np.append(cost, 0.0)  # the empty state is every policy's too
    mse = np.append(mse, states["mse"].iloc[0])
    n_refits = len(MANY_SCALES) - 1
    return {
        "dag": hull_at(cost, mse, at),
        "fixed": hull_at(
            states["avg_cost"].to_numpy(float), states["mse"].to_numpy(float), at
        ),
        "all_sensors": float(states["mse"].iloc[-1]),
        "hgb": float(np.mean((hgb.predict(Xt) - yt) ** 2)),
        "var": float(np.var(yt)),
        "fit_secs": fit_secs,
        # CPU seconds as ratios to the HGB's: the default fit, the bank with
        # one policy, a refit for a new scale (mean) and the sweep's refits.
        "hgb_cpu": hgb_cpu,
        "default_ratio": default_cpu / hgb_cpu,
        "fit_ratio": fit_cpu / hgb_cpu,
        "refit_ratio": refit_cpu / n_refits / hgb_cpu,
        "sweep_ratio": refit_cpu / hgb_cpu,
        "grown_share": grown / len(MANY_SCALES),
        "boosting_bank": float(base.bank_.kind_ == "boosting"),
    }


def provenance() -> str:
    """The commit that ran, the finish time and the machine, in words."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from _report import current_commit, machine

    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return f"commit `{current_commit()}`, finished {stamp}, on {machine()}"


def render_many(results: dict[str, dict], repeats: int) -> str:
    lines = [
        "# Regressor beyond 12 sensors: "
        + (f"with {json.dumps(PARAMS)}" if PARAMS else "the default")
        + " vs its fixed-subset hull",
        "",
        "Written by `benchmarks/bench_regressor.py --many-sensors`; rerun, do not",
        "edit. Test MSE (lower is better) at 10/25/50 % of the all-sensor cost,",
        f'mean over {repeats} seed(s): the default (`dag="auto"` on the',
        "any-subset regressor bank; lower convex hull of a `cost_scale` sweep on",
        "one bank) and the fixed-subset hull on the same bank (the chain's",
        "prefixes, every row the same sensors).",
        "",
        f"Command: `python -m benchmarks.bench_regressor --many-sensors --repeats "
        f"{repeats}"
        + (f" --params '{json.dumps(PARAMS)}'" if PARAMS else "")
        + f"`, {provenance()}",
        "",
        "| data | budget | default | fixed-subset hull |",
        "| --- | --- | --- | --- |",
    ]
    for name, m in results.items():
        for i, f in enumerate(MANY_FRACTIONS):
            lines.append(
                f"| {name} | {f:.0%} | {m['dag'][i]:.3f} | {m['fixed'][i]:.3f} |"
            )
    lines += ["", "| data | all sensors (bank) | HGB(200) all | var(y) | fit s |"]
    lines += ["| --- | --- | --- | --- | --- |"]
    for name, m in results.items():
        lines.append(
            f"| {name} | {m['all_sensors']:.3f} | {m['hgb']:.3f} | {m['var']:.2f} | "
            f"{m['fit_secs']:.1f} |"
        )
    lines += [
        "",
        "Speed, CPU seconds as ratios to one single-threaded "
        "`HistGradientBoostingRegressor(max_iter=200, early_stopping=True)` "
        "on all features, in the same run (mean over the seeds): the default "
        '(`cost_scale="auto"`, no bank given), the bank with one policy, one '
        f"refit for a new scale, and the sweep's {len(MANY_SCALES) - 1} refits "
        "(bank reused).",
        "",
        "| data | HGB fit s | default fit | bank + one policy | refit | sweep |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, m in results.items():
        lines.append(
            f"| {name} | {m['hgb_cpu']:.2f} | {m['default_ratio']:.1f}× | "
            f"{m['fit_ratio']:.1f}× | {m['refit_ratio']:.2f}× | "
            f"{m['sweep_ratio']:.1f}× |"
        )
    lines += [
        "",
        "Share of sweep points keeping the grown DAG: "
        + ", ".join(f"{n} {m['grown_share']:.2f}" for n, m in results.items())
        + "; share of seeds whose bank kept boosting (else ridge): "
        + ", ".join(f"{n} {m['boosting_bank']:.2f}" for n, m in results.items())
        + ".",
        "",
    ]
    return "\n".join(lines)


def run_many(repeats: int, write: bool) -> None:
    results = {}
    for name in MANY_DATASETS:
        splits = [many_sensor_split(name, seed) for seed in range(repeats)]
        results[name] = {k: np.mean([s[k] for s in splits], axis=0) for k in splits[0]}
        print(name, {k: np.round(v, 3) for k, v in results[name].items()}, flush=True)
    report = render_many(results, repeats)
    print(report)
    if write:
        RESULTS_MANY.parent.mkdir(parents=True, exist_ok=True)
        RESULTS_MANY.write_text(report)
        print(f"wrote {RESULTS_MANY}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="diabetes splits")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--no-write", action="store_true", help="only print")
    parser.add_argument(
        "--many-sensors",
        action="store_true",
        help="the default beyond 12 sensors (sparse DAG) vs its fixed-subset hull",
    )
    parser.add_argument(
        "--params",
        default="{}",
        help="with --many-sensors: estimator settings (JSON) instead of the "
        "defaults, e.g. a design to measure",
    )
    args = parser.parse_args()
    PARAMS.update(json.loads(args.params))
    if args.many_sensors:
        if args.repeats < 1:
            raise ValueError(f"--repeats must be at least 1, got {args.repeats}.")
        run_many(args.repeats, not args.no_write)
        return
    unknown = sorted(set(args.datasets) - set(DATASETS))
    if unknown:
        raise ValueError(f"Unknown dataset(s) {unknown}; known: {list(DATASETS)}.")
    if args.repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {args.repeats}.")
    # Friedman #1 has 600 test rows: one split; diabetes 133: average several.
    repeats = {n: (args.repeats if n == "diabetes" else 1) for n in args.datasets}
    results = {n: run(n, repeats[n]) for n in args.datasets}
    report = render(results, repeats)
    print(report)
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(report)
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
