"""Command-line interface: ``budgetdag train | evaluate | predict | sweep``."""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .bank._base import SERVE_MODES
from .bank._per_state import BANK_KINDS
from .decisions import STOP_LOSSES
from .estimator._inputs import POLICY_FEATURES
from .persist._io import load_policy, save_policy
from .sensors import SensorSpec
from .validation import MAX_FULL_DAG_SENSORS


class CLIError(Exception):
    """A user-facing error: printed without a traceback, exit code 2."""


def _read_table(path: str) -> pd.DataFrame:
    p = Path(path)
    if not p.exists():
        raise CLIError(f"Data file not found: {path}")
    try:
        return pd.read_csv(p, sep=None, engine="python")
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as e:
        raise CLIError(f"Could not read {path} as CSV: {e}") from None


def _split_xy(
    data: pd.DataFrame, label: str | None, spec: SensorSpec
) -> tuple[pd.DataFrame, pd.Series | None]:
    if label is not None and label not in data.columns:
        raise CLIError(
            f"Label column {label!r} is not in the data; columns: {list(data.columns)}"
        )
    y = data[label] if label is not None else None
    return data[[c for c in data.columns if c != label]], y


def _read_spec(path: str) -> SensorSpec:
    if not Path(path).exists():
        raise CLIError(f"Sensor spec file not found: {path}")
    return SensorSpec.from_json(Path(path))


def _progress(stage: str, done: int, total: int) -> None:
    print(
        f"\r{stage}: {done}/{total}",
        end="" if done < total else "\n",
        file=sys.stderr,
        flush=True,
    )


#: ``--n-subsets`` when the spec has too many sensors for a full DAG and none is
#: given: 8 subsets (at most 2^8 = 256 states) is what the benchmarks use on spam
#: and DNA (see BENCHMARKS.md).
DEFAULT_N_SUBSETS = 8


def _n_subsets(args: argparse.Namespace, spec: SensorSpec) -> int | None:
    """``--n-subsets``, or the default for specs too large for a full DAG."""
    if args.n_subsets is not None or spec.n_sensors <= MAX_FULL_DAG_SENSORS:
        return args.n_subsets
    print(
        f"The spec has {spec.n_sensors} sensors (a full DAG takes at most "
        f"{MAX_FULL_DAG_SENSORS}): selecting {DEFAULT_N_SUBSETS} sensor subsets "
        "(Alg. 2) and building the DAG over their unions; set --n-subsets to "
        "change this.",
        file=sys.stderr,
    )
    return DEFAULT_N_SUBSETS


def _model_params(args: argparse.Namespace, spec: SensorSpec) -> dict:
    params = {
        "cost_scale": args.cost_scale,
        "policy_learner": args.policy_learner,
        "policy_degree": args.policy_degree,
        "cv": args.cv,
        "random_state": args.seed,
        "n_jobs": args.n_jobs,
        "bank_kind": args.bank_kind,
        "policy_features": args.policy_features,
        "max_policy_features": args.max_policy_features,
        "stop_loss": args.stop_loss,
        "bank_serve": args.bank_serve,
    }
    n_subsets = _n_subsets(args, spec)
    if n_subsets:
        params["n_subsets"] = n_subsets
        params["subset_reward"] = args.subset_reward
        params["subset_budget"] = args.subset_budget
        params["include_all"] = args.include_all
    elif args.include_all or args.subset_budget is not None:
        raise CLIError(
            "--include-all and --subset-budget apply to subset selection: give "
            "--n-subsets too (or a spec with more than "
            f"{MAX_FULL_DAG_SENSORS} sensors)."
        )
    return params


def cmd_train(args: argparse.Namespace) -> int:
    from .estimator._classifier import BudgetDAGClassifier

    data = _read_table(args.data)
    spec = _read_spec(args.sensors)
    X, y = _split_xy(data, args.label, spec)
    t0 = time.perf_counter()
    if args.budget is not None:
        from . import tradeoff

        model = tradeoff.fit_for_budget(
            X,
            y,
            spec,
            args.budget,
            progress=_progress,
            **{k: v for k, v in _model_params(args, spec).items() if k != "cost_scale"},
        )
        model = getattr(model, "model", model)
    else:
        model = BudgetDAGClassifier(spec, **_model_params(args, spec))
        model.fit(X, y, progress=_progress)
    print(f"trained in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    model.label_name_ = args.label
    save_policy(model, args.out)
    report = model.evaluate(X[spec.columns], y)
    if report["avg_sensors"] == 0:
        print(
            "The policy acquires no sensor: at this cost scale every sensor costs "
            "more than the errors it saves on the training rows. Lower "
            "--cost-scale, or give --budget (a target average cost).",
            file=sys.stderr,
        )
    print(json.dumps({"train": report, "model": str(args.out)}, indent=2))
    return 0


def _load(path: str):
    if not Path(path).exists():
        raise CLIError(f"Model file not found: {path}")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        return load_policy(path)


def cmd_evaluate(args: argparse.Namespace) -> int:
    model = _load(args.model)
    data = _read_table(args.data)
    label = args.label or model.metadata_.get("label") or "label"
    X, y = _split_xy(data, label, model.spec_)
    print(json.dumps(model.evaluate(X, y), indent=2))
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    model = _load(args.model)
    data = _read_table(args.data)
    traces = model.trace(data)
    traces["acquired"] = traces["acquired"].map(lambda a: "|".join(a))
    if args.out:
        traces.to_csv(args.out, index=False)
        print(f"wrote {len(traces)} traces to {args.out}", file=sys.stderr)
    else:
        traces.to_csv(sys.stdout, index=False)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from . import tradeoff

    data = _read_table(args.data)
    spec = _read_spec(args.sensors)
    X, y = _split_xy(data, args.label, spec)
    X_test = y_test = None
    if args.test:
        X_test, y_test = _split_xy(_read_table(args.test), args.label, spec)
    params = {k: v for k, v in _model_params(args, spec).items() if k != "cost_scale"}
    scales = (
        [float(s) for s in args.cost_scales.split(",")] if args.cost_scales else None
    )
    result = tradeoff.tradeoff_curve(
        X,
        y,
        spec,
        cost_scales=scales,
        n_points=None if scales else args.n_points,
        X_test=X_test,
        y_test=y_test,
        progress=_progress,
        **params,
    )
    frame = getattr(result, "frame", result)
    frame.to_csv(args.out, index=False)
    print(f"wrote {len(frame)} rows to {args.out}", file=sys.stderr)
    # How the DAG compares with the fixed-subset hull and the confidence
    # cascade, in words (the rows are in the CSV: methods hull and cascade).
    for summary in getattr(result, "summaries", {}).values():
        print(summary.describe(), file=sys.stderr)
    if getattr(result, "cascade", None) is not None:
        print(
            "confidence cascade order: " + " -> ".join(result.cascade.sensor_order),
            file=sys.stderr,
        )
    return 0


def _add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--policy-learner",
        default="filter_tree",
        choices=["filter_tree", "cost_regression", "boosted"],
        help="cost-sensitive learner at each DAG node (default: filter_tree)",
    )
    p.add_argument(
        "--policy-degree",
        type=int,
        default=None,
        help="polynomial degree 1-3 of the policy features (default: 1 with "
        "model inputs (proba, confidence), 2 with sensor inputs)",
    )
    p.add_argument(
        "--cv", type=int, default=5, help="folds of the out-of-fold losses (default: 5)"
    )
    p.add_argument(
        "--seed", type=int, default=0, help="random seed of the fold split (default: 0)"
    )
    p.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="parallel jobs for bank and node fits (default: 1)",
    )
    p.add_argument(
        "--bank-kind",
        default="auto",
        choices=["auto", *BANK_KINDS],
        help="classifier bank: one model per sensor subset (per_subset: "
        "logistic regression; hgb: gradient boosting) or one missing-feature "
        "model for all subsets (masked); auto picks hgb, or masked from 33 "
        "DAG states on (default: auto)",
    )
    p.add_argument(
        "--policy-features",
        default="proba",
        choices=sorted(POLICY_FEATURES),
        help="inputs of each node's policy: the current classifier's class "
        "probabilities and confidence (proba), its confidence only, the "
        "acquired sensors' features (sensors, the paper), or both "
        "(default: proba)",
    )
    p.add_argument(
        "--stop-loss",
        default="auto",
        choices=["auto", *STOP_LOSSES],
        help="stop losses the policies learn from: expected (from calibrated "
        "out-of-fold probabilities), zero_one (the paper), soft; auto: "
        "zero_one with sensor inputs (sensors, sensors+confidence), else "
        "expected (default: auto)",
    )
    p.add_argument(
        "--bank-serve",
        default="folds",
        choices=list(SERVE_MODES),
        help="what the boosting bank predicts with: the average of its fold "
        "models (folds), or one model per state refit on all rows, cv times "
        "faster to predict (default: folds)",
    )
    p.add_argument(
        "--max-policy-features",
        type=int,
        default=1000,
        help="cap on the polynomial features of one node's policy; wider "
        "states fall back to a lower degree (default: 1000)",
    )
    p.add_argument(
        "--n-subsets",
        type=int,
        default=None,
        help="select this many sensor subsets (Alg. 2, 1-16); the DAG is built "
        f"over their unions (default: none, or {DEFAULT_N_SUBSETS} when the spec "
        f"has more than {MAX_FULL_DAG_SENSORS} sensors)",
    )
    p.add_argument(
        "--subset-budget",
        type=float,
        default=None,
        help="with --n-subsets: budget on the total size of the greedy subsets "
        "in average sensors (default: the number of sensors)",
    )
    p.add_argument(
        "--include-all",
        action="store_true",
        help="with --n-subsets: add the subset of all sensors as the last one "
        "(the paper's setting; the others are chosen greedily)",
    )
    p.add_argument(
        "--subset-reward",
        default="soft",
        choices=["soft", "correct"],
        help="with --n-subsets: Alg. 2's per-row reward, the scorer's probability "
        "of the true class (soft) or 1 when it is right (correct, the paper) "
        "(default: soft)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="budgetdag",
        description="Adaptive sensor acquisition under a budget (Graph-Reduce on "
        "a sensor DAG). Data files are CSV; the sensor spec is JSON as written by "
        'SensorSpec.to_json: {"sensors": [{"name", "columns", "cost"}]}.',
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="fit a policy and save it as a pickle")
    p.add_argument("data", help="training CSV")
    p.add_argument("--label", required=True, help="name of the label column")
    p.add_argument("--sensors", required=True, help="sensor spec JSON file")
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--cost-scale",
        type=float,
        default=1.0,
        help="weight of acquisition cost vs one error (default: 1.0)",
    )
    g.add_argument(
        "--budget",
        type=float,
        default=None,
        help="target average acquisition cost per example; the cost "
        "scale is found by bisection on a held-out split",
    )
    p.add_argument("--out", required=True, help="where to write the model pickle")
    _add_model_options(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("evaluate", help="error, average cost and sensors on data")
    p.add_argument("model", help="model pickle written by 'train'")
    p.add_argument("data", help="CSV with the feature columns and the label")
    p.add_argument("--label", default=None, help="label column (default: 'label')")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("predict", help="per-example traces: acquired, cost, label")
    p.add_argument("model", help="model pickle written by 'train'")
    p.add_argument("data", help="CSV with the feature columns")
    p.add_argument("--out", default=None, help="traces CSV (default: stdout)")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser(
        "sweep",
        help="cost-error trade-off curve over cost scales, with the baselines "
        "(fixed subsets, their hull, the oracle, the confidence cascade)",
    )
    p.add_argument("data", help="training CSV")
    p.add_argument("--label", required=True, help="name of the label column")
    p.add_argument("--sensors", required=True, help="sensor spec JSON file")
    p.add_argument("--test", default=None, help="test CSV (default: none)")
    p.add_argument(
        "--cost-scales",
        default=None,
        help="comma-separated cost scales (default: automatic range)",
    )
    p.add_argument(
        "--n-points",
        type=int,
        default=10,
        help="points of the automatic range (default: 10)",
    )
    p.add_argument("--out", required=True, help="where to write the curve CSV")
    _add_model_options(p)
    p.set_defaults(func=cmd_sweep, cost_scale=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (CLIError, ValueError, FileNotFoundError) as exc:
        print(f"budgetdag {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
