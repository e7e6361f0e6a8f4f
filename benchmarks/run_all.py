"""Run the benchmark datasets and write BENCHMARKS.md from their saved results.

    python benchmarks/run_all.py [--quick] [--data-dir DIR] [--datasets letter pima]

For each dataset (letter, pima, landsat: full DAG; spam, dna, shuttle: many
sensors or many states) on its test split: the library's default DAG curve
(``tradeoff_curve``, method ``dag``), the paper configuration of its policies
(sensor inputs, 0/1 losses: ``dag_paper``), every fixed subset and two lower
hulls of them (``hull``: the subsets on the test rows' own hull, an optimistic
bound; ``hull_oof``: those on the out-of-fold training rows' hull, read on the
test rows), all sensors, the oracle, the confidence cascade
(``budgetdag_core.tradeoff._cascade``), all from the default's bank; beyond
12 sensors also the paper's many-sensor configuration (``n_subsets=8,
include_all=True`` on its own bank: ``paper``); LightGBM's
cost-efficient gradient boosting (CEGB) with the same cost accounting (see
``_cegb.py``), and the active-feature-acquisition peers AACO and a greedy CMI
acquirer (``_afa_run.py``; ``--no-peers`` leaves them out, ``--keep-peers``
keeps their saved points and seconds); fit time (also of the default
``cost_scale="auto"`` fit, from scratch), sweep
time, prediction throughput and peak memory, beside one single-threaded HGB
on all features fitted in the same process (the unit of the speed ratios).
Each dataset runs in its own process, so its peak memory (``ru_maxrss``) is
its own and a failure does not stop the others.

Results go to ``--work-dir`` (``benchmarks/results/run_all``, committed): per
dataset a summary JSON (with its commit, command, finish time and machine) and
its curve CSV. With the default ``--out`` the run ends with
``render_report.py``: BENCHMARKS.md, its SVG figures in
``docs/images/benchmarks/`` and the generated blocks of README.md and the user
guide, from every saved result (each dataset's last run, and the saved
``bench_afa.py`` runs in ``--afa-dir``). ``--report-only`` only does that.

The default run without the peers (5 folds, 20 sweep points per curve) takes
about 25 minutes of one core on an idle machine, 14 of them for shuttle's
512-state DAG.
``--quick`` (3 folds, 6 sweep points, 7 CEGB settings, smaller letter and
shuttle samples) is for a smoke test.
pima runs on 5 seeded stratified 75/25 splits (seeds 0-4; ``--splits N`` sets
the number for every dataset split at random) and the report gives the mean,
the spread and in how many splits a baseline is ahead; every choice is made
per split on its own training rows. The curve CSV of a dataset split at
random has a ``seed`` column.
MiniBooNE and Covertype run when named in ``--datasets`` and their UCI files
(``MiniBooNE_PID.txt``, ``covtype.data.gz``) are in ``--data-dir``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
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

from _afa_run import peer_settings, run_peers  # noqa: E402
from _cegb import QUICK_TRADEOFFS, TRADEOFFS, cegb_curve  # noqa: E402
from _common import (  # noqa: E402
    LARGE,
    RANDOM_SPLIT,
    RESULTS,
    SMALL,
    BenchData,
    Clock,
    curve_on_test,
    default_params,
    load,
    predict_rows_per_second,
    split_seeds,
    tiled,
    timed_reference_fit,
    use_data_dir,
    warm_up,
)
from _report import machine  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from budgetdag_core import BudgetDAGClassifier, tradeoff_curve  # noqa: E402
from budgetdag_core.tradeoff import lower_convex_hull  # noqa: E402

DEFAULT_DATA_DIR = HERE.parent.parent / "shared" / "datasets"
#: The report the pages include (written with the figures and page blocks).
DEFAULT_OUT = HERE.parent / "BENCHMARKS.md"


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


def bank_kind(model: BudgetDAGClassifier) -> str:
    """The kind of bank a fitted model predicts with (an ``"auto"`` bank's
    choice on validation rows)."""
    bank = model.bank_
    return str(getattr(bank, "kind_", None) or bank.kind)


def paper_subsets_curve(
    d: BenchData, params: dict, n_points: int
) -> tuple[pd.DataFrame, float]:
    """The test points (method ``paper``) of the paper's many-sensor
    configuration (``d.paper_params``: Alg. 2's subsets) on its own bank, with
    the default's other settings, and its seconds; none where it does not
    apply."""
    if d.paper_params is None:
        return pd.DataFrame(), 0.0
    with Clock() as clock:
        res = curve_on_test(
            d,
            n_points=n_points,
            cascade=False,  # the cascade and hulls are read on the default's bank
            **{**params, **d.paper_params},
        )
    f = res.frame
    points = f[(f["split"] == "test") & (f["method"] == "dag")]
    return points.assign(method="paper"), clock.wall


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


#: Share of the all-sensor cost the peers' rollouts may spend: all of it up to
#: 20 sensors, 80 % beyond (enough for the 75 % reading; rollouts cost time per
#: step).
PEER_MAX_FRACTION = {"few": 1.0, "many": 0.8}
#: ``--quick``: a smaller masked classifier and fewer candidates (smoke test).
QUICK_PEERS = {
    "classifier": {
        "engine": "mlp",
        "n_masks": 8,
        "oof_folds": 2,
        "params": {"hidden_layer_sizes": (64,), "max_iter": 50},
    },
    "aaco": {"n_masks": 30},
    "greedy": {"k_neighbors": 8},
}


#: The peers' methods in a curve CSV, and the keys of their seconds.
PEER_METHODS = ("aaco", "greedy")
PEER_SECONDS = (
    "AACO fit (masked classifier + fold models)",
    "AACO rollout (test rows)",
    "greedy CMI fit (masked classifier)",
    "greedy CMI rollout (test rows)",
)


def saved_peers(
    name: str, args: argparse.Namespace, seed: int
) -> tuple[pd.DataFrame, dict]:
    """The peers' test points and seconds of the saved run of ``name`` on the
    split of ``seed`` (``--keep-peers``): the peers do not read this
    library, so a run of the DAG alone can keep their last measurements on
    the same rows. Refuses a saved run that lacks them."""
    path, jpath = args.work_dir / f"{name}_curve.csv", args.work_dir / f"{name}.json"
    if not (path.exists() and jpath.exists()):
        raise SystemExit(f"--keep-peers: no saved run of {name} in {args.work_dir}")
    curve = pd.read_csv(path)
    if "seed" in curve:
        curve = curve[curve["seed"] == seed].drop(columns="seed")
    peers = curve[curve["method"].isin(PEER_METHODS)]
    summary = json.loads(jpath.read_text())
    splits = {s["seed"]: s["seconds"] for s in summary.get("splits", [])}
    seconds = splits.get(seed, summary["seconds"])
    if peers.empty or not all(k in seconds for k in PEER_SECONDS):
        raise SystemExit(f"--keep-peers: the saved run of {name} has no peers")
    return peers, {k: seconds[k] for k in PEER_SECONDS}


def afa_peers(
    d: BenchData, args: argparse.Namespace, seed: int
) -> tuple[pd.DataFrame, dict]:
    """AACO's and the greedy CMI acquirer's test points, and their seconds
    (``seed``: the split's)."""
    if args.no_peers:
        return pd.DataFrame(), {}
    if args.keep_peers:
        return saved_peers(d.name, args, seed)
    many = "many" if d.spec.n_sensors > 20 else "few"
    quick = QUICK_PEERS if args.quick else {}
    settings = peer_settings(d, {**quick, "max_fraction": PEER_MAX_FRACTION[many]})
    points, info = run_peers(d, {"aaco", "greedy"}, settings, args.n_jobs)
    frame = points[["method", "avg_cost", "error"]].assign(split="test")
    seconds = {
        "AACO fit (masked classifier + fold models)": info["aaco_fit_s"],
        "AACO rollout (test rows)": info["aaco_rollout_s"],
        "greedy CMI fit (masked classifier)": info["greedy_fit_s"],
        "greedy CMI rollout (test rows)": info["greedy_rollout_s"],
    }
    return frame, seconds


def run_split(
    name: str, args: argparse.Namespace, seed: int
) -> tuple[dict, pd.DataFrame]:
    """Every method on one train/test split of ``name``: its summary and test curve."""
    cv = 3 if args.quick else 5
    n_points = 6 if args.quick else 20
    d = load(name, quick=args.quick, max_train=args.max_train, seed=seed)
    # The library's default; the paper's n_subsets configuration runs apart.
    params = {"random_state": 0, "cv": cv, "n_jobs": args.n_jobs}
    params |= default_params(d)
    log = list(d.notes)
    # The unit of the speed ratios, fitted and timed in this process.
    ref, ref_clock, ref_error = timed_reference_fit(
        d.X_train, d.y_train, d.X_test, d.y_test
    )
    with threadpool_limits(1):
        ref_rows_per_s = predict_rows_per_second(ref, tiled(d.X_test, 20000), 1)
    t0 = time.perf_counter()
    degree_scores: dict = {}
    if args.choose_degree:
        degree, degree_scores = choose_degree(d, params, max(4, n_points - 2), log)
        params["policy_degree"] = degree
    else:
        log.append(
            "policy degree: the library's default (1 on the classifier's "
            "probabilities); the paper configuration uses degree "
            f"{max(d.degrees)}"
        )
    select_s = time.perf_counter() - t0
    paper_degree = params.get("policy_degree", max(d.degrees))

    with Clock() as bank_clock:
        template = BudgetDAGClassifier(d.spec, **params)
        bank = template.fit_bank(d.X_train, d.y_train)
    with Clock() as sweep_clock:
        res = curve_on_test(d, n_points=n_points, bank=bank, **params)
    with Clock() as conf_clock:
        res_conf = curve_on_test(
            d,
            cost_scales=list(res.cost_scales),
            bank=bank,
            cascade=False,  # the same bank's cascade is already in res
            **{
                **params,
                # The paper's configuration (sensor inputs, 0/1 stop losses) on
                # the same bank: degree 2 on the small DAGs, 1 where wide subset
                # states would take minutes per scale at degree 2 (or the chosen
                # degree).
                "policy_features": "sensors",
                "stop_loss": "zero_one",
                "policy_degree": paper_degree,
            },
        )
    mid = res.cost_scales[len(res.cost_scales) // 2]
    with Clock() as policy_clock:
        model = BudgetDAGClassifier(d.spec, **{**params, "cost_scale": float(mid)})
        model.fit(d.X_train, d.y_train, bank=bank)
    rows_per_s = throughput(model, d.X_test)
    # What a user's first call runs: a new estimator, no bank given, the
    # default cost scale ("auto"); the fits above reuse the curve's bank.
    default = {k: v for k, v in params.items() if k != "cost_scale"}
    with Clock() as default_clock:
        BudgetDAGClassifier(d.spec, **default).fit(d.X_train, d.y_train)
    paper, paper_s = paper_subsets_curve(d, params, n_points)

    cegb, cegb_s, cegb_fit_s = timed_cegb(d, args)
    peers, peer_seconds = afa_peers(d, args, seed)

    frame = res.frame[res.frame["split"] == "test"].copy()
    conf = res_conf.frame
    conf = conf[(conf["split"] == "test") & (conf["method"] == "dag")].copy()
    conf["method"] = "dag_paper"
    cegb["split"] = "test"
    out = pd.concat([frame, conf, paper, cegb, peers], ignore_index=True)
    out["sensors"] = out["sensors"].map(
        lambda s: "|".join(s) if isinstance(s, (list, tuple)) else s
    )
    summary = {
        "name": name,
        "description": d.description,
        "n_train": len(d.X_train),
        "n_test": len(d.X_test),
        "n_sensors": d.spec.n_sensors,
        "n_states": int(model.sensor_dag_.n_states),
        "strategy": model.strategy_,
        "bank_kind": bank_kind(model),
        "params": {k: v for k, v in params.items() if k != "n_jobs"},
        "paper_params": d.paper_params,
        "notes": log,
        "degree_scores": {str(k): v for k, v in degree_scores.items()},
        "n_points": len(res.cost_scales),
        "seconds": {
            "degree selection": select_s,
            "bank fit": bank_clock.wall,
            "one policy fit (bank reused)": policy_clock.wall,
            "fit (bank + one policy)": bank_clock.wall + policy_clock.wall,
            "default fit (cost_scale auto)": default_clock.wall,
            "sweep (bank reused)": sweep_clock.wall,
            "paper-configuration sweep (bank reused)": conf_clock.wall,
            **({"paper n_subsets curve (own bank)": paper_s} if paper_s else {}),
            "CEGB (all settings)": cegb_s,
            "CEGB fits only": cegb_fit_s,
            **peer_seconds,
        },
        # CPU seconds of this process: a loaded machine moves them less than
        # wall seconds (the speed table's ratios use them where recorded).
        "cpu_seconds": {
            "one policy fit (bank reused)": policy_clock.cpu,
            "fit (bank + one policy)": bank_clock.cpu + policy_clock.cpu,
            "default fit (cost_scale auto)": default_clock.cpu,
            "sweep (bank reused)": sweep_clock.cpu,
        },
        "predict_rows_per_s": rows_per_s,
        "reference": {
            "fit_cpu_s": ref_clock.cpu,
            "fit_s": ref_clock.wall,
            "error": ref_error,
            "predict_rows_per_s": ref_rows_per_s,
        },
    }
    return summary, out


#: Per-split facts a multi-split summary keeps under ``"splits"``.
SPLIT_KEYS = ("params", "notes", "degree_scores", "n_points", "seconds")


def combine_splits(parts: list[tuple[int, dict]]) -> dict:
    """One dataset summary from the summaries of its seeded splits.

    Facts shared by every split (sizes, sensors, states, settings, notes with
    the seed left out) are kept once; the rest goes to ``"splits"`` (one entry
    per seed) and to notes prefixed by the seed. Seconds and prediction
    throughput are means over the splits.
    """
    seeds = [seed for seed, _ in parts]
    first = parts[0][1]
    if len(parts) == 1:
        return {**first, "split_seeds": seeds}
    summaries = [s for _, s in parts]
    unseeded = [[n.replace(f", seed {k}", "") for n in s["notes"]] for k, s in parts]
    shared = [n for n in unseeded[0] if all(n in u for u in unseeded)]
    notes = [
        f"mean of {len(seeds)} seeded splits (seeds "
        + ", ".join(map(str, seeds))
        + "); the cascade's order and thresholds (and with --choose-degree the "
        "policy degree) are chosen on each split's own training rows",
        *shared,
    ]
    for (seed, _), u in zip(parts, unseeded, strict=True):
        notes += [f"seed {seed}: {n}" for n in u if n not in shared]
    return {
        **{k: first[k] for k in ("name", "description", "n_train", "n_test")},
        **{k: first[k] for k in ("n_sensors", "n_states", "bank_kind")},
        **{k: first[k] for k in ("strategy", "paper_params") if k in first},
        "params": {
            k: v
            for k, v in first["params"].items()
            if all(s["params"].get(k) == v for s in summaries)
        },
        "notes": notes,
        "n_points": max(s["n_points"] for s in summaries),
        "seconds": {
            k: float(np.mean([s["seconds"][k] for s in summaries]))
            for k in first["seconds"]
        },
        **(
            {
                "cpu_seconds": {
                    k: float(np.mean([s["cpu_seconds"][k] for s in summaries]))
                    for k in first["cpu_seconds"]
                }
            }
            if all("cpu_seconds" in s for s in summaries)
            else {}
        ),
        "predict_rows_per_s": float(
            np.mean([s["predict_rows_per_s"] for s in summaries])
        ),
        **(
            {
                "reference": {
                    k: float(np.mean([s["reference"][k] for s in summaries]))
                    for k in first["reference"]
                }
            }
            if "reference" in first
            else {}
        ),
        "split_seeds": seeds,
        "splits": [
            {"seed": seed, **{k: s[k] for k in SPLIT_KEYS}} for seed, s in parts
        ],
    }


def run_one(name: str, args: argparse.Namespace) -> dict:
    """Every seeded split of one dataset; returns the summary, writes the curve CSV.

    The curve CSV of a dataset with a random split has a ``seed`` column (the
    split's seed); a fixed split's CSV has none.
    """
    warnings.filterwarnings("ignore")
    use_data_dir(args.data_dir)
    warm_up()  # the compiled kernels' one-off load stays out of the fit times
    parts, frames = [], []
    for seed in split_seeds(name, args.splits):
        summary, frame = run_split(name, args, seed)
        if name in RANDOM_SPLIT:
            frame.insert(0, "seed", seed)
        parts.append((seed, summary))
        frames.append(frame)
    pd.concat(frames, ignore_index=True).to_csv(
        args.work_dir / f"{name}_curve.csv", index=False
    )
    return {
        **combine_splits(parts),
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "load_average_1m": os.getloadavg()[0],
        "finished_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": machine(),
    }


def rerun_cegb(name: str, args: argparse.Namespace) -> None:
    """Recompute only the CEGB rows of a finished dataset (same data and splits)."""
    warnings.filterwarnings("ignore")
    use_data_dir(args.data_dir)
    path = args.work_dir / f"{name}_curve.csv"
    curve = pd.read_csv(path)
    seeds = sorted(curve["seed"].unique()) if "seed" in curve else [None]
    parts, totals, fits = [curve[curve["method"] != "cegb"]], [], []
    for seed in seeds:
        d = load(name, quick=args.quick, max_train=args.max_train, seed=int(seed or 0))
        cegb, total, fit_s = timed_cegb(d, args)
        cegb["split"] = "test"
        if seed is not None:
            cegb.insert(0, "seed", int(seed))
        parts.append(cegb)
        totals.append(total)
        fits.append(fit_s)
    pd.concat(parts, ignore_index=True).to_csv(path, index=False)
    jpath = args.work_dir / f"{name}.json"
    summary = json.loads(jpath.read_text())
    summary["seconds"]["CEGB (all settings)"] = float(np.mean(totals))
    summary["seconds"]["CEGB fits only"] = float(np.mean(fits))
    for split, total, fit_s in zip(summary.get("splits", []), totals, fits):
        split["seconds"]["CEGB (all settings)"] = total
        split["seconds"]["CEGB fits only"] = fit_s
    jpath.write_text(json.dumps(summary, indent=2))


#: Rough order of run time, slowest first (used to schedule parallel runs).
EXPECTED_ORDER = {
    name: rank
    for rank, name in enumerate(
        ["shuttle", "letter", "landsat", "spam", "covertype", "miniboone", "dna"]
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
    if args.splits is not None:
        cmd += ["--splits", str(args.splits)]
    if args.choose_degree:
        cmd.append("--choose-degree")
    if args.no_peers:
        cmd.append("--no-peers")
    if args.keep_peers:
        cmd.append("--keep-peers")
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
    # Partial runs merge in the report: each dataset keeps the commit it ran
    # on and the command that ran it.
    summary["commit"] = args.commit
    summary["command"] = args.command
    path.write_text(json.dumps(summary, indent=2))
    return summary


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Run the BudgetDAG benchmarks and write BENCHMARKS.md."
    )
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("BUDGETDAG_DATA", str(DEFAULT_DATA_DIR)),
        help="directory with the dataset files, searched before the package's "
        "demo files and assets/ "
        f"(default: $BUDGETDAG_DATA, else {DEFAULT_DATA_DIR})",
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
        "--splits",
        type=_positive_int,
        default=None,
        help="seeded stratified 75/25 train/test splits (seeds 0..N-1) for the "
        "datasets split at random (pima, spam, miniboone, covertype); the report "
        "gives their mean and spread. Datasets with a fixed split (letter, "
        "landsat, dna, shuttle) run once. (default: 5 for pima, 1 for the others)",
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
        default=str(DEFAULT_OUT),
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
        help="rewrite BENCHMARKS.md from the saved results (each dataset's "
        "last run, in --work-dir)",
    )
    parser.add_argument(
        "--choose-degree",
        action="store_true",
        help="choose the DAG's policy degree among the dataset's candidates on a "
        "validation split of the training rows (default: the library's default "
        "degree, as a user gets it)",
    )
    parser.add_argument(
        "--no-peers",
        action="store_true",
        help="leave out the AFA peers (AACO, greedy CMI), the slowest columns",
    )
    parser.add_argument(
        "--keep-peers",
        action="store_true",
        help="keep the AFA peers' points and seconds of the saved run of each "
        "dataset (same rows; the peers do not read this library) instead of "
        "running them again",
    )
    parser.add_argument(
        "--afa-dir",
        default=str(RESULTS / "afa"),
        help="saved bench_afa.py runs (folders with readings.csv and speed.csv) "
        "whose tables the report adds (default: benchmarks/results/afa)",
    )
    parser.add_argument(
        "--no-figures",
        action="store_true",
        help="skip the SVG figures (default: written to docs/images/benchmarks "
        "beside --out)",
    )
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cegb-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--work-dir",
        default=None,
        help="folder of the per-dataset results that --report-only reads "
        "(default: benchmarks/results/run_all, committed: the pages are "
        "generated from it)",
    )
    args = parser.parse_args()
    args.command = shlex.join(["python", "benchmarks/run_all.py", *sys.argv[1:]])
    args.work_dir = Path(args.work_dir or RESULTS / "run_all")
    args.work_dir.mkdir(parents=True, exist_ok=True)
    if args.one and args.cegb_only:
        rerun_cegb(args.one, args)
        return
    if args.one:
        summary = run_one(args.one, args)
        (args.work_dir / f"{args.one}.json").write_text(json.dumps(summary, indent=2))
        return

    from _report import current_commit, summaries_from, write_report

    started = time.perf_counter()
    if args.report_only:
        summaries = summaries_from(args.work_dir, args.datasets)
    else:
        # The code that ran, even if the checkout moves on during the run.
        args.commit = current_commit()
        # In parallel slowest first, so the long runs overlap the short ones;
        # one at a time in the order given.
        order = list(args.datasets)
        if args.parallel > 1:
            order.sort(key=lambda n: EXPECTED_ORDER.get(n, len(EXPECTED_ORDER)))
        with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
            done = dict(zip(order, pool.map(lambda n: run_child(n, args), order)))
        summaries = {name: done[name] for name in args.datasets}
        (args.work_dir / "run.json").write_text(
            json.dumps(
                {
                    "argv": sys.argv[1:],
                    "commit": args.commit,
                    "total_s": time.perf_counter() - started,
                },
                indent=2,
            )
        )
    if Path(args.out).resolve() == DEFAULT_OUT and not args.no_figures:
        # The default report: every generated page and figure of the checkout.
        from render_report import write_all

        write_all(args.work_dir, Path(args.afa_dir))
    else:
        write_report(summaries, args, time.perf_counter() - started)
    print(
        f"wrote {args.out} in {(time.perf_counter() - started) / 60:.1f} min",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
