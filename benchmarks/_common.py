"""What the benchmark scripts share: datasets, timing, hull readings, policy problems.

- **Datasets** (``load``, ``BenchData``): splits, sensor specs and how each is
  fitted. Files are looked up in ``--data-dir`` first, then in the package's
  demo files, ``assets/`` and ``../shared/datasets``
  (``budgetdag_core.datasets.find_file``). The UCI MiniBooNE
  (``MiniBooNE_PID.txt``) and Covertype (``covtype.data`` or
  ``covtype.data.gz``) files are used when a user puts them into the data
  directory.
- **Timing** (``seconds``, ``tiled``, ``predict_rows_per_second``,
  ``reference_fit``, ``warm_up``): speed is reported as ratios to one
  single-threaded ``HistGradientBoostingClassifier`` on all features fitted in
  the same run, after the compiled kernels are loaded.
- **Hull readings** (``hull_of``, ``error_at``, ``cost_to_reach``): every
  method's error at a budget is read off the lower convex hull of its points
  (a random mix of two policies spends and errs in between), flat past its
  lowest error.
- **Policy problems** (``problems``, ``cached_bank``): train/validation and
  train/test problems whose bank is fitted once and cached on disk.
- ``OUT``: the ignored folder every script writes its outputs to.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from budgetdag_core import BudgetDAGClassifier, SensorSpec, load_demo, tradeoff_curve
from budgetdag_core.bank import boosting_classifier
from budgetdag_core.datasets import (
    cube_dataset,
    cube_nm_dataset,
    digits_dataset,
    find_file,
)
from budgetdag_core.tradeoff import lower_convex_hull

#: Outputs of the scripts (git-ignored): ``benchmarks/out/<script>/``.
OUT = Path(__file__).resolve().parent / "out"
#: The committed folder of the results the pages are generated from
#: (``render_report.py``): ``run_all/`` and ``afa/``.
RESULTS = Path(__file__).resolve().parent / "results"

# ------------------------------------------------------------------ datasets
SEED = 0
#: Rows a subsample keeps of each class at least (the most folds used is 5).
MIN_CLASS_ROWS = 5

#: Datasets with few sensors (full DAG, degree chosen on a validation split) and
#: many (greedy subsets when the estimator supports them).
SMALL = ("letter", "pima", "landsat")
LARGE = ("spam", "dna", "shuttle")
OPTIONAL = ("miniboone", "covertype")
#: Active feature acquisition problems (issue 30): AFABench's synthetic data
#: (drawn anew for each seed) and the 8x8 digits, a sensor per pixel.
AFA = ("cube", "cube_03", "cube_nm", "cube_nm_5000", "cube_nm6", "digits")
#: Small tables with one sensor per feature (issue 37: a new user's first
#: many-sensor tables): scikit-learn's wine (13) and breast cancer (30), and
#: spam and dna with 400 training rows drawn by seed (the rest as test).
SMALL_MANY = ("wine", "breast_cancer", "spam_400", "dna_400")
#: Training rows of the small-data versions of spam and dna.
SMALL_DATA_ROWS = 400
#: Datasets split at random (the others come with a fixed train/test split).
RANDOM_SPLIT = ("pima", "spam", "miniboone", "covertype", *AFA, *SMALL_MANY)
#: Test rows drawn for the synthetic problems (AFABench keeps 200 of its
#: 1000; more test rows read the curves with less noise).
AFA_TEST_ROWS = 1000
#: Seeded splits run by default (pima's 768 rows give a noisy single split).
DEFAULT_SPLITS = {"pima": 5}


@dataclass
class BenchData:
    """One benchmark problem: train/test frames, spec and fitting settings."""

    name: str
    X_train: pd.DataFrame
    y_train: np.ndarray
    X_test: pd.DataFrame
    y_test: np.ndarray
    spec: SensorSpec
    description: str
    #: Estimator parameters specific to this dataset (n_subsets, ...).
    params: dict = field(default_factory=dict)
    #: Policy degrees tried on the validation split (one: no selection).
    degrees: tuple[int, ...] = (1, 2)
    notes: list[str] = field(default_factory=list)
    #: The paper's many-sensor configuration (Alg. 2 subsets), where it
    #: applies: what bench_afa runs beside the library's default.
    paper_params: dict | None = None


#: Settings of the paper's many-sensor configuration (``BenchData.params`` of
#: the datasets beyond 12 sensors), left out of the library's default.
PAPER_KEYS = ("n_subsets", "include_all")


def default_params(d: BenchData) -> dict:
    """``d``'s estimator settings less the paper's many-sensor ones: what the
    library's default runs on it (``d.paper_params`` is the paper's)."""
    return {k: v for k, v in d.params.items() if k not in PAPER_KEYS}


def use_data_dir(data_dir: str | None) -> None:
    """Make ``find_file`` (and so ``load_demo``) look in ``data_dir`` first."""
    if data_dir:
        os.environ["BUDGETDAG_DATA"] = str(Path(data_dir).resolve())


def split_seeds(name: str, n_splits: int | None = None) -> tuple[int, ...]:
    """Seeds of the train/test splits to run for dataset ``name``.

    Parameters
    ----------
    name : str
        Benchmark dataset name.
    n_splits : int or None
        Seeded splits wanted for a dataset with a random split (``None``: its
        default, 5 for pima and 1 otherwise). A dataset with a fixed split always
        runs once.

    Returns
    -------
    tuple of int
        ``0, 1, ..., n - 1`` (``(0,)`` for a fixed split).
    """
    if n_splits is not None and n_splits < 1:
        raise ValueError(f"n_splits must be at least 1, got {n_splits}.")
    if name not in RANDOM_SPLIT:
        return (SEED,)
    n = DEFAULT_SPLITS.get(name, 1) if n_splits is None else n_splits
    return tuple(range(SEED, SEED + n))


def _split(df: pd.DataFrame, seed: int, test_size: float = 0.25):
    return train_test_split(
        df, test_size=test_size, random_state=seed, stratify=df["label"]
    )


def _subsample(
    X: pd.DataFrame, y: np.ndarray, n: int | None, what: str, notes: list[str]
) -> tuple[pd.DataFrame, np.ndarray]:
    """A seeded stratified subsample of at most ``n`` rows.

    Rare classes keep up to ``MIN_CLASS_ROWS`` rows (all they have if fewer), so
    stratified 5-fold cross-validation still works on the subsample.
    """
    if n is None or len(X) <= n:
        return X, y
    classes, counts = np.unique(y, return_counts=True)
    rng = np.random.default_rng(SEED)
    keep = []
    for c, k in zip(classes, counts, strict=True):
        rows = np.flatnonzero(y == c)
        take = max(min(k, MIN_CLASS_ROWS), int(round(n * k / len(y))))
        keep.append(rng.choice(rows, size=min(take, k), replace=False))
    idx = np.sort(np.concatenate(keep))
    notes.append(f"{what}: seeded stratified subsample of {len(idx)} of {len(X)} rows")
    return X.iloc[idx].reset_index(drop=True), y[idx]


#: Subsets of the paper's many-sensor configuration (section 4.2: 7 greedy
#: subsets and all sensors).
PAPER_SUBSETS = 8


def _many_sensor_params(spec: SensorSpec, notes: list[str]) -> dict:
    """t = 7 greedy subsets + all features, as in the paper's section 4.2."""
    notes.append(
        f"{spec.n_sensors} sensors; the paper's configuration: a DAG over the "
        f"unions of {PAPER_SUBSETS - 1} greedy subsets (Alg. 2, soft reward) + "
        f"all sensors (n_subsets={PAPER_SUBSETS}, include_all=True)"
    )
    return {"n_subsets": PAPER_SUBSETS, "include_all": True}


_AFA_NOTES = {
    "cube": "AFABench's cube config (signal std 0.1, noise N(0.5, 0.1)), 600 "
    "training rows, drawn with seed {seed}",
    "cube_03": "the AACO paper's cube (signal and noise std 0.3), 600 training "
    "rows, drawn with seed {seed}",
    "cube_nm": "AFABench's cube_nm config, 600 training rows, drawn with seed {seed}",
    "cube_nm_5000": "AFABench's cube_nm config, 5000 training rows, drawn with seed "
    "{seed}",
    "cube_nm6": "AFABench's cube_nm config grouped as 6 sensors (context cost 1, "
    "blocks cost 10), 5000 training rows, drawn with seed {seed}",
    "digits": "random stratified 75/25 split, seed {seed}; unit cost per pixel",
}


def _afa_demo(name: str, seed: int):
    """The demo behind an ``AFA`` benchmark name."""
    if name == "digits":
        return digits_dataset(random_state=seed)
    if name in ("cube", "cube_03"):
        std = {"informative_std": 0.3, "noise_std": 0.3} if name == "cube_03" else {}
        demo = cube_dataset(600, AFA_TEST_ROWS, random_state=seed, **std)
    else:
        n_train = 600 if name == "cube_nm" else 5000
        grouping = "blocks" if name == "cube_nm6" else "columns"
        demo = cube_nm_dataset(
            n_train, AFA_TEST_ROWS, random_state=seed, grouping=grouping
        )
    demo.name = name
    return demo


def _small_many(name: str, seed: int, notes: list[str]):
    """A :data:`SMALL_MANY` table: train/test frames and labels, spec, text."""
    if name in ("wine", "breast_cancer"):
        from sklearn.datasets import load_breast_cancer, load_wine

        bunch = (load_wine if name == "wine" else load_breast_cancer)(as_frame=True)
        X = bunch.data.rename(columns=lambda c: c.replace(" ", "_").replace("/", "_"))
        df = X.assign(label=bunch.target.to_numpy())
        n_train = 120 if name == "wine" else 400
        desc = f"scikit-learn's {name}: {X.shape[1]} one-feature sensors."
    else:
        base = "spam" if name == "spam_400" else "dna"
        if base == "spam":
            df = pd.read_csv(find_file("spam.csv.gz"))
        else:
            df = pd.concat(
                [pd.read_csv(find_file(f"dna_{p}.csv.gz")) for p in ("train", "test")],
                ignore_index=True,
            )
        n_train = SMALL_DATA_ROWS
        desc = f"{base} with {n_train} training rows, the rest as test."
    tr, te = train_test_split(
        df, train_size=n_train, stratify=df["label"], random_state=seed
    )
    cols = [c for c in df.columns if c != "label"]
    if name == "dna_400":
        groups = {f"p{p:02d}": [f"p{p:02d}_{b}" for b in "ACG"] for p in range(1, 61)}
        spec = SensorSpec(groups, dict.fromkeys(groups, 1.0))
    else:
        spec = SensorSpec.per_column(cols, dict.fromkeys(cols, 1.0))
    notes.append(
        f"{n_train} training rows drawn stratified with seed {seed}, the rest as "
        "test; unit cost per sensor"
    )
    y_train, y_test = tr["label"].to_numpy(), te["label"].to_numpy()
    return tr[cols], y_train, te[cols], y_test, spec, desc


def load(
    name: str, *, quick: bool, max_train: int | None, seed: int = SEED
) -> BenchData:
    """Load benchmark dataset ``name`` (see module docstring).

    ``seed`` seeds the train/test split of the datasets in ``RANDOM_SPLIT``; the
    others have a fixed split and ignore it.
    """
    notes: list[str] = []
    params: dict = {}
    paper: dict | None = None
    degrees: tuple[int, ...] = (1, 2)
    if name in SMALL:
        demo = load_demo(name, random_state=seed)
        Xtr, ytr = demo.X_train, demo.y_train.to_numpy()
        Xte, yte = demo.X_test, demo.y_test.to_numpy()
        spec, desc = demo.spec, demo.description
        if name == "pima":
            notes.append(f"random stratified 75/25 split, seed {seed}")
        if name == "letter" and quick and max_train is None:
            # 26 classes: the boosting bank fits 26 trees per round; with --quick
            # (shared 2-core machine) the 16 000 training rows are subsampled.
            max_train = 6000
    elif name == "spam":
        df = pd.read_csv(find_file("spam.csv.gz"))
        cols = [c for c in df.columns if c != "label"]
        tr, te = _split(df, seed)
        spec = SensorSpec.per_column(cols, dict.fromkeys(cols, 1.0))
        notes.append(
            f"random stratified 75/25 split, seed {seed}; unit cost per feature"
        )
        params = _many_sensor_params(spec, notes)
        Xtr, ytr, Xte, yte = tr[cols], tr["label"].to_numpy(), te[cols], te["label"]
        yte = yte.to_numpy()
        desc = "Spambase: 57 single-feature sensors, 2 classes."
        degrees = (1,)
    elif name == "dna":
        tr = pd.read_csv(find_file("dna_train.csv.gz"))
        te = pd.read_csv(find_file("dna_test.csv.gz"))
        cols = [c for c in tr.columns if c != "label"]
        groups = {f"p{p:02d}": [f"p{p:02d}_{b}" for b in "ACG"] for p in range(1, 61)}
        spec = SensorSpec(groups, dict.fromkeys(groups, 1.0))
        notes.append("StatLog split (2000 train / 1186 test); unit cost per position")
        params = _many_sensor_params(spec, notes)
        Xtr, ytr = tr[cols], tr["label"].to_numpy()
        Xte, yte = te[cols], te["label"].to_numpy()
        desc = "StatLog DNA: 60 position sensors of 3 bits, 3 classes."
        degrees = (1,)
    elif name == "shuttle":
        tr = pd.read_csv(find_file("shuttle_train.csv.gz"))
        te = pd.read_csv(find_file("shuttle_test.csv.gz"))
        cols = [c for c in tr.columns if c != "label"]
        spec = SensorSpec.per_column(cols, dict.fromkeys(cols, 1.0))
        Xtr, ytr = tr[cols], tr["label"].to_numpy()
        Xte, yte = te[cols], te["label"].to_numpy()
        desc = "Statlog shuttle: 9 single-feature sensors, full DAG of 512 states."
        notes.append("UCI split; unit cost per feature; full DAG (512 states)")
        degrees = (1,)
        if max_train is None:
            max_train = 4000 if quick else 20000
        if quick:
            Xte, yte = _subsample(Xte, yte, 5000, "test", notes)
    elif name == "miniboone":
        path = find_file("MiniBooNE_PID.txt")
        with open(path) as fh:
            n_signal, n_background = map(int, fh.readline().split())
        values = np.loadtxt(path, skiprows=1)
        cols = [f"x{i:02d}" for i in range(values.shape[1])]
        df = pd.DataFrame(values, columns=cols)
        df["label"] = np.r_[np.ones(n_signal, int), np.zeros(n_background, int)]
        tr, te = _split(df, seed, test_size=0.3)
        spec = SensorSpec.per_column(cols, dict.fromkeys(cols, 1.0))
        params = _many_sensor_params(spec, notes)
        Xtr, ytr, Xte, yte = tr[cols], tr["label"].to_numpy(), te[cols], te["label"]
        yte = yte.to_numpy()
        desc = "MiniBooNE (UCI): 50 single-feature sensors, 2 classes."
        degrees = (1,)
    elif name == "covertype":
        try:
            path = find_file("covtype.data.gz")
        except FileNotFoundError:
            path = find_file("covtype.data")
        df = pd.read_csv(path, header=None)
        cols = [f"x{i:02d}" for i in range(54)]
        df.columns = [*cols, "label"]
        tr, te = _split(df, seed, test_size=0.3)
        # 10 quantitative features + 4 wilderness + 40 soil indicator columns.
        groups = {c: [c] for c in cols[:10]}
        groups["wilderness"] = cols[10:14]
        groups["soil"] = cols[14:54]
        spec = SensorSpec(groups, dict.fromkeys(groups, 1.0))
        params = _many_sensor_params(spec, notes)
        Xtr, ytr, Xte, yte = tr[cols], tr["label"].to_numpy(), te[cols], te["label"]
        yte = yte.to_numpy()
        desc = "Forest Covertype (UCI): 12 sensors, 7 classes."
        degrees = (1,)
    elif name in SMALL_MANY:
        Xtr, ytr, Xte, yte, spec, desc = _small_many(name, seed, notes)
        paper = _many_sensor_params(spec, notes)
        degrees = (1,)
    elif name in AFA:
        demo = _afa_demo(name, seed)
        Xtr, ytr = demo.X_train, demo.y_train.to_numpy()
        Xte, yte = demo.X_test, demo.y_test.to_numpy()
        spec, desc = demo.spec, demo.description
        notes.append(_AFA_NOTES[name].format(seed=seed))
        if spec.n_sensors > 12:
            params = _many_sensor_params(spec, notes)
            degrees = (1,)
    else:
        raise ValueError(f"Unknown benchmark dataset {name!r}.")
    Xtr, ytr = _subsample(
        Xtr.reset_index(drop=True), np.asarray(ytr), max_train, "train", notes
    )
    return BenchData(
        name,
        Xtr,
        ytr,
        Xte.reset_index(drop=True),
        np.asarray(yte),
        spec,
        desc,
        params,
        degrees,
        notes,
        paper if paper is not None else (params if "n_subsets" in params else None),
    )


# -------------------------------------------------------------------- timing
def seconds(call: Callable[[], Any]) -> float:
    """Wall-clock seconds of one ``call()``."""
    t = time.perf_counter()
    call()
    return time.perf_counter() - t


def tiled(X: pd.DataFrame, n_rows: int) -> pd.DataFrame:
    """``X``'s rows repeated, then cut to ``n_rows`` (a batch to time on)."""
    reps = -(-n_rows // len(X))
    return pd.concat([X] * reps, ignore_index=True).iloc[:n_rows]


def predict_rows_per_second(model: Any, batch: pd.DataFrame, repeats: int) -> float:
    """Rows per second of ``model.predict(batch)``: the best of ``repeats``
    calls, after one on the first 1000 rows (lazy set-up stays out)."""
    model.predict(batch.iloc[:1000])
    return len(batch) / min(
        seconds(lambda: model.predict(batch)) for _ in range(repeats)
    )


class Clock:
    """Wall and CPU seconds of a ``with`` block (``wall`` and ``cpu`` after
    it). CPU seconds are this process's, its threads summed: side-by-side
    runs on a shared machine move them less than wall seconds."""

    def __enter__(self) -> Clock:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = time.process_time() - self._cpu


def curve_on_test(d: BenchData, **params: Any) -> Any:
    """``tradeoff_curve`` fitted on ``d``'s training rows and read on its test
    rows (``params``: the curve's and the estimator's)."""
    return tradeoff_curve(
        d.X_train, d.y_train, d.spec, X_test=d.X_test, y_test=d.y_test, **params
    )


def timed_reference_fit(
    X: pd.DataFrame, y: np.ndarray, X_test: pd.DataFrame, y_test: np.ndarray
) -> tuple[HistGradientBoostingClassifier, Clock, float]:
    """The speed and error reference: one single-threaded boosting model on all
    features. Returns the model, its fit's :class:`Clock` and its test error."""
    model = HistGradientBoostingClassifier(
        max_iter=200, early_stopping=True, random_state=0
    )
    with threadpool_limits(1), Clock() as clock:
        model.fit(X, y)
    return model, clock, float(np.mean(model.predict(X_test) != np.asarray(y_test)))


def reference_fit(
    X: pd.DataFrame, y: np.ndarray, X_test: pd.DataFrame, y_test: np.ndarray
) -> tuple[HistGradientBoostingClassifier, float, float]:
    """:func:`timed_reference_fit` with the fit's wall seconds only."""
    model, clock, error = timed_reference_fit(X, y, X_test, y_test)
    return model, clock.wall, error


def warm_up() -> float:
    """Fit, predict and step a session on a tiny table with both bank kinds.

    numba builds the kernels on first use and caches them on disk: a process
    loads them in about a second; the first run after an install or a change
    of their source compiles them (tens of seconds). Both are one-off costs
    that a benchmark reports apart from the fit times. Returns the seconds.
    """
    t = time.perf_counter()
    X, y = make_classification(400, 6, n_informative=4, n_classes=3, random_state=0)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    for columns in (list(frame.columns[:3]), list(frame.columns)):  # hgb, masked
        spec = SensorSpec.per_column(columns)
        model = BudgetDAGClassifier(spec, cv=2, random_state=0, cost_scale=0.01)
        model.fit(frame[columns], y).predict(frame[columns])
        model.start().next_sensor()
    return time.perf_counter() - t


# ------------------------------------------------------------ hull readings
#: Budgets read off every curve, as fractions of the all-sensor cost.
FRACTIONS = (0.25, 0.5, 0.75)
#: "Reaches the all-sensor error": within this much of it (0.5 points).
TOLERANCE = 0.005


def hull_of(part: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Costs and errors of the lower convex hull of ``part``'s points."""
    c, e = part["avg_cost"].to_numpy(float), part["error"].to_numpy(float)
    idx = lower_convex_hull(c, e)
    return c[idx], e[idx]


def error_at(hc: np.ndarray, he: np.ndarray, budget: float) -> float:
    """Hull error at ``budget``; NaN if the method cannot spend that little."""
    if budget < hc[0] - 1e-12:
        return float("nan")
    return float(np.interp(budget, hc, he))


def cost_to_reach(hc: np.ndarray, he: np.ndarray, target: float) -> float:
    """Least average cost at which the hull's error is at most ``target``."""
    if he[0] <= target:
        return float(hc[0])
    for i in range(1, len(hc)):
        if he[i] <= target:
            # linear between vertex i-1 and i
            t = (he[i - 1] - target) / (he[i - 1] - he[i])
            return float(hc[i - 1] + t * (hc[i] - hc[i - 1]))
    return float("nan")


def fmt(v: object) -> str:
    """A table cell: floats to 4 decimals, ``n/a`` for NaN."""
    if isinstance(v, float):
        return "n/a" if not np.isfinite(v) else f"{v:.4f}"
    return str(v)


def markdown_table(frame: pd.DataFrame) -> str:
    """``frame`` as a markdown table (``cost to ...`` columns in %)."""
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in frame.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if c.startswith("cost to") and isinstance(v, float) and np.isfinite(v):
                cells.append(f"{v:.1%}")
            else:
                cells.append(fmt(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------- policy problems
#: pima has no standard test split: this many seeded train/test splits.
PIMA_SEEDS = (0, 1, 2, 3, 4)


@dataclass
class Problem:
    """Rows to fit the bank and policies on, rows to evaluate on."""

    dataset: str
    role: str  # "val" (choosing) or "test" (reporting)
    seed: int
    X_fit: pd.DataFrame
    y_fit: np.ndarray
    X_eval: pd.DataFrame
    y_eval: np.ndarray
    spec: SensorSpec
    params: dict = field(default_factory=dict)

    @property
    def tag(self) -> str:
        return f"{self.dataset}-{self.role}-{self.seed}"


def _val_split(
    X: pd.DataFrame, y: np.ndarray, seed: int
) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame, np.ndarray]:
    fit_idx, val_idx = train_test_split(
        np.arange(len(X)), test_size=0.25, random_state=seed, stratify=y
    )
    return (
        X.iloc[fit_idx].reset_index(drop=True),
        y[fit_idx],
        X.iloc[val_idx].reset_index(drop=True),
        y[val_idx],
    )


def problems(
    name: str, *, quick_shuttle: bool = True, val_seeds: tuple[int, ...] = (SEED,)
) -> list[Problem]:
    """The validation problem(s) and test problem(s) of one dataset.

    ``val_seeds``: seeds of the validation splits of the TRAIN rows (pima has its
    own seeded train/test splits, one validation split each)."""
    out = []
    if name == "pima":
        for seed in PIMA_SEEDS:
            demo = load_demo("pima", random_state=seed)
            Xtr, ytr = demo.X_train.reset_index(drop=True), demo.y_train.to_numpy()
            Xte, yte = demo.X_test.reset_index(drop=True), demo.y_test.to_numpy()
            out.append(
                Problem("pima", "val", seed, *_val_split(Xtr, ytr, seed), demo.spec)
            )
            out.append(Problem("pima", "test", seed, Xtr, ytr, Xte, yte, demo.spec))
        return out
    d = load(name, quick=name == "shuttle" and quick_shuttle, max_train=None)
    for seed in val_seeds:
        out.append(
            Problem(
                name,
                "val",
                seed,
                *_val_split(d.X_train, d.y_train, seed),
                d.spec,
                d.params,
            )
        )
    out.append(
        Problem(
            name,
            "test",
            SEED,
            d.X_train,
            d.y_train,
            d.X_test,
            d.y_test,
            d.spec,
            d.params,
        )
    )
    return out


def bank_params(p: Problem) -> dict:
    return {"random_state": 0, "cv": 5, "n_jobs": 1, **p.params}


def cached_bank(p: Problem, cache_dir: Path) -> object:
    """The problem's bank (default bank kind), fitted once and pickled.

    The key holds the default boosting template's settings, so a bank cached by
    older code with other settings is not reused."""
    template = repr(boosting_classifier(0))
    key = hashlib.sha256(
        pickle.dumps((p.tag, sorted(bank_params(p).items()), len(p.X_fit), template))
    ).hexdigest()[:12]
    path = cache_dir / f"{p.tag}-{key}.pkl"
    if path.exists():
        with open(path, "rb") as fh:
            return pickle.load(fh)
    bank = BudgetDAGClassifier(p.spec, **bank_params(p)).fit_bank(p.X_fit, p.y_fit)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        pickle.dump(bank, fh)
    return bank
