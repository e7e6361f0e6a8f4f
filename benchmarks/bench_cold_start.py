"""First fits after a fresh install, and the fit-time estimates, measured.

Part ``cold`` (issue 31): the first default fit of the landsat and letter
demos in a fresh process with an empty numba cache (a fresh install: the
compiled kernels are not there yet) against a warm one. Each repeat runs, one
after the other, in fresh processes:

- cold: a new empty ``NUMBA_CACHE_DIR``; import, load, first fit, then a
  second fit in the same process;
- warm: the same cache directory, filled by the cold process; import, load,
  first fit.

It prints the seconds (wall and this process's CPU), the cold/warm ratio of
the first fits (the target is at most 1.5) and the load averages. With
``--compare PATH`` each repeat also runs the same pair on the package at PATH
(e.g. a checkout of main), so that before and after are measured side by side.

Part ``estimates``: :func:`budgetdag_core.estimates.estimate_fit_seconds_for` with
the fit's :func:`~budgetdag_core.estimates.probe_fit` (as the app's Train page calls
them) against the actual wall time of the fit it estimates, on
the bundled demos, a 64-column table (scikit-learn's digits, its 8x8 pixels as
four 4x4 quadrant sensors) and a 256-state table (digits, each image row a
sensor), warm; and on landsat cold. The target is a factor of two either way.

Part ``many`` (issue 53): fit-time and stored-size estimates against the
fit's CPU seconds (one thread: on a shared machine they stay comparable) and
the session store's bytes (``ui.store.encode``, full and slim; the skops
file beside), for the full DAG of 11 and 12 sensors (wine's 13 columns, the
first paired), Alg. 2's subsets, and each many-sensor strategy (``dag=``
chain, routed, sparse, auto) on 30 (breast cancer) and 64 (digits' pixels)
one-column sensors; one fixed HistGradientBoosting fit in the same process
says how loaded the machine was. ``--jobs N`` runs cases side by side,
``--save PATH`` writes the rows for ``render_report.py``
(``benchmarks/results/estimates/many.json``), ``--measured OUTPUT`` makes
only the estimates again beside an earlier run's measurements.

Part ``app``: the Train page's estimate (:func:`ui.estimate.training_seconds`
plus the queue's wait, :meth:`ui.jobs.Pool.wait_seconds`) against the time
from pressing Train to the result, through the app's own path: jobs of
:func:`ui.training.train` in the app's pool of worker processes, one server
process with an empty numba cache (the first training is cold), the tables
one after the other, then two trainings submitted at once (the second
waits in the queue). ``BUDGETDAG_WORKERS`` and ``BUDGETDAG_N_JOBS`` apply as
in the app.

Run ``PYTHONPATH=. python benchmarks/bench_cold_start.py`` (``--part cold``,
``--part estimates``, ``--part many`` or ``--part app``; ``--repeats N``;
``--n-jobs N``, default 1 for the cold part, the app's threads for the
estimates).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

WORKER = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
import numpy as np
import pandas as pd
import budgetdag_core
from budgetdag_core import BudgetDAGClassifier, SensorSpec, load_demo
imported = time.perf_counter() - t0
name, n_jobs, fits = sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
ONE_COLUMN_SENSORS = {"wine13": "load_wine", "cancer30": "load_breast_cancer",
                      "digits64": "load_digits"}

def table(name):
    if name in ONE_COLUMN_SENSORS:  # many one-column sensors: dag="auto"
        from sklearn import datasets
        data = getattr(datasets, ONE_COLUMN_SENSORS[name])()
        columns = [f"c{i}" for i in range(data.data.shape[1])]
        X = pd.DataFrame(data.data, columns=columns)
        train = np.random.default_rng(0).permutation(len(X))[: int(0.75 * len(X))]
        spec = SensorSpec.per_column(list(X.columns))
        return spec, X.iloc[train], pd.Series(data.target[train]), {}
    if not name.startswith("digits"):
        demo = load_demo(name)
        params = {"n_subsets": 8} if name == "spam" else {}
        if name == "toy":
            params["cost_scale"] = 0.03
        return demo.spec, demo.X_train, demo.y_train, params
    from sklearn.datasets import load_digits
    digits = load_digits()
    pixels = [f"p{r}{c}" for r in range(8) for c in range(8)]
    X = pd.DataFrame(digits.data, columns=pixels)
    if name == "digits_quadrants":
        groups = {
            f"q{qr}{qc}": [f"p{r}{c}" for r in range(4 * qr, 4 * qr + 4)
                           for c in range(4 * qc, 4 * qc + 4)]
            for qr in range(2) for qc in range(2)
        }
    else:  # digits_rows: 8 sensors, 256 states
        groups = {f"row{r}": [f"p{r}{c}" for c in range(8)] for r in range(8)}
    spec = SensorSpec(groups, dict.fromkeys(groups, 1.0))
    train = np.random.default_rng(0).permutation(len(X))[: int(0.75 * len(X))]
    return spec, X.iloc[train], pd.Series(digits.target[train]), {}

spec, X, y, params = table(name)
ready = getattr(budgetdag_core, "kernels_ready", lambda: None)()  # None: older
estimate = one_thread = None
if os.environ.get("ESTIMATE") == "1":
    from budgetdag_core.estimates import estimate_fit_seconds_for, probe_fit
    # As the app's Train page: the fit's first steps probed (states, a masked
    # bank's first fold timed), then the estimate.
    # The fit timed below is this process's first (the probe loads kernels,
    # so it is said rather than guessed).
    probe = probe_fit(spec, X, y, n_jobs=n_jobs, max_seconds=3.0, **params)
    estimate = estimate_fit_seconds_for(spec, X, y, n_jobs=n_jobs, probe=probe,
                                        first_fit=True, **params)
    one_thread = estimate_fit_seconds_for(spec, X, y, n_jobs=1, probe=probe,
                                          first_fit=True, **params)
out = {"import": imported, "ready": ready, "estimate": estimate, "fits": [], "cpu": []}
out["one_thread"] = one_thread
for _ in range(fits):
    model = BudgetDAGClassifier(spec, random_state=0, n_jobs=n_jobs, **params)
    t, c = time.perf_counter(), time.process_time()
    model.fit(X, y)
    out["fits"].append(time.perf_counter() - t)
    out["cpu"].append(time.process_time() - c)
out["load"] = os.getloadavg()[0]
print(json.dumps(out))
"""


def run_worker(
    package: Path, name: str, n_jobs: int | None, fits: int, cache: str, **env: str
) -> dict:
    """One fresh process: import, load ``name``, ``fits`` fits; its timings."""
    out = subprocess.run(
        [sys.executable, "-c", WORKER, str(package), name, json.dumps(n_jobs)]
        + [str(fits)],
        env={**os.environ, "NUMBA_CACHE_DIR": cache, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def cold_part(names: list[str], repeats: int, n_jobs: int | None, compare: Path | None):
    packages = {"this": ROOT} | ({"compare": compare} if compare else {})
    print(
        f"First default fit, cold (empty numba cache) vs warm, fresh processes; "
        f"n_jobs={n_jobs}, {os.cpu_count()} cores"
    )
    print(
        f"{'table':8} {'package':8} {'rep':>3} {'cold 1st':>9} {'cpu':>6} "
        f"{'2nd':>6} {'warm 1st':>9} {'cpu':>6} {'cold/warm':>9} "
        f"{'2nd/warm':>8} {'load':>5}"
    )
    ratios: dict[tuple[str, str], list[float]] = {}
    for name in names:
        for rep in range(repeats):
            for label, package in packages.items():
                with tempfile.TemporaryDirectory() as cache:
                    cold = run_worker(package, name, n_jobs, 2, cache)
                    warm = run_worker(package, name, n_jobs, 1, cache)
                ratio = cold["fits"][0] / warm["fits"][0]
                ratios.setdefault((name, label), []).append(ratio)
                print(
                    f"{name:8} {label:8} {rep:>3} {cold['fits'][0]:>8.1f}s "
                    f"{cold['cpu'][0]:>5.1f}s {cold['fits'][1]:>5.1f}s "
                    f"{warm['fits'][0]:>8.1f}s {warm['cpu'][0]:>5.1f}s "
                    f"{ratio:>9.2f} {cold['fits'][1] / warm['fits'][0]:>8.2f} "
                    f"{warm['load']:>5.1f}",
                    flush=True,
                )
    print("median cold/warm ratio (target <= 1.5):")
    for (name, label), values in ratios.items():
        listed = ", ".join(f"{value:.2f}" for value in values)
        print(f"  {name:8} {label:8} {statistics.median(values):.2f}  ({listed})")


ESTIMATE_TABLES = (
    "landsat",
    "letter",
    "pima",
    "spam",
    "toy",
    "digits_quadrants",
    "digits_rows",
)
#: Tables of one-column sensors beyond the full DAG's 12 (wine 13, breast
#: cancer 30, digits' 64 pixels): the library's default (``dag="auto"``).
MANY_TABLES = ("wine13", "cancer30", "digits64")


def estimates_part(names: list[str], n_jobs: int | None, cold: bool = True):
    print(
        f"Estimated vs actual fit seconds (default settings, n_jobs={n_jobs}, "
        f"{os.cpu_count()} cores); target: within 2x"
    )
    print(
        "(On a busy machine the wall times stretch with the load; the CPU seconds\n"
        "of the fit, against the estimate for one thread, stay comparable.)"
    )
    print(
        f"{'table':17} {'kernels':8} {'estimate':>9} {'actual':>8} {'ratio':>6} "
        f"{'1 thread':>9} {'cpu':>7} {'ratio':>6} {'load':>5}"
    )
    cache = tempfile.mkdtemp()
    rows = [(name, True) for name in names] + ([("landsat", False)] if cold else [])
    for name, warm in rows:
        if warm:
            run_worker(ROOT, "toy", 1, 1, cache)  # fills the cache
            result = run_worker(ROOT, name, n_jobs, 1, cache, ESTIMATE="1")
        else:
            with tempfile.TemporaryDirectory() as empty:
                result = run_worker(ROOT, name, n_jobs, 1, empty, ESTIMATE="1")
        actual, cpu = result["fits"][0], result["cpu"][0]
        print(
            f"{name:17} {'ready' if result['ready'] else 'cold':8} "
            f"{result['estimate']:>8.1f}s {actual:>7.1f}s "
            f"{result['estimate'] / actual:>6.2f} {result['one_thread']:>8.1f}s "
            f"{cpu:>6.1f}s {result['one_thread'] / cpu:>6.2f} {result['load']:>5.1f}",
            flush=True,
        )


APP_WORKER = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import pandas as pd
from budgetdag_core import Dataset, SensorSpec
from ui import jobs
from ui.data import demo_dataset, load_app_demo
from ui.estimate import busy_factor, stretched, training_seconds
from ui.spec_table import suggested_cost_scale
from ui.training import TrainSettings, app_n_jobs, train
from ui.state import MANY_SENSOR_CLASSIFIER
from budgetdag_core.validation import MAX_FULL_DAG_SENSORS
from functools import partial

def table(name):
    if name == "digits" or not name.startswith("digits"):  # "digits": 64 pixels
        return demo_dataset(load_app_demo(name))
    from sklearn.datasets import load_digits
    digits = load_digits()
    pixels = [f"p{r}{c}" for r in range(8) for c in range(8)]
    frame = pd.DataFrame(digits.data, columns=pixels)
    frame["digit"] = digits.target
    if name == "digits_quadrants":  # 64 columns, 4 sensors
        groups = {
            f"q{qr}{qc}": [f"p{r}{c}" for r in range(4 * qr, 4 * qr + 4)
                           for c in range(4 * qc, 4 * qc + 4)]
            for qr in range(2) for qc in range(2)
        }
    else:  # digits_rows: 8 sensors, 256 states
        groups = {f"row{r}": [f"p{r}{c}" for c in range(8)] for r in range(8)}
    order = np.random.default_rng(0).permutation(len(frame))
    cut = int(0.75 * len(frame))
    return Dataset(name, frame.iloc[order[:cut]], frame.iloc[order[cut:]],
                   "digit", SensorSpec(groups, dict.fromkeys(groups, 1.0)),
                   kind="upload")

def settings(dataset):
    # The app's defaults for this data (ui.state.set_dataset): beyond the full
    # DAG's sensors the library's default (no subsets, its own bank kind).
    spec = dataset.spec
    many = spec.n_sensors > MAX_FULL_DAG_SENSORS
    return TrainSettings(
        cost_scale=suggested_cost_scale(spec),
        classifier=MANY_SENSOR_CLASSIFIER if many else "hist_gradient_boosting",
    )

pool = jobs.pool()
pool.warm()  # as app.py does on the first visit
t0 = time.monotonic()
names = sys.argv[2].split(",")
for name in names + ["queue"]:
    batch = [names[0], names[0]] if name == "queue" else [name]
    submitted = []
    for i, each in enumerate(batch):
        dataset = table(each)
        chosen = settings(dataset)
        if i:
            chosen = TrainSettings(**{**chosen.__dict__, "random_state": 1})
        busy = busy_factor(app_n_jobs())
        idle = training_seconds(dataset, dataset.spec, chosen, busy=1.0)
        wait = pool.wait_seconds()
        job = jobs.Job("train", each,
                       partial(train, dataset, dataset.spec, chosen, None),
                       estimate=stretched(idle, busy))
        job.start()
        submitted.append((each, job, idle, busy, wait))
    for each, job, idle, busy, wait in submitted:
        job.wait()
        assert job.status == jobs.DONE, (job.status, job.error, job.trace)
        actual = job.finished - job.submitted
        estimate = stretched(idle, busy) + wait
        print(json.dumps({"table": each, "queue": name == "queue", "idle": idle,
                          "busy": busy, "wait": wait, "estimate": estimate,
                          "actual": actual, "load": os.getloadavg()[0],
                          "since_start": job.submitted - t0}), flush=True)
pool.close()
"""

APP_TABLES = ("landsat", "letter", "pima", "spam", "toy", "cube_nm")
APP_TABLES += ("digits_quadrants", "digits_rows", "digits")


def app_part(names: list[str]) -> None:
    """Estimates against actual times through the app's job pool (cold first)."""
    print(
        "Train page estimate vs press-to-result time, app job pool, one server "
        f"process, empty numba cache; {os.cpu_count()} cores; target: within 2x"
    )
    print(
        f"{'table':17} {'idle est':>9} {'busy':>5} {'queue':>6} {'estimate':>9} "
        f"{'actual':>8} {'ratio':>6} {'load':>5}"
    )
    with tempfile.TemporaryDirectory() as cache:
        proc = subprocess.Popen(
            [sys.executable, "-c", APP_WORKER, str(ROOT), ",".join(names)],
            env={**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        ratios = []
        for line in proc.stdout:
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            ratio = row["estimate"] / row["actual"]
            ratios.append(ratio)
            label = row["table"] + (" (queued)" if row["queue"] else "")
            print(
                f"{label:17} {row['idle']:>8.1f}s {row['busy']:>5.2f} "
                f"{row['wait']:>5.0f}s {row['estimate']:>8.1f}s "
                f"{row['actual']:>7.1f}s {ratio:>6.2f} {row['load']:>5.1f}",
                flush=True,
            )
        if proc.wait() != 0:
            raise RuntimeError(f"the app worker failed (exit code {proc.returncode})")
    inside = sum(0.5 <= r <= 2 for r in ratios)
    print(f"within 2x: {inside} of {len(ratios)}")


MANY_WORKER = """
import json, os, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import pandas as pd
from budgetdag_core import BudgetDAGClassifier, Dataset, SensorSpec
from budgetdag_core.estimates import estimate_fit_seconds_for, probe_fit
from budgetdag_core.persist import save_policy_skops
from ui import footprint, store
from ui.spec_table import suggested_cost_scale
from ui.training import TrainSettings, estimate_params

case = json.loads(sys.argv[2])

def reference_seconds():
    # One fixed scikit-learn fit: how fast this machine is right now.
    from sklearn.ensemble import HistGradientBoostingClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 20))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    t, c = time.perf_counter(), time.process_time()
    HistGradientBoostingClassifier(max_iter=100, early_stopping=False,
                                   random_state=0).fit(X, y)
    return time.perf_counter() - t, time.process_time() - c

def table(name):
    from sklearn import datasets
    loader = {"wine": "load_wine", "cancer": "load_breast_cancer",
              "digits": "load_digits"}[name.rstrip("0123456789")]
    data = getattr(datasets, loader)()
    columns = [f"c{i}" for i in range(data.data.shape[1])]
    frame = pd.DataFrame(data.data, columns=columns)
    frame["label"] = data.target
    n_sensors = int(name[len(name.rstrip("0123456789")):])
    # The first columns paired until n_sensors sensors remain.
    pairs = len(columns) - n_sensors
    groups = {f"s{i}": columns[2 * i: 2 * i + 2] for i in range(pairs)}
    groups |= {f"s{pairs + i}": [c] for i, c in enumerate(columns[2 * pairs:])}
    spec = SensorSpec(groups, dict.fromkeys(groups, 1.0))
    order = np.random.default_rng(0).permutation(len(frame))
    cut = int(0.75 * len(frame))
    return Dataset(name, frame.iloc[order[:cut]], frame.iloc[order[cut:]],
                   "label", spec, kind="upload")

dataset = table(case["table"])
spec = dataset.spec
settings = TrainSettings(cost_scale=suggested_cost_scale(spec),
                         classifier=case.get("classifier", "auto"),
                         n_subsets=case.get("n_subsets"))
params = estimate_params(settings)
params.pop("n_jobs")
n_jobs = case.get("n_jobs", 1)  # one thread: its CPU seconds are comparable
params.update(case.get("params", {}))
X, y = dataset.X("train", spec), dataset.y("train")
out = {"reference": [reference_seconds()]}
t = time.perf_counter()
probe = probe_fit(spec, X, y, n_jobs=n_jobs, max_seconds=3.0,
                  fold_max_seconds=1.5, **params)
out["probe"] = time.perf_counter() - t
out["estimate"] = estimate_fit_seconds_for(spec, X, y, n_jobs=n_jobs, probe=probe,
                                           first_fit=False, **params)
plan = BudgetDAGClassifier(spec, **params).fit_plan(spec, len(X))
size = footprint.model_footprint(dataset, spec, settings,
                                 strategies=plan.strategies(), probe=probe)
out["size_estimate"], out["slim_estimate"] = size.full, size.slim
if not case.get("fit", True):  # the estimates alone (--measured)
    print(json.dumps(out))
    sys.exit(0)
model = BudgetDAGClassifier(spec, n_jobs=n_jobs, **params)
t, c = time.perf_counter(), time.process_time()
model.fit(X, y)
out["fit"], out["cpu"] = time.perf_counter() - t, time.process_time() - c
out["reference"].append(reference_seconds())
out["states"] = int(model.sensor_dag_.n_states)
out["strategy"] = str(getattr(model, "strategy_", "full"))
out["size"] = len(store.encode({"model": model}))
out["slim"] = len(store.encode({"model": model}, slim=True))
with tempfile.TemporaryDirectory() as tmp:
    path = save_policy_skops(model, os.path.join(tmp, "m.skops"))
    out["skops"] = os.path.getsize(path)
out["load"] = os.getloadavg()[0]
print(json.dumps(out))
"""

#: Issue 53's cases: the full DAG of 11 and 12 sensors (wine's 13 columns,
#: the first paired), with the app's per-state booster and the library's
#: masked bank; Alg. 2's subsets; each many-sensor strategy on 30 (breast
#: cancer) and 64 (digits' pixels) one-column sensors.
MANY_CASES = {
    "cancer30 subsets8": {"table": "cancer30", "n_subsets": 8},
    **{
        f"{table} {dag}": {"table": table, "params": {"dag": dag}}
        for table in ("cancer30", "digits64")
        for dag in ("chain", "routed", "sparse", "auto")
    },
    "wine11 full masked": {"table": "wine11", "params": {"dag": "full"}},
    "wine12 full masked": {"table": "wine12", "params": {"dag": "full"}},
    "wine11 full hgb": {"table": "wine11", "classifier": "hist_gradient_boosting"},
    "wine12 full hgb": {"table": "wine12", "classifier": "hist_gradient_boosting"},
}


def many_part(
    names: list[str],
    jobs: int = 1,
    measured: Path | None = None,
    save: Path | None = None,
) -> None:
    """Estimated vs measured fit seconds and stored bytes, issue 53's cases
    (``measured``: the ``row:`` lines of an earlier run's output, whose
    measurements are kept and only the estimates made again)."""
    before = {}
    if measured is not None:
        for line in measured.read_text().splitlines():
            if line.startswith("row: "):
                row = json.loads(line[5:])
                before[row["case"]] = row
        names = [name for name in names if name in before]
    print(
        "Estimate vs measured (one thread, warm): fit seconds against the fit's\n"
        "CPU seconds (the wall time stretches with the machine's load: the\n"
        "reference, one fixed HistGradientBoosting fit before and after, says\n"
        "how much) and the session store's bytes (zlib pickle, full and slim)."
    )
    print(
        f"{'case':20} {'states':>6} {'est s':>7} {'cpu s':>7} {'ratio':>6} "
        f"{'wall s':>7} {'ref':>9} {'est MB':>7} {'MB':>7} {'ratio':>6} "
        f"{'slim est':>8} {'slim':>7} {'ratio':>6} {'skops':>7} {'load':>5}"
    )
    cache = tempfile.mkdtemp()
    run_worker(ROOT, "toy", 1, 1, cache)  # fills numba's cache

    def run(name: str) -> tuple[str, subprocess.CompletedProcess]:
        return name, subprocess.run(
            [sys.executable, "-c", MANY_WORKER, str(ROOT)]
            + [json.dumps({**MANY_CASES[name], "fit": name not in before})],
            env={**os.environ, "NUMBA_CACHE_DIR": cache},
            capture_output=True,
            text=True,
            check=False,
        )

    rows = []
    # Cases side by side (``jobs``): one thread each, measured in CPU seconds.
    with ThreadPoolExecutor(jobs) as pool:
        for done in as_completed([pool.submit(run, name) for name in names]):
            name, out = done.result()
            if out.returncode != 0:
                print(f"{name}: failed\n{out.stderr[-2000:]}", flush=True)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            if name in before:  # new estimates, the earlier measurements
                r = {**before[name], **r, "reference": before[name]["reference"]}
            wall = statistics.mean(w for w, _ in r["reference"])
            cpu = statistics.mean(c for _, c in r["reference"])
            mb = 1e6
            # A policy of thousands of states takes minutes to save as skops.
            skops = "-" if r.get("skops") is None else f"{r['skops'] / mb:.1f}"
            print(
                f"{name:20} {r['states']:>6} {r['estimate']:>6.1f}s {r['cpu']:>6.1f}s "
                f"{r['estimate'] / r['cpu']:>6.2f} {r['fit']:>6.1f}s "
                f"{wall:>4.1f}/{cpu:<4.1f} "
                f"{r['size_estimate'] / mb:>7.1f} {r['size'] / mb:>7.1f} "
                f"{r['size_estimate'] / r['size']:>6.2f} "
                f"{r['slim_estimate'] / mb:>8.1f} "
                f"{r['slim'] / mb:>7.1f} {r['slim_estimate'] / r['slim']:>6.2f} "
                f"{skops:>7} {r['load']:>5.1f}",
                flush=True,
            )
            rows.append({"case": name, **r})
            print("row: " + json.dumps(rows[-1]), flush=True)
    print("json: " + json.dumps(rows))
    if save is not None:  # what render_report.py's estimate table reads
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        command = "`python benchmarks/bench_cold_start.py " + " ".join(sys.argv[1:])
        save.parent.mkdir(parents=True, exist_ok=True)
        save.write_text(
            json.dumps({"command": command + "`", "commit": commit, "rows": rows})
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=("cold", "estimates", "many", "app", "all"), default="all"
    )
    parser.add_argument("--only", nargs="*", help="tables to run")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=1, help="many: cases at once")
    parser.add_argument(
        "--measured", type=Path, help="many: an earlier run's output to re-estimate"
    )
    parser.add_argument(
        "--save", type=Path, help="many: write the table's rows (JSON) here"
    )
    parser.add_argument("--compare", type=Path, help="another checkout to measure")
    args = parser.parse_args()
    t = time.perf_counter()
    print(f"load averages at start: {os.getloadavg()}")
    if args.part in ("cold", "all"):
        names = args.only or ["landsat", "letter"]
        cold_part(names, args.repeats, args.n_jobs or 1, args.compare)
    if args.part in ("estimates", "all"):
        from budgetdag_core import __file__ as package_file  # noqa: F401

        sys.path.insert(0, str(ROOT))
        from ui.training import app_n_jobs  # the app's threads

        estimates_part(args.only or list(ESTIMATE_TABLES), args.n_jobs or app_n_jobs())
    if args.part in ("many", "all"):
        many_part(args.only or list(MANY_CASES), args.jobs, args.measured, args.save)
    if args.part in ("app", "all"):
        app_part(args.only or list(APP_TABLES))
    print(f"load averages at end: {os.getloadavg()}; {time.perf_counter() - t:.0f} s")


if __name__ == "__main__":
    main()
