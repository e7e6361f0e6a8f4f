"""Run every benchmark and regenerate BENCHMARKS.md and its figures.

    python benchmarks/run_all.py [--quick] [--data-dir DIR] [--datasets letter pima]

For each dataset (letter, pima, landsat: full DAG; spam, dna, shuttle: many
sensors or many states) on its test split: the DAG curve (``tradeoff_curve``),
the paper configuration of the policies (sensor inputs, 0/1 losses), every
fixed subset and their lower hull, all sensors, the oracle, the confidence
cascade (``budgetdag_core.cascade``, from the same bank), and LightGBM's
cost-efficient gradient boosting (CEGB) with the same cost accounting (see
``_cegb.py``); fit time, sweep time, prediction throughput and peak memory.
Each dataset runs in its own process, so its peak
memory (``ru_maxrss``) is its own and a failure does not stop the others.

The default run (5 folds, 20 sweep points per curve) took 40 minutes on 2 cores,
32 of them for shuttle's 512-state DAG, which runs alongside the others.
``--quick`` (3 folds, 6 sweep points, 7 CEGB settings, smaller letter and
shuttle samples) is for a smoke test.
MiniBooNE and Covertype run when named in ``--datasets`` and their UCI files
(``MiniBooNE_PID.txt``, ``covtype.data.gz``) are in ``--data-dir``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from _bench_data import LARGE, SMALL, BenchData, load, use_data_dir  # noqa: E402
from _cegb import QUICK_TRADEOFFS, TRADEOFFS, cegb_curve  # noqa: E402

from budgetdag_core import BudgetDAGClassifier, tradeoff_curve  # noqa: E402
from budgetdag_core.bank import resolve_bank_kind  # noqa: E402
from budgetdag_core.baselines import lower_convex_hull  # noqa: E402

DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "datasets"


def hull_error_mean(part: pd.DataFrame, upto: float) -> float:
    """Mean error of the lower hull of ``part``'s points over costs [0, upto]."""
    c, e = part["avg_cost"].to_numpy(float), part["error"].to_numpy(float)
    idx = lower_convex_hull(c, e)
    grid = np.linspace(0, upto, 201)
    return float(np.interp(grid, c[idx], e[idx]).mean())


def choose_degree(
    d: BenchData, params: dict, n_points: int, log: list[str]
) -> tuple[int, dict]:
    """The policy degree with the lowest mean validation error along the curve."""
    if len(d.degrees) == 1:
        return d.degrees[0], {}
    fit_idx, val_idx = train_test_split(
        np.arange(len(d.X_train)),
        test_size=0.25,
        random_state=0,
        stratify=d.y_train,
    )
    Xf, yf = d.X_train.iloc[fit_idx], d.y_train[fit_idx]
    Xv, yv = d.X_train.iloc[val_idx], d.y_train[val_idx]
    bank = BudgetDAGClassifier(d.spec, **params).fit_bank(Xf, yf)
    scores = {}
    for degree in d.degrees:
        res = tradeoff_curve(
            Xf,
            yf,
            d.spec,
            n_points=n_points,
            X_test=Xv,
            y_test=yv,
            bank=bank,
            policy_degree=degree,
            cascade=False,  # only the DAG's curve chooses the degree
            **params,
        )
        f = res.frame[res.frame["split"] == "test"]
        all_cost = float(f.loc[f["method"] == "all_sensors", "avg_cost"].iloc[0])
        scores[degree] = hull_error_mean(f[f["method"] == "dag"], all_cost)
    best = min(scores, key=lambda k: (scores[k], k))
    log.append(
        "policy degree chosen on a 25% validation split of the training rows "
        "(mean validation error along the curve: "
        + ", ".join(f"degree {k}: {v:.4f}" for k, v in scores.items())
        + f") -> {best}"
    )
    return best, scores


def throughput(model: BudgetDAGClassifier, X: pd.DataFrame) -> float:
    """Rows per second of ``model.predict`` on ``X`` tiled to >= 20 000 rows."""
    reps = max(1, int(np.ceil(20000 / len(X))))
    big = pd.concat([X] * reps, ignore_index=True)
    model.predict(big.iloc[:100])  # warm up
    t0 = time.perf_counter()
    model.predict(big)
    return len(big) / (time.perf_counter() - t0)


def timed_cegb(
    d: BenchData, args: argparse.Namespace
) -> tuple[pd.DataFrame, float, float]:
    """CEGB's curve on ``d``, its total seconds and its fit seconds."""
    t0 = time.perf_counter()
    cegb, fit_s = cegb_curve(
        d.X_train,
        d.y_train,
        d.X_test,
        d.y_test,
        d.spec,
        tradeoffs=QUICK_TRADEOFFS if args.quick else TRADEOFFS,
    )
    return cegb, time.perf_counter() - t0, fit_s


def run_one(name: str, args: argparse.Namespace) -> dict:
    """Everything for one dataset; returns the summary and writes the curve CSV."""
    warnings.filterwarnings("ignore")
    use_data_dir(args.data_dir)
    cv = 3 if args.quick else 5
    n_points = 6 if args.quick else 20
    d = load(name, quick=args.quick, max_train=args.max_train)
    params = {"random_state": 0, "cv": cv, "n_jobs": args.n_jobs, **d.params}
    log = list(d.notes)
    t0 = time.perf_counter()
    degree, degree_scores = choose_degree(d, params, max(4, n_points - 2), log)
    select_s = time.perf_counter() - t0
    params["policy_degree"] = degree

    t0 = time.perf_counter()
    template = BudgetDAGClassifier(d.spec, **params)
    bank = template.fit_bank(d.X_train, d.y_train)
    bank_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = tradeoff_curve(
        d.X_train,
        d.y_train,
        d.spec,
        n_points=n_points,
        X_test=d.X_test,
        y_test=d.y_test,
        bank=bank,
        **params,
    )
    sweep_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    res_conf = tradeoff_curve(
        d.X_train,
        d.y_train,
        d.spec,
        cost_scales=list(res.cost_scales),
        X_test=d.X_test,
        y_test=d.y_test,
        bank=bank,
        cascade=False,  # the same bank's cascade is already in res
        **{
            **params,
            # The paper's configuration (sensor inputs, 0/1 stop losses) on the
            # same bank, at the degree chosen above (wide subset states would
            # take minutes per scale at degree 2).
            "policy_features": "sensors",
            "stop_loss": "zero_one",
        },
    )
    conf_sweep_s = time.perf_counter() - t0
    mid = res.cost_scales[len(res.cost_scales) // 2]
    t0 = time.perf_counter()
    model = BudgetDAGClassifier(d.spec, **{**params, "cost_scale": float(mid)})
    model.fit(d.X_train, d.y_train, bank=bank)
    policy_s = time.perf_counter() - t0
    rows_per_s = throughput(model, d.X_test)

    cegb, cegb_s, cegb_fit_s = timed_cegb(d, args)

    frame = res.frame[res.frame["split"] == "test"].copy()
    conf = res_conf.frame
    conf = conf[(conf["split"] == "test") & (conf["method"] == "dag")].copy()
    conf["method"] = "dag_paper"
    cegb["split"] = "test"
    out = pd.concat([frame, conf, cegb], ignore_index=True)
    out["sensors"] = out["sensors"].map(
        lambda s: "|".join(s) if isinstance(s, (list, tuple)) else s
    )
    out.to_csv(args.work_dir / f"{name}_curve.csv", index=False)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "name": name,
        "description": d.description,
        "n_train": len(d.X_train),
        "n_test": len(d.X_test),
        "n_sensors": d.spec.n_sensors,
        "n_states": int(model.sensor_dag_.n_states),
        "bank_kind": resolve_bank_kind(
            params.get("bank_kind", "auto"), None, model.sensor_dag_.n_states
        ),
        "params": {k: v for k, v in params.items() if k != "n_jobs"},
        "notes": log,
        "degree_scores": {str(k): v for k, v in degree_scores.items()},
        "n_points": len(res.cost_scales),
        "seconds": {
            "degree selection": select_s,
            "bank fit": bank_s,
            "one policy fit (bank reused)": policy_s,
            "fit (bank + one policy)": bank_s + policy_s,
            "sweep (bank reused)": sweep_s,
            "paper-configuration sweep (bank reused)": conf_sweep_s,
            "CEGB (all settings)": cegb_s,
            "CEGB fits only": cegb_fit_s,
        },
        "predict_rows_per_s": rows_per_s,
        "peak_mib": peak_mib,
        "load_average_1m": os.getloadavg()[0],
    }


def rerun_cegb(name: str, args: argparse.Namespace) -> None:
    """Recompute only the CEGB rows of a finished dataset (same data and split)."""
    warnings.filterwarnings("ignore")
    use_data_dir(args.data_dir)
    d = load(name, quick=args.quick, max_train=args.max_train)
    cegb, total, fit_s = timed_cegb(d, args)
    cegb["split"] = "test"
    path = args.work_dir / f"{name}_curve.csv"
    curve = pd.read_csv(path)
    curve = pd.concat([curve[curve["method"] != "cegb"], cegb], ignore_index=True)
    curve.to_csv(path, index=False)
    jpath = args.work_dir / f"{name}.json"
    summary = json.loads(jpath.read_text())
    summary["seconds"]["CEGB (all settings)"] = total
    summary["seconds"]["CEGB fits only"] = fit_s
    jpath.write_text(json.dumps(summary, indent=2))


#: Rough order of run time, slowest first (used to schedule parallel runs).
EXPECTED_ORDER = {
    name: rank
    for rank, name in enumerate(
        ["letter", "landsat", "shuttle", "spam", "covertype", "miniboone", "dna"]
    )
}


def run_child(name: str, args: argparse.Namespace) -> dict:
    """Run one dataset in a child process; its summary, or why it failed."""
    cmd = [sys.executable, __file__, "--one", name, "--work-dir", str(args.work_dir)]
    cmd += ["--data-dir", args.data_dir, "--n-jobs", str(args.n_jobs)]
    if args.quick:
        cmd.append("--quick")
    if args.max_train:
        cmd += ["--max-train", str(args.max_train)]
    env = dict(os.environ)
    if args.parallel > 1:
        # Parallel processes share the cores: one BLAS/OpenMP thread each.
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = "1"
    print(f"[{time.strftime('%H:%M:%S')}] {name} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, timeout=args.timeout, capture_output=True, text=True, env=env
        )
        ok = proc.returncode == 0
        error = proc.stderr.strip().splitlines()[-1:] if not ok else []
    except subprocess.TimeoutExpired:
        ok, error = False, [f"timed out after {args.timeout:.0f} s"]
    wall = time.perf_counter() - t0
    print(
        f"[{time.strftime('%H:%M:%S')}] {name}: {'ok' if ok else 'FAILED'} "
        f"in {wall:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    if not ok:
        return {"name": name, "failed": " ".join(error), "wall_s": wall}
    path = args.work_dir / f"{name}.json"
    summary = json.loads(path.read_text())
    summary["wall_s"] = wall
    path.write_text(json.dumps(summary, indent=2))
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Run the BudgetDAG benchmarks and write BENCHMARKS.md."
    )
    parser.add_argument(
        "--data-dir",
        default=str(DEFAULT_DATA_DIR),
        help="directory with the dataset files, searched before the package's "
        "demo files and assets/ "
        f"(default: {DEFAULT_DATA_DIR})",
    )
    parser.add_argument(
        "--datasets",
        nargs="+",
        default=[*SMALL, *LARGE],
        help="datasets to run (default: letter pima landsat spam dna shuttle; "
        "also miniboone, covertype when their UCI files are in --data-dir)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="3 folds, 6 sweep points, 7 CEGB settings; letter subsampled to "
        "6000 training rows, shuttle to 4000 training and 5000 test rows "
        "(default: 5 folds, 20 sweep points, 12 CEGB settings, shuttle 20000 "
        "training rows; CEGB adds 4 settings in the widest cost gaps either way)",
    )
    parser.add_argument(
        "--max-train",
        type=int,
        default=None,
        help="subsample every training set to at most this many rows "
        "(seeded, stratified; default: only shuttle is subsampled)",
    )
    parser.add_argument(
        "--n-jobs", type=int, default=1, help="joblib jobs inside each dataset"
    )
    parser.add_argument(
        "--parallel",
        type=int,
        default=os.cpu_count() or 1,
        help="datasets run at once, each in its own single-threaded process "
        "(default: the number of cores)",
    )
    parser.add_argument(
        "--out",
        default=str(HERE.parent / "BENCHMARKS.md"),
        help="report to write (default: BENCHMARKS.md at the repository root)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=3600,
        help="seconds allowed per dataset before it is reported as not finished",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="rewrite BENCHMARKS.md from the results of the last run",
    )
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cegb-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--work-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.work_dir = Path(args.work_dir or HERE / "results" / "run_all")
    args.work_dir.mkdir(parents=True, exist_ok=True)
    if args.one and args.cegb_only:
        rerun_cegb(args.one, args)
        return
    if args.one:
        summary = run_one(args.one, args)
        (args.work_dir / f"{args.one}.json").write_text(json.dumps(summary, indent=2))
        return

    from _report import current_commit, write_report

    started = time.perf_counter()
    run_info = args.work_dir / "run.json"
    if args.report_only:
        if run_info.exists():
            info = json.loads(run_info.read_text())
            args.commit = info.get("commit")
            args.run_minutes = info.get("total_s", 0) / 60 or None
        summaries = {}
        for name in args.datasets:
            path = args.work_dir / f"{name}.json"
            summaries[name] = (
                json.loads(path.read_text())
                if path.exists()
                else {"name": name, "failed": "no result from the last run"}
            )
    else:
        # The code that ran, even if the checkout moves on during the run.
        args.commit = current_commit()
        # Slowest first, so the long runs overlap the short ones.
        order = sorted(
            args.datasets, key=lambda n: EXPECTED_ORDER.get(n, len(EXPECTED_ORDER))
        )
        with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
            done = dict(zip(order, pool.map(lambda n: run_child(n, args), order)))
        summaries = {name: done[name] for name in args.datasets}
    total = time.perf_counter() - started
    if not args.report_only:
        run_info.write_text(json.dumps({"commit": args.commit, "total_s": total}))
    write_report(summaries, args, total)
    print(f"wrote {args.out} in {total / 60:.1f} min", file=sys.stderr)


if __name__ == "__main__":
    main()
