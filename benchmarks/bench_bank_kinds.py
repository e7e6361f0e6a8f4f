"""Classifier banks compared: test error by number of sensors, fit seconds, calibration.

For each dataset and bank kind, fits the bank (out-of-fold predictions included,
``cv`` folds) and prints one markdown row: the test error of the best state of each
size (the "1 band / 2 bands / ..." columns of issue 8), the error of the mean state
of each size, the bank's wall-clock fit seconds and the test calibration error
(top-label ECE, mean over states) without and with the bank's temperature scaling.

``--curve`` adds the DAG trade-off curve on landsat with the default bank: one
estimator fit, then ``refit_policies`` per ``cost_scale`` (the bank is reused).

``--visited TABLE ...`` (issue 55) measures the sparse banks of many-sensor
tables (``bench_afa.py``'s names, or ``letter16``: letter's 16 features as 16
one-feature sensors, 26 classes): per ``--kinds`` (a sparse bank kind, or one
of :data:`DESIGNS`), the bank's test error at the 8 states the default DAG at
half the all-sensor cost visits most (weighted by the test rows reaching
each) against one HGB trained on just that subset, the all-sensor state
against one HGB on all features, the DAG, cascade and training-chosen
fixed-subset hull at 25 / 50 / 75 % of the cost on that bank, and the bank's
fit seconds beside that HGB's (``--out``: appended to a results file that
BENCHMARKS.md shows).

The machine is shared: the load average is printed before and after each fit so
noisy timings can be recognised. ``cpu s`` is this process's CPU time: with
``--n-jobs 1`` (all fits in-process) it is the bank's total compute, which on an
idle machine with ``c`` cores and ``n_jobs=c`` takes about ``cpu s / c`` of wall
time (the fits are independent).

Usage::

    python -m benchmarks.bench_bank_kinds                       # landsat letter pima
    python -m benchmarks.bench_bank_kinds --datasets spam --kinds hgb masked
    python -m benchmarks.bench_bank_kinds --datasets landsat --kinds hgb --curve
    python -m benchmarks.bench_bank_kinds --visited letter16 digits \
        --kinds before dedicated --max-train 1500
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from budgetdag_core import SensorDAG, SensorSpec, load_demo
from budgetdag_core.bank import DEFAULT_BANK_KIND, make_bank
from budgetdag_core.bank._calibration import expected_calibration_error


@dataclass
class Data:
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    spec: SensorSpec


def load(name: str) -> Data:
    if name == "spam":
        from sklearn.model_selection import train_test_split

        from budgetdag_core.datasets import find_file

        df = pd.read_csv(find_file("spam.csv.gz"))
        cols = [c for c in df.columns if c != "label"]
        # 57 single-feature sensors would make 2^57 states: 6 column blocks.
        groups = {
            "words_a": cols[0:12],
            "words_b": cols[12:24],
            "words_c": cols[24:36],
            "words_d": cols[36:48],
            "chars": cols[48:54],
            "capitals": cols[54:57],
        }
        spec = SensorSpec(groups, dict.fromkeys(groups, 1.0))
        train, test = train_test_split(
            df, test_size=0.25, random_state=0, stratify=df["label"]
        )
    else:
        demo = load_demo(name)
        spec, train, test = demo.spec, demo.train, demo.test
    classes = np.unique(train["label"])
    return Data(
        train[spec.columns].to_numpy(float),
        np.searchsorted(classes, train["label"].to_numpy()),
        test[spec.columns].to_numpy(float),
        np.searchsorted(classes, test["label"].to_numpy()),
        spec,
    )


def make(kind: str, cv: int, n_jobs: int):
    if kind == "lgbm":  # reference only: LightGBM per state, 100 rounds, no stop
        import lightgbm as lgb

        clf = lgb.LGBMClassifier(
            n_estimators=100, learning_rate=0.1, n_jobs=1, verbose=-1, random_state=0
        )
        return make_bank("per_subset", clf, cv=cv, random_state=0, n_jobs=n_jobs)
    return make_bank(kind, cv=cv, random_state=0, n_jobs=n_jobs)


LABELS = {
    "per_subset": "logistic regression per subset",
    "hgb": "LightGBM per subset (cross-fitted, early stop)",
    "masked": "one masked LightGBM (cross-fitted)",
    "lgbm": "LightGBM per subset (100 rounds, reference)",
}


def bench_bank(data: Data, kind: str, cv: int, n_jobs: int) -> dict:
    dag = SensorDAG(data.spec.names)
    bank = make(kind, cv, n_jobs)
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    bank.fit(
        data.X_train,
        data.y_train,
        dag,
        data.spec.column_indices(),
        int(data.y_train.max()) + 1,
    )
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    load1 = os.getloadavg()[0]
    by_size: dict[int, list[float]] = {}
    ece_raw, ece_cal = [], []
    for k in range(1, dag.n_states):
        raw = bank._raw_proba(data.X_test, k)
        cal = bank.predict_proba(data.X_test, k)
        by_size.setdefault(len(dag.sensors_in(k)), []).append(
            float((cal.argmax(1) != data.y_test).mean())
        )
        ece_raw.append(expected_calibration_error(raw, data.y_test))
        ece_cal.append(expected_calibration_error(cal, data.y_test))
    return {
        "best": {s: min(v) for s, v in sorted(by_size.items())},
        "mean": {s: float(np.mean(v)) for s, v in sorted(by_size.items())},
        "seconds": seconds,
        "cpu": cpu,
        "load": (load0, load1),
        "ece_raw": float(np.mean(ece_raw)),
        "ece": float(np.mean(ece_cal)),
        "bank": bank,
    }


def print_header(name: str, n_sensors: int) -> None:
    sizes = range(1, n_sensors + 1)
    head = " | ".join(f"{s} sensor{'s' * (s > 1)}" for s in sizes)
    print(f"\n### {name}: best state of each size (mean over states of that size)\n")
    print(f"| bank | {head} | fit s | cpu s | load | test ECE raw -> calibrated |")
    print("|---|" + "---|" * (n_sensors + 4), flush=True)


def print_row(kind: str, r: dict) -> None:
    cells = " | ".join(f"{b:.3f} ({r['mean'][s]:.3f})" for s, b in r["best"].items())
    print(
        f"| {LABELS[kind]} | {cells} | {r['seconds']:.1f} | {r['cpu']:.1f} | "
        f"{r['load'][0]:.1f}->{r['load'][1]:.1f} | "
        f"{r['ece_raw']:.3f} -> {r['ece']:.3f} |",
        flush=True,
    )


def curve(n_jobs: int, scales: list[float], kind: str = "auto") -> None:
    from budgetdag_core import BudgetDAGClassifier

    demo = load_demo("landsat")
    label = f"default bank ({DEFAULT_BANK_KIND})" if kind == "auto" else kind
    print(f"\n### landsat DAG curve, {label}, cv=5\n")
    t0 = time.perf_counter()
    model = BudgetDAGClassifier(
        demo.spec, cost_scale=scales[0], random_state=0, n_jobs=n_jobs, bank_kind=kind
    )
    timings: dict[str, float] = {}
    last = {"stage": None, "t": t0}

    def progress(stage: str, done: int, total: int) -> None:
        if done == total:
            timings[stage] = time.perf_counter() - last["t"]
            last["t"] = time.perf_counter()

    model.fit(demo.X_train, demo.y_train, progress=progress)
    total = time.perf_counter() - t0
    print(
        f"first fit {total:.1f} s (bank {timings.get('bank', float('nan')):.1f} s, "
        f"policies {timings.get('policies', float('nan')):.1f} s), "
        f"load {os.getloadavg()[0]:.1f}\n"
    )
    print("| cost_scale | avg sensors | test error | policy refit s |")
    print("|---|---|---|---|")
    for i, scale in enumerate(scales):
        t0 = time.perf_counter()
        m = model if i == 0 else model.refit_policies(demo.X_train, demo.y_train, scale)
        secs = time.perf_counter() - t0 if i else float("nan")
        ev = m.evaluate(demo.X_test, demo.y_test)
        print(
            f"| {scale:g} | {ev['avg_sensors']:.2f} | {ev['error']:.4f} | {secs:.1f} |",
            flush=True,
        )
    print(
        "\nLightGBM cost-efficient gradient boosting (issue 8): 0.0885 error with "
        "4 bands, 0.1245 at 3.5 bands on average."
    )


def big(n_jobs: int, cv: int) -> None:
    """The masked bank on the many-sensor worst case: 256 states, 104 000 rows.

    Same synthetic table as ``bench_scale`` (130 000 x 50, seeded
    ``make_classification``), DAG over 8 disjoint column blocks (2^8 states).
    """
    from sklearn.datasets import make_classification
    from sklearn.model_selection import train_test_split

    from benchmarks.bench_scale import PeakRSS

    X, y = make_classification(
        n_samples=130_000,
        n_features=50,
        n_informative=20,
        n_redundant=10,
        weights=[0.72],
        flip_y=0.02,
        random_state=0,
    )
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=0.2, stratify=y, random_state=0
    )
    names = [f"f{i:02d}" for i in range(50)]
    units = [list(u) for u in np.array_split(np.arange(50), 8)]
    dag = SensorDAG(names, units=units)
    spec = SensorSpec.per_column(names)
    bank = make_bank("masked", cv=cv, random_state=0, n_jobs=n_jobs)
    print(f"\n### masked bank, {dag.n_states} states, train {len(y_tr)} x 50, cv={cv}")
    with PeakRSS() as peak:
        t0 = time.perf_counter()
        bank.fit(X_tr, y_tr, dag, spec.column_indices(), 2)
        secs = time.perf_counter() - t0
    print(
        f"fit {secs:.1f} s, peak RSS (process tree) {peak.peak / 2**30:.2f} GiB, "
        f"oof_proba_ {bank.oof_proba_.nbytes / 2**20:.0f} MiB, load "
        f"{os.getloadavg()[0]:.1f}"
    )
    per_units: dict[int, list[float]] = {}
    for k in range(1, dag.n_states):
        units_in = sum(1 for u in dag.unit_masks if dag.states[k] & u == u)
        err = float((bank.predict_proba(X_te, k).argmax(1) != y_te).mean())
        per_units.setdefault(units_in, []).append(err)
    print("test error by number of blocks held (best / mean):")
    for u, errs in sorted(per_units.items()):
        print(f"  {u} blocks: {min(errs):.4f} / {np.mean(errs):.4f}")


# ------------------------------------------------------------ visited states
#: Visited states (by test rows reaching them) measured per bank kind.
TOP_VISITED = 8
#: Budgets (fractions of the all-sensor cost) the DAG, cascade and hull are read at.
VISIT_FRACTIONS = (0.25, 0.50, 0.75)


def many_sensor_data(name: str, seed: int, max_train: int | None):
    """A many-sensor benchmark table: ``bench_afa``'s names (``_common.load``)
    or ``letter16``: letter's 16 features as 16 one-feature sensors (unit
    costs, 26 classes, its fixed split; ``max_train`` rows drawn by seed)."""
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    from _common import BenchData
    from _common import load as load_bench

    if name != "letter16":
        return load_bench(name, quick=False, max_train=max_train, seed=seed)
    demo = load_demo("letter")
    columns = list(demo.spec.columns)
    train, test = demo.train, demo.test
    if max_train is not None and max_train < len(train):
        train = train.sample(n=max_train, random_state=seed)
    classes = np.unique(demo.train["label"])
    return BenchData(
        "letter16",
        train[columns].reset_index(drop=True),
        np.searchsorted(classes, train["label"].to_numpy()),
        test[columns].reset_index(drop=True),
        np.searchsorted(classes, test["label"].to_numpy()),
        SensorSpec.per_column(columns),
        "letter's 16 features as 16 one-feature sensors, 26 classes",
    )


def subset_boosting(X_tr, y_tr, X_te, y_te) -> tuple[float, float]:
    """Test error and fit seconds of one single-threaded HGB on these columns
    (``bench_afa``'s all-feature reference, here per subset)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    model = HistGradientBoostingClassifier(
        max_iter=200, early_stopping=True, random_state=0
    )
    with threadpool_limits(1):
        t0 = time.perf_counter()
        model.fit(X_tr, y_tr)
        secs = time.perf_counter() - t0
        return float((model.predict(X_te) != y_te).mean()), secs


def visited_states(model, X_test: pd.DataFrame) -> dict[tuple[str, ...], int]:
    """Test rows reaching each non-empty sensor subset on the model's paths
    (every prefix of each row's acquisitions)."""
    counts: dict[tuple[str, ...], int] = {}
    for acquired in model.trace(X_test)["acquired"]:
        for i in range(1, len(acquired) + 1):
            key = tuple(sorted(acquired[:i]))
            counts[key] = counts.get(key, 0) + 1
    return counts


def curve_readings(res, total: float) -> dict[str, float]:
    """DAG, cascade and training-chosen hull test errors at VISIT_FRACTIONS."""
    from _common import error_at, hull_of

    frame = res.frame[res.frame["split"] == "test"]
    out = {}
    for method in ("dag", "cascade", "hull_oof"):
        hc, he = hull_of(frame[frame["method"] == method])
        for f in VISIT_FRACTIONS:
            out[f"{method}@{int(100 * f)}"] = error_at(hc, he, f * total)
    return out


#: Issue 55's designs (``--kinds``): ``DedicatedMaskedBank`` settings.
DESIGNS = {
    "before": {"dedicated": False},  # issue 55's starting point: AutoMaskedBank
    "dedicated": {"dedicated": True},
    "fullmask": {"dedicated": False, "full_masks": True},
    "both": {"dedicated": True, "full_masks": True},
}


@contextlib.contextmanager
def design(kind: str):
    """Within: estimators build ``kind``'s sparse bank, one of :data:`DESIGNS`
    (a ``DedicatedMaskedBank``), where ``bank_kind="auto"`` would build an
    ``AutoMaskedBank`` (``tradeoff_curve``'s estimators included, so that
    they accept the bank); other kinds: unchanged."""
    from budgetdag_core import BudgetDAGClassifier
    from budgetdag_core.bank import DedicatedMaskedBank

    if kind not in DESIGNS:
        yield kind
        return
    original = BudgetDAGClassifier._new_sparse_bank

    def new_sparse_bank(self):
        return DedicatedMaskedBank(
            **DESIGNS[kind],
            cv=self.cv,
            random_state=self._seed,
            n_jobs=self.n_jobs,
            serve=self.bank_serve,
            growth=self._growth_settings(),
        )

    BudgetDAGClassifier._new_sparse_bank = new_sparse_bank
    try:
        yield "auto"
    finally:
        BudgetDAGClassifier._new_sparse_bank = original


def bench_visits(d, kind: str, seed: int, n_jobs: int, n_points: int) -> dict:
    """One bank kind on one table: the bank's error at the states the DAG
    (at half the all-sensor cost) visits against per-subset HGB, the
    all-sensor state's error, the curve readings and fit seconds."""
    with design(kind) as bank_kind:
        return _bench_visits(d, kind, bank_kind, seed, n_jobs, n_points)


def _bench_visits(
    d, kind: str, bank_kind: str, seed: int, n_jobs: int, n_points: int
) -> dict:
    from _common import default_params

    from budgetdag_core import BudgetDAGClassifier, tradeoff_curve

    params = {
        **default_params(d),
        "random_state": seed,
        "n_jobs": n_jobs,
        "bank_kind": bank_kind,
    }
    t0 = time.perf_counter()
    bank = BudgetDAGClassifier(d.spec, **params).fit_bank(d.X_train, d.y_train)
    bank_s = time.perf_counter() - t0
    res = tradeoff_curve(
        d.X_train, d.y_train, d.spec, n_points=n_points,
        X_test=d.X_test, y_test=d.y_test, bank=bank, **params,
    )  # fmt: skip
    total = d.spec.total_cost
    model = res.model_for_budget(0.5 * total, "train")
    counts = visited_states(model, d.X_test)
    names = list(d.spec.names)
    full = tuple(sorted(names))
    top = sorted(counts, key=lambda k: -counts[k])[:TOP_VISITED]
    Xte = d.X_test[d.spec.columns].to_numpy(float)
    rows = []
    for key in [*top, *([full] if full not in top else [])]:
        subset = np.isin(names, key)[None, :]
        proba = model.bank_.predict_proba_subsets(Xte, subset)[:, 0]
        bank_err = float((proba.argmax(1) != d.y_test).mean())
        cols = [c for s in key for c in d.spec.groups[s]]
        ref_err, _ = subset_boosting(
            d.X_train[cols], d.y_train, d.X_test[cols], d.y_test
        )
        rows.append((key, counts.get(key, 0), bank_err, ref_err))
    weights = np.array([r[1] for r in rows[: len(top)]], dtype=float)
    gaps = np.array([r[2] - r[3] for r in rows[: len(top)]])
    full_row = next(r for r in rows if r[0] == full)
    hgb_err, hgb_s = subset_boosting(d.X_train, d.y_train, d.X_test, d.y_test)
    return {
        "kind": getattr(bank, "kind_", kind)
        + (f", w {bank.full_weight_:g}" if hasattr(bank, "full_weight_") else ""),
        "bank_s": bank_s,
        "hgb_s": hgb_s,
        "visited_gap": float(weights @ gaps / weights.sum()),
        "visited_bank": float(
            weights @ [r[2] for r in rows[: len(top)]] / weights.sum()
        ),
        "visited_ref": float(
            weights @ [r[3] for r in rows[: len(top)]] / weights.sum()
        ),
        "visit_share": float(weights.sum() / max(1, sum(counts.values()))),
        "full_bank": full_row[2],
        "full_hgb": hgb_err,
        "rows": rows,
        **curve_readings(res, total),
    }


def print_visits(name: str, d, results: dict[str, dict]) -> str:
    """Print ``results``' table (markdown); return its text."""
    lines = [
        f"#### {name} (train {len(d.y_train)}, test {len(d.y_test)}, "
        f"{d.spec.n_sensors} sensors)",
        "",
    ]
    cols = [
        "bank kind (chosen)",
        "visited: bank",
        "per-subset HGB",
        "gap",
        "all-sensor: bank",
        "HGB",
    ]
    cols += [
        f"{m} @{int(100 * f)}%"
        for m in ("dag", "cascade", "hull_oof")
        for f in VISIT_FRACTIONS
    ]
    cols += ["bank fit s / HGB fit s"]
    lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for kind, r in results.items():
        cells = [
            f"{kind} ({r['kind']})",
            f"{r['visited_bank']:.4f}",
            f"{r['visited_ref']:.4f}",
            f"{r['visited_gap']:+.4f}",
            f"{r['full_bank']:.4f}",
            f"{r['full_hgb']:.4f}",
        ]
        cells += [
            f"{r[f'{m}@{int(100 * f)}']:.4f}"
            for m in ("dag", "cascade", "hull_oof")
            for f in VISIT_FRACTIONS
        ]
        cells += [
            f"{r['bank_s']:.1f} / {r['hgb_s']:.2f} = {r['bank_s'] / r['hgb_s']:.0f}x"
        ]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print("\n" + text, flush=True)
    return text


def warm_up(kinds: list[str], cv: int, n_jobs: int) -> None:
    """Start the joblib workers and import the models there, outside the timings."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    spec = SensorSpec.per_column(["a", "b"])
    tiny = Data(X, y, X, y, spec)
    for kind in kinds:
        bench_bank(tiny, kind, cv, n_jobs)


def bench_all_sensor(d, seed: int, n_jobs: int) -> dict:
    """The default sparse bank's fold models alone (no DAG grown): its
    all-sensor test error with the dedicated model's chosen weight, with
    the masked model alone (the bank before issue 55) and with the
    dedicated model alone, beside one HGB, with fit seconds."""
    from budgetdag_core.bank import DedicatedMaskedBank

    X = d.X_train[d.spec.columns].to_numpy(float)
    Xte = d.X_test[d.spec.columns].to_numpy(float)
    n_classes = int(max(d.y_train.max(), d.y_test.max())) + 1
    bank = DedicatedMaskedBank(cv=5, random_state=seed, n_jobs=n_jobs)
    t0 = time.perf_counter()
    bank.fit_models(X, d.y_train, d.spec.column_indices(), n_classes)
    bank_s = time.perf_counter() - t0
    full = np.ones((1, d.spec.n_sensors), dtype=bool)
    chosen, errors = bank.full_weight_, {}
    for label, w in (("masked", 0.0), ("chosen", chosen), ("dedicated", 1.0)):
        bank.full_weight_ = w
        proba = bank.predict_proba_subsets(Xte, full)[:, 0]
        errors[label] = float((proba.argmax(1) != d.y_test).mean())
    bank.full_weight_ = chosen
    hgb_err, hgb_s = subset_boosting(d.X_train, d.y_train, d.X_test, d.y_test)
    return {
        "kind": bank.kind_,
        "w": chosen,
        "bank_s": bank_s,
        "hgb_s": hgb_s,
        "hgb": hgb_err,
        **errors,
    }


def all_sensor_text(rows: list[tuple[str, dict]]) -> str:
    """Markdown table of :func:`bench_all_sensor` results."""
    lines = [
        "| table | kind | w | all-sensor: masked (before) | blended (now) | "
        "dedicated alone | HGB | bank fit s / HGB fit s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in rows:
        lines.append(
            f"| {name} | {r['kind']} | {r['w']:g} | {r['masked']:.4f} | "
            f"{r['chosen']:.4f} | {r['dedicated']:.4f} | {r['hgb']:.4f} | "
            f"{r['bank_s']:.1f} / {r['hgb_s']:.2f} = "
            f"{r['bank_s'] / r['hgb_s']:.0f}x |"
        )
    return "\n".join(lines) + "\n"


def save_visits(path: str, text: str) -> None:
    """Append ``text`` to ``path`` (``benchmarks/results/bank_visits/*.md``,
    which BENCHMARKS.md's issue-55 section shows) under the command, the
    commit and the load average."""
    import shlex
    import sys
    from pathlib import Path

    from _report import current_commit

    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    command = shlex.join(["python", "-m", "benchmarks.bench_bank_kinds", *sys.argv[1:]])
    head = (
        f"`{command}`, commit `{current_commit()}`, finished {stamp}, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    with Path(path).open("a") as out:
        out.write(text.replace("\n\n", f"\n\n{head}\n\n", 1) + "\n")


def visited_main(args) -> None:
    if args.all_sensor:
        rows = []
        for name in args.visited:
            for seed in args.seeds:
                d = many_sensor_data(name, seed, args.max_train)
                r = bench_all_sensor(d, seed, args.n_jobs)
                rows.append((f"{name} ({len(d.y_train)} rows), seed {seed}", r))
                print(all_sensor_text(rows[-1:]), flush=True)
        text = "#### The all-sensor state, fold models alone\n\n" + all_sensor_text(
            rows
        )
        print(text)
        if args.out:
            save_visits(args.out, text)
        return
    print(f"cpu count {os.cpu_count()}, n_jobs {args.n_jobs}, seeds {args.seeds}")
    for name in args.visited:
        for seed in args.seeds:
            d = many_sensor_data(name, seed, args.max_train)
            results = {
                kind: bench_visits(d, kind, seed, args.n_jobs, args.n_points)
                for kind in args.kinds
            }
            text = print_visits(f"{name}, seed {seed}", d, results)
            if args.out:
                save_visits(args.out, text)
            for kind, r in results.items():
                for key, n, b, h in r["rows"]:
                    label = "all" if len(key) == d.spec.n_sensors else len(key)
                    print(
                        f"  {kind} | {label} sensors | {n} rows | bank {b:.4f} "
                        f"| per-subset HGB {h:.4f}"
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=["landsat", "letter", "pima"])
    parser.add_argument("--kinds", nargs="+", default=["per_subset", "hgb", "masked"])
    parser.add_argument("--cv", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--curve", action="store_true")
    parser.add_argument(
        "--curve-kind", default="auto", help="bank_kind of the --curve estimator"
    )
    parser.add_argument(
        "--big", action="store_true", help="masked bank on 256 states x 104k rows"
    )
    parser.add_argument(
        "--scales",
        type=float,
        nargs="+",
        default=[0.0, 0.002, 0.005, 0.01, 0.02, 0.05],
    )
    parser.add_argument(
        "--visited",
        nargs="*",
        metavar="TABLE",
        help="many-sensor tables (bench_afa's names, letter16): the bank's "
        "error at the states the DAG visits, per --kinds (sparse kinds)",
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--max-train", type=int, default=None)
    parser.add_argument("--n-points", type=int, default=16)
    parser.add_argument(
        "--all-sensor",
        action="store_true",
        help="--visited: only the default bank's all-sensor state (no DAG)",
    )
    parser.add_argument(
        "--out", default=None, help="--visited: append the tables to this .md file"
    )
    args = parser.parse_args()
    if args.visited:
        visited_main(args)
        return
    print(f"cpu count {os.cpu_count()}, n_jobs {args.n_jobs}, cv {args.cv}")
    warm_up(args.kinds, args.cv, args.n_jobs)
    for name in args.datasets:
        data = load(name)
        title = f"{name} (train {len(data.y_train)}, test {len(data.y_test)})"
        print_header(title, data.spec.n_sensors)
        for kind in args.kinds:
            print_row(kind, bench_bank(data, kind, args.cv, args.n_jobs))
    if args.curve:
        curve(args.n_jobs, args.scales, args.curve_kind)
    if args.big:
        big(args.n_jobs, 3)


if __name__ == "__main__":
    main()
