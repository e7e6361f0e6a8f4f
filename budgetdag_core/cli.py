"""Command-line interface: ``budgetdag train | evaluate | predict | sweep | check``.

Data files are read by :func:`budgetdag_core.read_table`, as the library and
the app read them: one file, one frame, one set of messages.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from ._bounded_io import atomic_write, check_output_file, check_regular_file, short_repr
from ._progress import ProgressBar
from .bank import BANK_KINDS, SERVE_MODES
from .decisions import STOP_LOSSES
from .estimator import POLICY_FEATURES
from .persist import load_policy, save_policy
from .sensors import SensorSpec
from .tables import SUSPECT_KINDS, Table, read_table
from .validation import MAX_FULL_DAG_SENSORS, MAX_N_SUBSETS


class CLIError(Exception):
    """A user-facing error: printed without a traceback, exit code 2."""


def read_data(
    path: str, *, label: str | None = None, features_only: bool = False
) -> Table:
    """A data file as every front end reads it (:func:`read_table`: the same
    frame and the same messages as the library and the app)."""
    return read_table(path, label=label, features_only=features_only)


def _checked(table: Table, spec: SensorSpec, args: argparse.Namespace) -> Table:
    """``table``, refused (one line) when its label or the spec's columns
    have an error that training would fail on (blank or non-numeric cells,
    one class, classes rarer than the folds), or columns that give the
    answer away (row numbers, identifiers, copies of the label) unless
    ``--keep-suspect-columns``; a column that predicts the label alone gets
    a warning line on stderr, and training goes on."""
    columns = [c for c in spec.columns if c in table.frame]
    findings = table.findings(cv=args.cv, columns=columns)
    errors = [p.message for p in findings if p.severity == "error"]
    if errors:
        raise ValueError(f"{table.name}: " + " ".join(errors))
    keep = args.keep_suspect_columns
    for problem in findings:
        if problem.kind in SUSPECT_KINDS and not keep:
            raise CLIError(
                f"{table.name}: {problem.message} Take them out of the sensor "
                "spec, or give --keep-suspect-columns to train on them anyway."
            )
        if problem.kind in (*SUSPECT_KINDS, "strong_column"):
            message = " ".join(problem.message.split())
            print(f"budgetdag {args.command}: warning: {message}", file=sys.stderr)
    return table


def _split_xy(table: Table) -> tuple[pd.DataFrame, pd.Series]:
    return table.X, table.y


def _read_spec(path: str) -> SensorSpec:
    try:
        return SensorSpec.from_file(path)
    except ValueError as exc:
        raise CLIError(str(exc)) from None


def _check_paths(args: argparse.Namespace) -> None:
    """Every file argument, before any work: inputs are readable regular
    files, outputs can be written (their folder exists, they are no
    directory or device)."""
    inputs = {
        "model": "model file",
        "data": "data file",
        "test": "test file",
        "sensors": "sensor spec file",
    }
    given = []
    for attr, what in inputs.items():
        path = getattr(args, attr, None)
        if path is not None:
            if attr == "model" and not Path(path).exists():
                raise CLIError(f"Model file not found: {path}")
            check_regular_file(path, what)
            given.append((path, what))
    if getattr(args, "out", None) is not None:
        check_output_file(args.out, "output file (--out)")
        _check_not_an_input(args.out, given)


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file: the same resolved path
    (symbolic links followed), or the same inode (a hard link)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # ``a`` does not exist yet: a new file, no input
        return False


def _check_not_an_input(out: str, inputs: list[tuple[str, str]]) -> None:
    """Refuse an output path that names one of the command's inputs: writing
    it would replace the input (a model over its training data, traces over
    the model) after the work, without a word."""
    for path, what in inputs:
        if _same_file(out, path):
            raise CLIError(
                f"The output file (--out) {out!r} is the {what} {path!r}: "
                "writing it would destroy an input. Give another path."
            )


def _write_csv(path: str, frame: pd.DataFrame) -> None:
    """``frame`` as CSV at ``path``, whole or not at all (a write cut short
    keeps the older file), with a failure (a full disk, ...) in one line."""
    try:
        with atomic_write(path, "w") as fh:
            frame.to_csv(fh, index=False)
    except OSError as exc:
        raise CLIError(f"Could not write {path!r}: {exc.strerror or exc}.") from None


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
    # Without --n-subsets the library's default: beyond 12 sensors its DAGs
    # of one-sensor additions (chain, routed or grown, kept on validation rows).
    n_subsets = args.n_subsets
    if n_subsets is not None:
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
    from .estimator import BudgetDAGClassifier

    spec = _read_spec(args.sensors)
    table = _checked(read_data(args.data, label=args.label), spec, args)
    X, y = _split_xy(table)
    t0 = time.perf_counter()
    if args.budget is not None:
        from . import tradeoff

        with ProgressBar("train") as bar:  # one bar through every stage
            model = tradeoff.fit_for_budget(
                X,
                y,
                spec,
                args.budget,
                progress=bar,
                **{
                    k: v
                    for k, v in _model_params(args, spec).items()
                    if k != "cost_scale"
                },
            )
        model = getattr(model, "model", model)
    else:
        model = BudgetDAGClassifier(spec, **_model_params(args, spec))
        with ProgressBar("train") as bar:
            model.fit(X, y, progress=bar)
    print(f"trained in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    search = getattr(model, "cost_scale_search_", None)
    if search is not None:
        print(f"cost scale chosen: {search['reason']}", file=sys.stderr)
    model.label_name_ = args.label
    try:
        save_policy(model, args.out)  # whole or not at all
    except OSError as exc:
        raise CLIError(
            f"Could not write {args.out!r}: {exc.strerror or exc}."
        ) from None
    report = model.evaluate(X[spec.columns], y)
    if report["avg_sensors"] == 0:
        print(
            "The policy acquires no sensor: at this cost scale every sensor costs "
            "more than the errors it saves on the training rows. Lower "
            "--cost-scale (or 'auto'), or give --budget (a target average cost).",
            file=sys.stderr,
        )
    print(json.dumps({"train": report, "model": str(args.out)}, indent=2))
    return 0


def _load(path: str):
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        return load_policy(path)


def cmd_evaluate(args: argparse.Namespace) -> int:
    model = _load(args.model)
    label = args.label or model.metadata_.get("label") or "label"
    X, y = _split_xy(read_data(args.data, label=label))
    print(json.dumps(model.evaluate(X, y), indent=2))
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    model = _load(args.model)
    traces = model.trace(read_data(args.data, features_only=True).frame)
    traces["acquired"] = traces["acquired"].map(lambda a: "|".join(a))
    if args.out:
        _write_csv(args.out, traces)
        print(f"wrote {len(traces)} traces to {args.out}", file=sys.stderr)
    else:
        traces.to_csv(sys.stdout, index=False)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from . import tradeoff

    spec = _read_spec(args.sensors)
    X, y = _split_xy(_checked(read_data(args.data, label=args.label), spec, args))
    X_test = y_test = None
    if args.test:
        test = _checked(read_data(args.test, label=args.label), spec, args)
        X_test, y_test = _split_xy(test)
    params = {k: v for k, v in _model_params(args, spec).items() if k != "cost_scale"}
    scales = args.cost_scales
    with ProgressBar("sweep") as bar:
        result = tradeoff.tradeoff_curve(
            X,
            y,
            spec,
            cost_scales=scales,
            n_points=None if scales else args.n_points,
            X_test=X_test,
            y_test=y_test,
            progress=bar,
            **params,
        )
    frame = getattr(result, "frame", result)
    _write_csv(args.out, frame)
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


def cmd_check(args: argparse.Namespace) -> int:
    """How a data file reads and what stands between it and training, as
    JSON; exit code 1 when a finding is an error."""
    table = read_data(args.data, label=args.label)
    findings = table.findings(cv=args.cv)
    report = {
        "file": str(args.data),
        "read_as": table.description,
        "columns": [str(c) for c in table.frame.columns],
        "dtypes": [str(t) for t in table.frame.dtypes],
        "label": table.label,
        "label_guessed": table.label_guessed,
        "findings": [
            {"kind": p.kind, "severity": p.severity, "message": p.message}
            for p in findings
        ],
    }
    print(json.dumps(report, indent=2))
    return 1 if any(p.severity == "error" for p in findings) else 0


def _add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--keep-suspect-columns",
        action="store_true",
        help="train on sensor columns that look like row numbers, identifiers "
        "or copies of the label (refused by default, naming them: they give the "
        "answer away); a column that predicts the label alone only gets a "
        "warning either way",
    )
    p.add_argument(
        "--policy-learner",
        default="filter_tree",
        choices=["filter_tree", "cost_regression", "boosted"],
        help="cost-sensitive learner at each DAG node (default: filter_tree)",
    )
    p.add_argument(
        "--policy-degree",
        type=_int_in(1, 3),
        default=None,
        help="polynomial degree 1-3 of the policy features (default: 1 with "
        "model inputs (proba, confidence), 2 with sensor inputs)",
    )
    p.add_argument(
        "--cv",
        type=_int_in(2),
        default=5,
        help="folds of the out-of-fold losses (default: 5)",
    )
    p.add_argument(
        "--seed",
        type=_int_in(0, 2**32 - 1),
        default=0,
        help="random seed of the fold split (default: 0)",
    )
    p.add_argument(
        "--n-jobs",
        type=_n_jobs,
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
        default="auto",
        choices=sorted(POLICY_FEATURES),
        help="inputs of each node's policy: the current classifier's class "
        "probabilities and confidence (proba), its confidence only, the "
        "acquired sensors' features (sensors, the paper), both "
        "(sensors+confidence, sensors+proba), or auto: proba, plus the sensor "
        "values at states whose classifier says the same for every row "
        "(default: auto)",
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
        type=_int_in(1),
        default=1000,
        help="cap on the polynomial features of one node's policy; wider "
        "states fall back to a lower degree (default: 1000)",
    )
    p.add_argument(
        "--n-subsets",
        type=_int_in(1, MAX_N_SUBSETS),
        default=None,
        help="select this many sensor subsets (Alg. 2, 1-16); the DAG is built "
        "over their unions (default: none: the full DAG, or beyond "
        f"{MAX_FULL_DAG_SENSORS} sensors the library's one-sensor-at-a-time DAGs)",
    )
    p.add_argument(
        "--subset-budget",
        type=_number(0, strict=True),
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


class _Parser(argparse.ArgumentParser):
    """argparse, with each mistake in one line (and exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high`` (inclusive)."""
    span = f"from {low} to {high}" if high is not None else f"of at least {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(
                f"{short_repr(text)} is not an integer {span}"
            )
        return value

    return parse


def _n_jobs(text: str) -> int:
    """An argparse type: joblib's n_jobs (a non-zero integer, -1: all cores)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0:
        raise argparse.ArgumentTypeError(
            f"{short_repr(text)} is not a non-zero integer (1: one job, -1: all cores)"
        )
    return value


def _number(low: float, *, strict: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number at least (``strict``: above) ``low``."""
    bound = f"above {low:g}" if strict else f"at least {low:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < low or (strict and value == low):
            raise argparse.ArgumentTypeError(
                f"{short_repr(text)} is not a finite number {bound}"
            )
        return value

    return parse


def _cost_scale(text: str) -> float | str:
    """An argparse type: ``auto`` or a finite, non-negative cost scale."""
    return "auto" if text.strip().lower() == "auto" else _number(0)(text)


def _scales(text: str) -> list[float]:
    """An argparse type: comma-separated finite, non-negative cost scales."""
    parse = _number(0)
    return [parse(part.strip()) for part in text.split(",")]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
        type=_cost_scale,
        default="auto",
        help="weight of acquisition cost vs one error, or 'auto': the least "
        "cost whose out-of-fold error is within a point of all sensors' "
        "(default: auto)",
    )
    g.add_argument(
        "--budget",
        type=_number(0, strict=True),
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
        type=_scales,
        default=None,
        help="comma-separated cost scales (default: automatic range)",
    )
    p.add_argument(
        "--n-points",
        type=_int_in(2),
        default=10,
        help="points of the automatic range (default: 10)",
    )
    p.add_argument("--out", required=True, help="where to write the curve CSV")
    _add_model_options(p)
    p.set_defaults(func=cmd_sweep, cost_scale=None)

    p = sub.add_parser(
        "check",
        help="how a data file reads (encoding, separator, columns) and what "
        "stands between it and training (blank or non-numeric cells by column "
        "and row, label problems), as JSON; exit code 1 on an error",
    )
    p.add_argument("data", help="CSV file to check")
    p.add_argument(
        "--label",
        default=None,
        help="label column (default: guessed, as the app does: label, class, "
        "target, ... or the last column)",
    )
    p.add_argument(
        "--cv",
        type=_int_in(2),
        default=5,
        help="folds training will use: each class needs that many rows (default: 5)",
    )
    p.set_defaults(func=cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        _check_paths(args)  # every path before any work
        return args.func(args)
    except (CLIError, ValueError, OSError) as exc:
        message = " ".join(str(exc).split())  # one line
        print(f"budgetdag {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
