"""Many sensors, one at a time: BudgetDAG against the AFA peers (issue 30).

    python benchmarks/bench_afa.py [--datasets cube cube_nm ...] [--seeds 0 1 2]
        [--methods dag aaco greedy] [--dag-params JSON] [--peer-params JSON]
        [--n-points 40] [--n-jobs 1] [--out benchmarks/out/afa]

For each dataset and seed, on the SAME train/test rows (``_common.load``):

- ``allfeat``: one single-threaded ``HistGradientBoostingClassifier(max_iter=
  200, early_stopping=True)`` on all features: the reference error (target =
  its test error + 1 point) and the unit of the speed ratios;
- ``dag``, ``hull``, ``hull_oof``, ``cascade``: ``tradeoff_curve`` with the
  library's default settings (the dataset's settings less the paper's
  ``n_subsets``) updated by ``--dag-params`` (JSON, passed to
  ``BudgetDAGClassifier``; ``null`` removes a setting); the fixed-subset hulls
  and the confidence cascade come from the same bank: ``hull`` mixes the
  subsets on the test rows' own lower hull (chosen on the test rows: an
  optimistic bound), ``hull_oof`` those on the out-of-fold training rows'
  hull, read on the test rows (chosen as a user would choose them);
- ``paper``: the paper's many-sensor configuration (``n_subsets=8,
  include_all=True``, ``BenchData.paper_params``) on its own bank, where it
  applies;
- ``aaco`` (``_aaco.py``) and ``greedy`` (``_greedy_cmi.py``), sharing one
  masked classifier: AACO's points are its hard-budget rollout (every row buys
  t sensors, t = 0, 1, ...), the point of its own stopping rule on that
  rollout, and one soft-budget run per extra ``aaco_lambdas``; the greedy
  acquirer's are its hard-budget rollout and every stopping threshold on it.
  Rollouts stop at ``max_fraction`` of the all-sensor cost (default: all of it
  up to 8 sensors, 80 % up to 20, 60 % beyond); readings past it are n/a.

The DAGs' points are ``--n-points`` cost scales of one ``tradeoff_curve`` (40
by default): the peers' curves hold a point per sensor count and per stopping
threshold, and with 20 scales a DAG's curve could skip several sensors' cost
at the low budgets that are read.

Every method's test error is read off the lower convex hull of its points
(``_report.hull_of`` / ``error_at`` / ``cost_to_reach``) at 10, 25, 50 and 75 %
of the all-sensor cost; also the cost at which it first reaches ``allfeat``'s
error + 1 point, the fraction of test rows whose first purchase is the
``context`` sensor (CUBE-NM; for the DAG at its point nearest 25 % of the
cost), and speed: fit seconds and batch prediction rows/s as ratios to
``allfeat``'s fit and prediction in the same run, and the DAG's session step
(``model.start()``, ``next_sensor`` + ``observe``) in ms. The DAG's fit is
timed three ways: the bank with one policy at the curve's middle scale (the
choice of strategy there already made by the curve), a refit at twice that
scale, the *default fit*: a new estimator's ``fit`` with no bank and the
default ``cost_scale="auto"``, what a user's first call costs, and the
*what-if refit*: that default model's policies at twice its chosen scale
(``refit_policies``), what the app's retrain at a new cost runs after a first
training. The first refit follows a curve whose points grew every candidate
and held-out part; the what-if refit grows what its choice needs that the
default fit did not.

Outputs (``--out``; ``benchmarks/results/afa/NAME`` for the report, which
merges every run there): ``points.csv`` (every method's operating
points), ``readings.csv``, ``speed.csv``, ``tables.md`` (the printed tables)
and ``run.json`` (the command, the commit, the finish time); they are
rewritten after each dataset and seed.

``--peer-params`` (JSON) sets ``{"classifier": {...MaskedClassifier...},
"aaco": {...AACO...}, "greedy": {...GreedyCMI...}, "max_fraction": f,
"aaco_lambdas": [...]}``; ``"classifier": {"engine": "hgb"}`` for instance.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from _afa_common import MaskedClassifier, SensorColumns  # noqa: E402
from _afa_run import ROUTING_SENSOR, peer_settings, run_peers  # noqa: E402
from _common import (  # noqa: E402
    AFA,
    SMALL_MANY,
    BenchData,
    Clock,
    cost_to_reach,
    curve_on_test,
    default_params,
    error_at,
    hull_of,
    load,
    markdown_table,
    predict_rows_per_second,
    split_seeds,
    tiled,
    warm_up,
)
from _report import current_commit, machine  # noqa: E402

from budgetdag_core import BudgetDAGClassifier  # noqa: E402

FRACTIONS = (0.10, 0.25, 0.50, 0.75)
#: Target of "cost to reach": all-feature boosting's test error + this.
TARGET_SLACK = 0.01
METHODS = (
    "dag",
    "hull",
    "hull_oof",
    "cascade",
    "paper",
    "aaco",
    "greedy",
    "allfeat",
)
#: The methods read off the default's ``tradeoff_curve`` (one bank).
DAG_METHODS = ("dag", "hull", "hull_oof", "cascade")
LABELS = {
    "dag": "BudgetDAG (default)",
    "paper": "BudgetDAG, paper's n_subsets=8",
    "hull": "fixed-subset hull, subsets chosen on test rows",
    "hull_oof": "fixed-subset hull, subsets chosen on training rows",
    "cascade": "cascade",
    "aaco": "AACO",
    "greedy": "greedy CMI",
    "allfeat": "all-feature HGB",
}
DEFAULT_DATASETS = (
    "wine",
    "breast_cancer",
    "spam_400",
    "dna_400",
    "cube",
    "cube_03",
    "cube_nm",
    "cube_nm_5000",
    "spam",
    "digits",
    "cube_nm6",
    "landsat",
)
#: Test rows whose session steps are timed.
SESSION_ROWS = 100


# ------------------------------------------------------------------ reference
def all_feature_boosting(d: BenchData) -> dict:
    """Fit seconds, test error and prediction rows/s of one single-threaded HGB."""
    model = HistGradientBoostingClassifier(
        max_iter=200, early_stopping=True, random_state=0
    )
    with threadpool_limits(1):
        with Clock() as fit:
            model.fit(d.X_train, d.y_train)
        error = float((model.predict(d.X_test) != d.y_test).mean())
        rows_per_s = predict_rows_per_second(model, tiled(d.X_test, 20_000), 3)
    return {
        "fit_s": fit.wall, "fit_cpu_s": fit.cpu, "error": error,
        "rows_per_s": rows_per_s,
    }  # fmt: skip


# ------------------------------------------------------------------- the DAG
def first_sensor_share(acquired: pd.Series, sensor: str) -> float:
    """Fraction of rows whose first acquired sensor is ``sensor``."""
    firsts = acquired.map(lambda s: s[0] if len(s) else None)
    return float((firsts == sensor).mean())


def session_step_ms(model: BudgetDAGClassifier, X: pd.DataFrame) -> float:
    """Mean milliseconds of one session decision (``next_sensor`` + its
    ``observe``) over the first rows of ``X``, as a deployment runs them."""
    groups = model.spec_.groups
    rows = X.iloc[:SESSION_ROWS].to_dict("records")
    steps, seconds = 0, 0.0
    for row in rows:
        t0 = time.perf_counter()
        session = model.start()
        while (sensor := session.next_sensor()) is not None:
            session.observe(sensor, {c: row[c] for c in groups[sensor]})
            steps += 1
        session.predict()
        seconds += time.perf_counter() - t0
        steps += 1  # the final next_sensor() that says stop
    return 1000 * seconds / max(steps, 1)


def run_dag(
    d: BenchData, params: dict, args, *, timed: bool = True
) -> tuple[pd.DataFrame, dict]:
    """The DAG's curve, the two fixed-subset hulls and the cascade on the test
    rows (all on the DAG's own bank), and timings (``timed``)."""
    with Clock() as bank_clock:
        bank = BudgetDAGClassifier(d.spec, **params).fit_bank(d.X_train, d.y_train)
    with Clock() as sweep:
        res = curve_on_test(d, n_points=args.n_points, bank=bank, **params)
    frame = res.frame[res.frame["split"] == "test"]
    keep = frame[frame["method"].isin(DAG_METHODS)]
    points = keep[["method", "avg_cost", "error"]].assign(
        rule=keep["method"]
        .map({"dag": "cost scale", "hull": "subset", "hull_oof": "subset"})
        .fillna("threshold"),
        param=keep["cost_scale"].fillna(keep["threshold"]),
    )
    total = d.spec.total_cost
    dag_rows = frame[frame["method"] == "dag"]
    near = int((dag_rows["avg_cost"] - 0.25 * total).abs().to_numpy().argmin())
    model = res.models[res.model_index(dag_rows.index[near])]
    if not timed:
        return points, {}
    trace = model.trace(d.X_test)
    info = {
        "dag_states": int(model.sensor_dag_.n_states),
        "dag_strategies": " ".join(sorted({m.strategy_ for m in res.models})),
    }
    if ROUTING_SENSOR in d.spec.names:
        info["dag_first_context"] = first_sensor_share(
            trace["acquired"], ROUTING_SENSOR
        )
        info["dag_first_context_cost"] = float(dag_rows["avg_cost"].iloc[near])
    mid = res.cost_scales[len(res.cost_scales) // 2]
    with Clock() as policy:
        one = BudgetDAGClassifier(d.spec, **{**params, "cost_scale": float(mid)})
        one.fit(d.X_train, d.y_train, bank=bank)
    # A what-if refit: the fitted model's policies for a doubled cost scale.
    with Clock() as refit:
        one.refit_policies(d.X_train, d.y_train, 2 * float(mid))
    # What a user's first call runs: a new estimator, no bank given, the
    # default cost scale ("auto": the bank once, then policies at a few
    # scales). The fit above reuses what the curve grew with the bank.
    default = {k: v for k, v in params.items() if k != "cost_scale"}
    with Clock() as default_fit:
        auto = BudgetDAGClassifier(d.spec, **default).fit(d.X_train, d.y_train)
    with Clock() as whatif:
        auto.refit_policies(d.X_train, d.y_train, 2 * float(auto.cost_scale_))
    info.update(
        {
            "dag_default_fit_s": default_fit.wall,
            "dag_default_fit_cpu_s": default_fit.cpu,
            "dag_default_cost_scale": float(auto.cost_scale_),
            "dag_fit_s": bank_clock.wall + policy.wall,
            "dag_refit_s": refit.wall,
            "dag_sweep_s": sweep.wall,
            # CPU seconds (Clock): side-by-side runs on a shared machine move
            # them less than wall seconds.
            "dag_fit_cpu_s": bank_clock.cpu + policy.cpu,
            "dag_refit_cpu_s": refit.cpu,
            "dag_whatif_s": whatif.wall,
            "dag_whatif_cpu_s": whatif.cpu,
            "dag_sweep_cpu_s": sweep.cpu,
            "dag_rows_per_s": predict_rows_per_second(one, tiled(d.X_test, 20_000), 3),
            "dag_session_ms": session_step_ms(one, d.X_test),
        }
    )
    return points, info


def engine_check(name: str, seed: int = 0) -> pd.DataFrame:
    """Validation error of each masked-classifier engine on ``name``'s training
    rows (75/25 stratified split, seed 0): how the peers' engine is chosen.

    Masks of 10, 25, 50 and 100 % of the sensors (random, seeded), the mean
    error over them and the fit seconds, per engine."""
    from sklearn.model_selection import train_test_split

    d = load(name, quick=False, max_train=None, seed=seed)
    sensors = SensorColumns.from_spec(d.spec)
    X = d.X_train[list(sensors.columns)].to_numpy(float)
    fit, val = train_test_split(
        np.arange(len(X)), test_size=0.25, random_state=0, stratify=d.y_train
    )
    y = np.asarray(d.y_train)
    rows = []
    for engine in ("mlp", "hgb"):
        t0 = time.perf_counter()
        clf = MaskedClassifier(sensors, engine=engine).fit(X[fit], y[fit])
        row = {"dataset": name, "engine": engine, "fit_s": time.perf_counter() - t0}
        rng = np.random.default_rng(0)
        for f in (0.10, 0.25, 0.50, 1.0):
            size = max(1, round(f * sensors.n_sensors))
            ranks = rng.random((len(val), sensors.n_sensors)).argsort(axis=1)
            state = ranks.argsort(axis=1) < size
            proba = clf.predict_proba(X[val], sensors.column_mask(state))
            pred = clf.classes_[proba.argmax(axis=1)]
            row[f"err{round(f * 100)}"] = float((pred != y[val]).mean())
        row["mean"] = float(np.mean([row[k] for k in row if k.startswith("err")]))
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ readings
def readings(
    points: pd.DataFrame, total: float, target: float, reach: dict
) -> pd.DataFrame:
    """Each method's hull error at the budget fractions and its cost to reach
    ``target`` (fractions of ``total``); n/a past ``reach[method]`` (the cost
    its run stopped at)."""
    rows = []
    for method, part in points.groupby("method", sort=False):
        hc, he = hull_of(part)
        limit = reach.get(method, np.inf)
        row = {"method": method}
        for f in FRACTIONS:
            budget = f * total
            ok = budget <= limit + 1e-9
            row[f"e{round(f * 100)}"] = error_at(hc, he, budget) if ok else np.nan
        cost = cost_to_reach(hc, he, target)
        row["reach"] = cost / total if np.isfinite(cost) else np.nan
        row["lowest"] = float(he.min())
        rows.append(row)
    return pd.DataFrame(rows)


def run_one(name: str, seed: int, args) -> dict:
    """Every method on one dataset and seed: points, readings and speed."""
    d = load(name, quick=False, max_train=None, seed=seed)
    methods = set(args.methods)
    load_start = os.getloadavg()[0]
    t_start = time.perf_counter()
    ref = all_feature_boosting(d)
    base = {"random_state": 0, "n_jobs": args.n_jobs}
    params = {**base, **default_params(d), **args.dag_params}
    params = {k: v for k, v in params.items() if v is not None}
    parts, info = [], {}
    if methods & set(DAG_METHODS):
        dag_points, dag_info = run_dag(d, params, args)
        parts.append(dag_points[dag_points["method"].isin(methods)])
        info.update(dag_info)
    if "paper" in methods and d.paper_params is not None:
        paper = {**base, **d.paper_params}
        paper_points, _ = run_dag(d, paper, args, timed=False)
        parts.append(
            paper_points[paper_points["method"] == "dag"].assign(method="paper")
        )
    settings = peer_settings(d, args.peer_params)
    if methods & {"aaco", "greedy"}:
        peer_points, peer_info = run_peers(d, methods, settings, args.n_jobs)
        parts.append(peer_points)
        info.update(peer_info)
    total = d.spec.total_cost
    parts.append(
        pd.DataFrame(
            {"method": ["allfeat"], "avg_cost": [total], "error": [ref["error"]]}
        ).assign(rule="all features", param=np.nan)
    )
    points = pd.concat(parts, ignore_index=True)
    reach = {
        m: info[f"{m}_max_cost"] for m in ("aaco", "greedy") if f"{m}_max_cost" in info
    }
    table = readings(points, total, ref["error"] + TARGET_SLACK, reach)
    speed = {
        "dataset": name,
        "seed": seed,
        "n_train": len(d.X_train),
        "n_test": len(d.X_test),
        "n_sensors": d.spec.n_sensors,
        "total_cost": total,
        "allfeat_error": ref["error"],
        "hgb_fit_s": ref["fit_s"],
        "hgb_fit_cpu_s": ref["fit_cpu_s"],
        "hgb_rows_per_s": ref["rows_per_s"],
        **info,
        "seconds": time.perf_counter() - t_start,
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
    }
    meta = {"dag_params": params, "peers": settings, "notes": d.notes}
    key = {"dataset": name, "seed": seed}
    return {
        "points": points.assign(**key),
        "readings": table.assign(**key),
        "speed": speed,
        "meta": meta,
    }


# -------------------------------------------------------------------- tables
def _mean_range(values: pd.Series, fmt) -> str:
    v = values.dropna()
    if v.empty:
        return "n/a"
    text = fmt(v.mean())
    if len(values) > 1 and v.max() > v.min():
        text += f" ({fmt(v.min())}–{fmt(v.max())})"
    if len(v) < len(values):
        text += f" [{len(values) - len(v)} of {len(values)} n/a]"
    return text


def _order(present) -> list[str]:
    return [m for m in METHODS if m in set(present)]


def error_table(readings_: pd.DataFrame, speed: pd.DataFrame) -> str:
    """Error at each budget fraction: a row per dataset and fraction."""
    methods = [m for m in _order(readings_["method"]) if m != "allfeat"]
    rows = []
    for name, part in readings_.groupby("dataset", sort=False):
        total = float(speed.loc[speed["dataset"] == name, "total_cost"].iloc[0])
        seeds = part["seed"].nunique()
        for f in FRACTIONS:
            col = f"e{round(f * 100)}"
            row = {
                "data (seeds)": f"{name} ({seeds})",
                "budget": f"{f:.0%} ({f * total:.4g})",
            }
            for m in methods:
                vals = part.loc[part["method"] == m, col]
                row[LABELS[m]] = _mean_range(vals, lambda v: f"{v:.3f}")
            rows.append(row)
    return markdown_table(pd.DataFrame(rows))


def reach_table(readings_: pd.DataFrame, speed: pd.DataFrame) -> str:
    methods = [m for m in _order(readings_["method"]) if m != "allfeat"]
    rows = []
    for name, part in readings_.groupby("dataset", sort=False):
        sp = speed[speed["dataset"] == name]
        row = {
            "data": name,
            "target (all-feature HGB + 1 pt)": _mean_range(
                sp["allfeat_error"] + TARGET_SLACK, lambda v: f"{v:.3f}"
            ),
        }
        for m in methods:
            vals = part.loc[part["method"] == m, "reach"]
            row[LABELS[m]] = _mean_range(vals, lambda v: f"{v:.0%}")
        rows.append(row)
    return markdown_table(pd.DataFrame(rows))


def routing_table(speed: pd.DataFrame) -> str | None:
    cols = [c for c in ("dag", "aaco", "greedy") if f"{c}_first_context" in speed]
    sub = speed.dropna(subset=[f"{c}_first_context" for c in cols], how="all")
    if not cols or sub.empty:
        return None
    rows = []
    for name, part in sub.groupby("dataset", sort=False):
        row = {"data": name}
        for c in cols:
            row[LABELS[c]] = _mean_range(
                part[f"{c}_first_context"], lambda v: f"{v:.0%}"
            )
        if "dag_first_context_cost" in part:
            row["DAG point's cost"] = _mean_range(
                part["dag_first_context_cost"], lambda v: f"{v:.3g}"
            )
        rows.append(row)
    return markdown_table(pd.DataFrame(rows))


def _rate(value: float) -> str:
    """Rows per second: whole above 100, three digits below (peers are slow)."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


#: Timings shown as CPU ratios to the HGB: (column stem, label, format).
CPU_TIMED = (
    ("default_fit", "default fit", ".1f"),
    ("refit", "refit", ".2f"),
    ("whatif", "what-if refit", ".2f"),
)


def speed_table(speed: pd.DataFrame) -> str:
    rows = []
    for name, part in speed.groupby("dataset", sort=False):
        row = {
            "data": name,
            "HGB fit s": _mean_range(part["hgb_fit_s"], lambda v: f"{v:.2f}"),
            "HGB rows/s": _mean_range(part["hgb_rows_per_s"], _rate),
        }
        for m in ("dag", "aaco", "greedy"):
            if f"{m}_fit_s" in part:
                ratio = part[f"{m}_fit_s"] / part["hgb_fit_s"]
                row[f"{LABELS[m]} fit ×"] = _mean_range(ratio, lambda v: f"{v:.1f}")
            for key, label, fmt in CPU_TIMED:  # runs since the column came
                if f"{m}_{key}_cpu_s" in part:
                    ratio = part[f"{m}_{key}_cpu_s"] / part["hgb_fit_cpu_s"]
                    row[f"{LABELS[m]} {label} × (CPU)"] = _mean_range(
                        ratio, lambda v, fmt=fmt: format(v, fmt)
                    )
            if f"{m}_rows_per_s" in part:
                rps = part[f"{m}_rows_per_s"]
                ratio = rps / part["hgb_rows_per_s"]
                row[f"{LABELS[m]} rows/s (× HGB)"] = (
                    _mean_range(rps, _rate)
                    + " ("
                    + _mean_range(ratio, lambda v: f"{v:.3g}")
                    + ")"
                )
        if "dag_session_ms" in part:
            row["DAG session ms/step"] = _mean_range(
                part["dag_session_ms"], lambda v: f"{v:.2f}"
            )
        rows.append(row)
    return markdown_table(pd.DataFrame(rows))


def render(readings_: pd.DataFrame, speed: pd.DataFrame) -> str:
    parts = [
        "### Test error on each method's lower hull (mean over seeds, min–max)",
        "",
        error_table(readings_, speed),
        "",
        "### Cost to reach all-feature boosting's error + 1 point "
        "(fraction of the all-sensor cost)",
        "",
        reach_table(readings_, speed),
        "",
    ]
    routing = routing_table(speed)
    if routing:
        parts += [
            "### First purchase is the context group (test rows)",
            "",
            routing,
            "",
        ]
    parts += [
        "### Speed (ratios to one single-threaded HGB on all features, same run)",
        "",
        speed_table(speed),
        "",
    ]
    return "\n".join(parts)


def budget_table(points: pd.DataFrame, budgets: dict[str, list[float]]) -> str:
    """Each method's hull error at absolute budgets (e.g. issue 30's "4 and 6
    sensors"), mean over seeds, from saved points; n/a past a peer's run."""
    methods = [m for m in _order(points["method"]) if m != "allfeat"]
    rows = []
    for name, wanted in budgets.items():
        part = points[points["dataset"] == name]
        for budget in wanted:
            row = {"data": name, "budget": f"{budget:g}"}
            for m in methods:
                values = []
                for _, one in part[part["method"] == m].groupby("seed"):
                    hc, he = hull_of(one)
                    # Peers' runs stop at their cap: no reading past their points.
                    top = one["avg_cost"].max()
                    past = m in ("aaco", "greedy") and budget > top + 1e-9
                    values.append(np.nan if past else error_at(hc, he, budget))
                row[LABELS[m]] = _mean_range(pd.Series(values), lambda v: f"{v:.3f}")
            rows.append(row)
    return markdown_table(pd.DataFrame(rows))


def _budgets(text: str) -> tuple[str, list[float]]:
    name, _, values = text.partition("=")
    try:
        return name, [float(v) for v in values.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=B1,B2; got {text!r}") from None


# ---------------------------------------------------------------------- main
def _json(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_DATASETS))
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=None,
        help="seeds (default: 0 1 2 for datasets drawn or split at random, the "
        "fixed split otherwise)",
    )
    parser.add_argument(
        "--methods", nargs="+", default=list(METHODS), choices=list(METHODS)
    )
    parser.add_argument("--dag-params", type=_json, default={})
    parser.add_argument("--peer-params", type=_json, default={})
    parser.add_argument("--n-points", type=int, default=40)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--out", default=str(HERE / "out" / "afa"))
    parser.add_argument(
        "--tables-from",
        nargs="+",
        default=None,
        metavar="DIR",
        help="only print the tables of saved runs (their --out folders, merged)",
    )
    parser.add_argument(
        "--at",
        nargs="+",
        type=_budgets,
        default=[],
        metavar="NAME=B1,B2",
        help="with --tables-from: also each method's error at these absolute "
        "budgets of dataset NAME",
    )
    parser.add_argument(
        "--check-engines",
        action="store_true",
        help="only print the masked classifier engines' validation errors",
    )
    return parser.parse_args(argv)


def seeds_for(name: str, args) -> list[int]:
    if name in AFA or name in SMALL_MANY or name in ("spam", "pima"):
        return args.seeds or [0, 1, 2]
    return list(split_seeds(name))  # a fixed split runs once


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.tables_from:
        folders = [Path(f) for f in args.tables_from]
        table = pd.concat([pd.read_csv(f / "readings.csv") for f in folders])
        speed = pd.concat([pd.read_csv(f / "speed.csv") for f in folders])
        print(render(table, speed))
        if args.at:
            points = pd.concat([pd.read_csv(f / "points.csv") for f in folders])
            print("### Error at given budgets\n")
            print(budget_table(points, dict(args.at)))
        return
    if args.check_engines:
        with threadpool_limits(args.n_jobs):
            checks = [engine_check(name) for name in args.datasets]
        print(markdown_table(pd.concat(checks, ignore_index=True).round(4)))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    warnings.filterwarnings("ignore")
    warm_up()
    started = time.perf_counter()
    command = shlex.join(["python", "benchmarks/bench_afa.py", *sys.argv[1:]])
    commit, measured_on = current_commit(), machine()
    results = []
    for name in args.datasets:
        for seed in seeds_for(name, args):
            print(f"[{time.strftime('%H:%M:%S')}] {name} seed {seed}", flush=True)
            results.append(run_one(name, seed, args))
            points = pd.concat([r["points"] for r in results], ignore_index=True)
            table = pd.concat([r["readings"] for r in results], ignore_index=True)
            speed = pd.DataFrame([r["speed"] for r in results])
            points.to_csv(out / "points.csv", index=False)
            table.to_csv(out / "readings.csv", index=False)
            speed.to_csv(out / "speed.csv", index=False)
            text = render(table, speed)
            (out / "tables.md").write_text(text)
            (out / "run.json").write_text(
                json.dumps(
                    {
                        "argv": sys.argv,
                        # What the report cites for these numbers.
                        "command": command,
                        "commit": commit,
                        "machine": measured_on,
                        "finished_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                        "seconds": time.perf_counter() - started,
                        "settings": {
                            f"{r['speed']['dataset']}/{r['speed']['seed']}": r["meta"]
                            for r in results
                        },
                    },
                    indent=2,
                    default=str,
                )
            )
    print(text)
    print(f"{(time.perf_counter() - started) / 60:.1f} min; wrote {out}")


if __name__ == "__main__":
    main()
