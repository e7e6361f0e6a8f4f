"""The dataset type and the bundled demos.

:class:`~budgetdag_core.Dataset` (also ``Demo``) holds a train/test split
and its sensor spec; :func:`~budgetdag_core.load_demo` loads a bundled demo
(:data:`DEMOS`) and :func:`~budgetdag_core.toy_dataset` draws a small
synthetic one. All three are also exported from ``budgetdag_core`` itself.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd

from ._bounded_io import env_setting, short_repr
from .sensors import SensorSpec
from .validation import check_params, int_in, real_in

__all__ = [
    "DEMOS",
    "DEMO_HINTS",
    "Dataset",
    "load_demo",
    "toy_dataset",
]

#: What a dataset's label asks for: classes (``BudgetDAGClassifier``) or a
#: number (``BudgetDAGRegressor``, section 2.4 of the paper).
TASKS = ("classification", "regression")

_ROOT = Path(__file__).resolve().parent.parent


def package_data_dir() -> Path:
    """The demo files shipped inside the package (``budgetdag_core/_data``).

    Found through :mod:`importlib.resources`, so a regular (non-editable)
    install finds them wherever it is run from.
    """
    return Path(str(resources.files(__package__).joinpath("_data")))


#: Environment variable: a folder searched first for dataset files.
DATA_VARIABLE = "BUDGETDAG_DATA"


def _folder(text: str) -> Path:
    """``text`` as the path of an existing folder, or ``ValueError``."""
    if not Path(text).is_dir():
        raise ValueError(text)
    return Path(text)


def data_dirs() -> list[Path]:
    """Where dataset files are looked up, in order.

    ``$BUDGETDAG_DATA``, the package's own demo files, then (in a source
    checkout) ``assets/`` and ``../shared/datasets`` for the benchmark files.
    """
    extra = env_setting(DATA_VARIABLE, _folder, None, "an existing folder")
    dirs = [] if extra is None else [extra]
    dirs += [package_data_dir(), _ROOT / "assets", _ROOT.parent / "shared" / "datasets"]
    return dirs


def find_file(name: str) -> Path:
    for d in data_dirs():
        if (d / name).exists():
            return d / name
    raise FileNotFoundError(
        f"Dataset file {short_repr(name)} not found in "
        f"{[str(d) for d in data_dirs()]}; set "
        "BUDGETDAG_DATA to the folder that holds it."
    )


@dataclass
class Dataset:
    """A train/test pair with its label column and a sensor spec.

    What the demos return (``Demo`` is its older name), what
    :meth:`Table.to_dataset <budgetdag_core.Table.to_dataset>` makes of a
    data file, and what the app trains on.

    Parameters
    ----------
    name : str
        A short name (``"pima"``, ``"data.csv"``).
    train, test : DataFrame
        The rows of each part: the spec's columns and the label.
    label : str
        The label column.
    spec : SensorSpec
        The sensors (a starting point: the app lets users edit it).
    description : str
        One line on where the data comes from.
    kind : str
        Where it comes from: ``"demo"`` (bundled or generated), ``"table"``
        (a data file), ``"upload"`` (the app's uploads).
    token : str
        Identifies the data (default: ``kind:name:`` and a hash of the rows and
        the label): equal tokens, equal data.
    recipe : dict, optional
        The :func:`load_demo` arguments that rebuild it (``name``,
        ``test_fraction``, ``random_state``). When set, a pickle holds these
        instead of the rows, which come from the package again on loading.
    task : {"classification", "regression"}
        What the label is: classes, or a number to predict
        (``BudgetDAGRegressor``). A regression dataset's token says so, so
        the same rows read both ways are two datasets.

    Examples
    --------
    >>> from budgetdag_core import Dataset, load_demo
    >>> demo = load_demo("pima")
    >>> isinstance(demo, Dataset), demo.label, demo.kind
    (True, 'label', 'demo')
    >>> demo.X_train.shape, demo.X("test", demo.spec).shape
    ((576, 8), (192, 8))
    """

    name: str
    train: pd.DataFrame
    test: pd.DataFrame
    label: str
    spec: SensorSpec
    description: str = ""
    kind: str = "demo"
    token: str = ""
    recipe: dict[str, Any] | None = field(default=None, repr=False)
    task: str = "classification"

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(
                f"task must be one of {list(TASKS)}; got {short_repr(self.task)}."
            )
        if not self.token:
            # A classification token is what it was before tasks existed
            # (kept sessions name their data by it).
            task = "" if self.task == "classification" else f":{self.task}"
            self.token = (
                f"{self.kind}:{self.name}:"
                + joblib.hash((self.train, self.test, self.label))
                + task
            )

    def __reduce_ex__(self, protocol: Any) -> Any:
        # A demo with its recipe is pickled (the app's session store, worker
        # processes) as the call that made it: its rows come from the package.
        recipe = getattr(self, "recipe", None)
        if recipe is not None:
            return (_from_recipe, (dict(recipe), self.token))
        return super().__reduce_ex__(protocol)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Pickles of the app's dataset type before this one (``ui.data.Dataset``,
        # kept in session files for a day) name the spec ``default_spec``.
        state = dict(state)
        if "spec" not in state and "default_spec" in state:
            state["spec"] = state.pop("default_spec")
        state.setdefault("recipe", None)
        state.setdefault("task", "classification")
        vars(self).update(state)

    @property
    def features(self) -> list[str]:
        """The columns other than the label."""
        return [str(c) for c in self.train.columns if c != self.label]

    def X(self, part: str, spec: SensorSpec | None = None) -> pd.DataFrame:
        """The spec's feature columns (default ``spec``) of the
        ``"train"`` or ``"test"`` part."""
        return self._part(part)[(spec or self.spec).columns]

    def y(self, part: str) -> pd.Series:
        """The label of the ``"train"`` or ``"test"`` part."""
        return self._part(part)[self.label]

    def _part(self, part: str) -> pd.DataFrame:
        if part not in ("train", "test"):
            raise ValueError(f"part must be 'train' or 'test'; got {short_repr(part)}.")
        return self.train if part == "train" else self.test

    @property
    def X_train(self) -> pd.DataFrame:
        return self.X("train")

    @property
    def y_train(self) -> pd.Series:
        return self.y("train")

    @property
    def X_test(self) -> pd.DataFrame:
        return self.X("test")

    @property
    def y_test(self) -> pd.Series:
        return self.y("test")


Demo = Dataset
"""The demos' dataset type under its first name (kept for older code)."""


def _from_recipe(recipe: dict[str, Any], token: str) -> Dataset:
    """A pickled demo, rebuilt from the package's files (see ``recipe``)."""
    recipe = dict(recipe)
    demo = load_demo(recipe.pop("name"), **recipe)
    return dataclasses.replace(demo, token=token, recipe={"name": demo.name, **recipe})


def _landsat_spec() -> SensorSpec:
    groups = {f"band{b + 1}": [f"f{4 * p + b}" for p in range(9)] for b in range(4)}
    return SensorSpec(groups, dict.fromkeys(groups, 1.0))


def _letter_spec() -> SensorSpec:
    groups = {
        "box": ["x_box", "y_box", "width", "high", "onpix"],
        "moments": ["x_bar", "y_bar", "x2bar", "y2bar", "xybar", "x2ybr", "xy2br"],
        "edges": ["x_ege", "xegvy", "y_ege", "yegvx"],
    }
    return SensorSpec(groups, dict.fromkeys(groups, 1.0))


def _pima_spec() -> SensorSpec:
    groups = {
        "patient": [
            "pregnancies",
            "blood_pressure",
            "skin_thickness",
            "bmi",
            "pedigree",
            "age",
        ],
        "glucose": ["glucose"],
        "insulin": ["insulin"],
    }
    # Turney (1995) test costs: cheap questions/measurements (6 x 1.00), glucose
    # tolerance test 17.61, insulin 22.78.
    return SensorSpec(groups, {"patient": 6.0, "glucose": 17.61, "insulin": 22.78})


DEMOS = {
    "landsat": "Landsat satellite image patches: 4 spectral bands (sensors), 6 "
    "soil/crop classes, unit cost per band.",
    "letter": "Letter recognition: 3 feature groups (box, moments, edges), 26 "
    "classes, unit cost per group.",
    "pima": "Pima diabetes: patient information, glucose test and insulin test "
    "with Turney's costs; 2 classes.",
    "diabetes": "Diabetes (Efron et al. 2004, via scikit-learn): predict a "
    "number, the disease progression a year on (regression), from a patient "
    "exam (age, sex, BMI, blood pressure; cost 1), a cholesterol panel (4 "
    "columns; cost 4), triglycerides (cost 3) and blood sugar (cost 2); the "
    "costs are illustrative.",
    "spam": "Spambase e-mails (UCI, CC BY 4.0): 57 word, character and capital-run "
    "frequencies, each its own sensor of cost 1; spam or not. Too many sensors for a "
    "full DAG (2^57 states): the default buys one sensor at a time (a chain or a "
    "grown DAG, kept on validation rows); Alg. 2's sensor subsets are an option.",
    "toy": "Teaching toy (synthetic): two cheap but noisy sensors and one expensive "
    "but clean one, one column each, 2 classes; try cost_scale 0.03.",
    "digits": "Digits (UCI, via scikit-learn): 8 x 8 grey images of handwritten "
    "digits, one sensor of cost 1 per pixel (r0c0 .. r7c7, row and column from 0), "
    "10 classes.",
    "cube_nm6": "CUBE-NM (synthetic, AFABench) with 6 sensors: a context (5 columns, "
    "cost 1) that says which of five 10-column blocks holds the class signal, and "
    "each block as one sensor of cost 10; 8 classes; a full DAG of 64 states.",
    "cube_nm": "CUBE-NM (synthetic, AFABench): a context sensor (5 columns, cost 1) "
    "says which of five 10-column blocks holds the class signal; each block column "
    "is its own sensor of cost 1; 8 classes. Built to defeat greedy acquisition: "
    "the context is worthless alone but tells a planner where to look.",
}

#: What to look for in each demo once a model is trained (two lines each).
DEMO_HINTS = {
    "landsat": "Look for: which bands the policy buys first and how many examples "
    "stop after one band.\nThe trade-off page shows how close to all four bands' "
    "error the policy gets at a fraction of their cost.",
    "letter": "Look for: the cheap box features bought first, the moments and "
    "edges only for the harder letters.\nExplore DAG: the node colours show where "
    "the stopping examples are still often wrong.",
    "pima": "Look for: most patients stop before the insulin test (cost 22.78).\n"
    "What-if: change the glucose value of a patient and watch the path change.",
    "diabetes": "Look for: the cheap exam bought for every patient, the blood "
    "tests only where they change the predicted progression enough.\nTrade-off: "
    "the test MSE against the cost, next to every fixed set of tests.",
    "spam": "Look for: the few word frequencies bought for most e-mails.\nThe "
    "acquisition paths on What-if show which first words send an e-mail on.",
    "toy": "Look for: a cheap sensor first, the precise one only near the class "
    "boundary.\nTeaching: step through Graph-Reduce and see each node's decisions.",
    "digits": "Look for: What-if draws the 8 x 8 image with the pixels bought "
    "numbered in order, and per digit a heatmap of how often and how early each "
    "pixel is bought.\nWhich pixels come first, and how many a digit needs before "
    "the policy stops (Explore DAG: where the examples leave).",
    "cube_nm6": "Look for: whether the policy buys the cheap context first: it says "
    "which block holds the signal, so a planner reads it before any block.\nWith "
    "600 training rows the classifiers learn the context's meaning only in part: "
    "compare the policy with all six sensors on the Trade-off page.",
    "cube_nm": "Look for: the context bought first, then a few columns of the block "
    "it points to.\nWhat-if's paths chart: the second step depends on the context.",
}

#: Most rows of a split of a generated demo (``n_train``, ``n_test``): the
#: table is built in memory (a few float64 columns: tens of MB at this size).
MAX_GENERATED_ROWS = 1_000_000

TOY_NOISE = {"cheap_a": 0.8, "cheap_b": 0.8, "precise": 0.1}
TOY_COSTS = {"cheap_a": 1.0, "cheap_b": 1.0, "precise": 4.0}


def toy_dataset(
    n_train: int = 600, n_test: int = 400, *, random_state: int = 0
) -> Demo:
    """A 2-D teaching toy whose decision regions can be drawn.

    A hidden value ``u ~ N(0, 1)`` sets the class (``label = u > 0``). Each
    sensor is one column measuring ``u`` plus Gaussian noise: ``cheap_a`` and
    ``cheap_b`` cost 1 with noise 0.8, ``precise`` costs 4 with noise 0.1. A good
    policy reads a cheap sensor first, stops when it is far from 0 and pays for
    more only near the class boundary.

    Parameters
    ----------
    n_train, n_test : int
        Rows of each split (``n_train`` at least 10, ``n_test`` at least 1,
        each at most ``MAX_GENERATED_ROWS``).
    random_state : int
        Seed (>= 0); the same seed gives the same rows.

    Returns
    -------
    Demo
        ``name="toy"``, ``label="label"``, a spec with the three sensors.

    Examples
    --------
    >>> demo = toy_dataset(100, 50)
    >>> demo.X_train.shape, demo.spec.names
    ((100, 3), ('cheap_a', 'cheap_b', 'precise'))
    """
    check_params(
        "toy_dataset",
        {
            "n_train": [int_in(10, MAX_GENERATED_ROWS)],
            "n_test": [int_in(1, MAX_GENERATED_ROWS)],
            "random_state": [int_in(0)],
        },
        n_train=n_train,
        n_test=n_test,
        random_state=random_state,
    )
    rng = np.random.default_rng(random_state)
    n = n_train + n_test
    u = rng.normal(size=n)
    data = {name: u + rng.normal(scale=s, size=n) for name, s in TOY_NOISE.items()}
    frame = pd.DataFrame(data).round(4)
    frame["label"] = (u > 0).astype(int)
    spec = SensorSpec({name: [name] for name in TOY_NOISE}, dict(TOY_COSTS))
    return Demo(
        "toy",
        frame.iloc[:n_train].reset_index(drop=True),
        frame.iloc[n_train:].reset_index(drop=True),
        "label",
        spec,
        DEMOS["toy"],
    )


def _stratified_split(
    data: pd.DataFrame, test_fraction: float, random_state: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    from sklearn.model_selection import train_test_split

    return train_test_split(
        data, test_size=test_fraction, random_state=random_state, stratify=data["label"]
    )


def load_demo(name: str, *, test_fraction: float = 0.25, random_state: int = 0) -> Demo:
    """Load a bundled demo (see :data:`~budgetdag_core.datasets.DEMOS`).

    landsat and letter come with their standard train/test files; pima and spam
    (Spambase: 57 one-column sensors of cost 1, rows ordered by class in the
    file) are split at random, stratified by the label, with ``test_fraction``
    (strictly between 0 and 1) of the rows in the test part and
    ``random_state`` (>= 0) as the seed; toy and
    cube_nm are generated (:func:`toy_dataset`, ``cube_nm_dataset()`` with its
    defaults and ``random_state`` as the seed; cube_nm6 with
    ``grouping="blocks"``); digits is scikit-learn's copy
    (``digits_dataset()``, split like pima); diabetes (regression) too
    (``diabetes_dataset()``, split at random, not stratified).

    Examples
    --------
    >>> demo = load_demo("spam")
    >>> demo.X_train.shape, demo.X_test.shape, demo.spec.n_sensors
    ((3450, 57), (1151, 57), 57)
    """
    check_params(
        "load_demo",
        {
            "test_fraction": [real_in(0.0, 1.0, closed="neither")],
            "random_state": [int_in(0)],
        },
        test_fraction=test_fraction,
        random_state=random_state,
    )
    if name == "toy":
        return toy_dataset(random_state=random_state)
    if name == "cube_nm":
        return cube_nm_dataset(random_state=random_state)
    if name == "cube_nm6":
        demo = cube_nm_dataset(random_state=random_state, grouping="blocks")
        demo.description = DEMOS["cube_nm6"]
        return demo
    if name == "digits":
        return digits_dataset(test_fraction=test_fraction, random_state=random_state)
    if name == "diabetes":
        return diabetes_dataset(test_fraction=test_fraction, random_state=random_state)
    if name == "landsat":
        train = pd.read_csv(find_file("landsat_train.csv.gz"))
        test = pd.read_csv(find_file("landsat_test.csv.gz"))
        spec = _landsat_spec()
    elif name == "letter":
        train = pd.read_csv(find_file("letter_train.csv.gz"))
        test = pd.read_csv(find_file("letter_test.csv.gz"))
        spec = _letter_spec()
    elif name in ("pima", "spam"):
        data = pd.read_csv(find_file(f"{name}.csv.gz"))
        train, test = _stratified_split(data, test_fraction, random_state)
        if name == "pima":
            spec = _pima_spec()
        else:
            features = [c for c in data.columns if c != "label"]
            spec = SensorSpec.per_column(features, cost=1.0)
    else:
        raise ValueError(
            f"Unknown demo {short_repr(name)}; choose from {sorted(DEMOS)}."
        )
    return Demo(
        name,
        train.reset_index(drop=True),
        test.reset_index(drop=True),
        "label",
        spec,
        DEMOS[name],
    )


# ------------------------------------------------- active feature acquisition data
# The synthetic problems of AFABench (Schütz et al. 2025, github.com/Linusaronsson/
# AFA-Benchmark), the field's benchmark for active feature acquisition, drawn with
# numpy from the same distributions and with the parameters of its dataset
# generation configs (1000 rows there, split 60/20/20: 600 training rows).

#: Classes of CUBE and CUBE-NM; each is coded by its 3 bits.
CUBE_CLASSES = 8
#: Columns of one CUBE block (CUBE has one block plus 10 noise columns).
CUBE_BLOCK = 10


def _check_sizes(n_train: int, n_test: int) -> None:
    if int(n_train) != n_train or int(n_test) != n_test or n_train < 1 or n_test < 1:
        raise ValueError(
            f"n_train and n_test must be positive integers; got {n_train}, {n_test}."
        )


def _check_std(**stds: float) -> None:
    for name, value in stds.items():
        if not (np.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be finite and >= 0; got {value}.")


def _class_bits(labels: np.ndarray) -> np.ndarray:
    """The 3 bits of each class, lowest first (class 1 -> 1, 0, 0), as AFABench."""
    return ((labels[:, None] >> np.arange(3)) & 1).astype(float)


def _demo_from_arrays(
    name: str,
    X: np.ndarray,
    y: np.ndarray,
    columns: list[str],
    n_train: int,
    spec: SensorSpec,
    description: str,
) -> Demo:
    frame = pd.DataFrame(X, columns=columns)
    frame["label"] = y
    return Demo(
        name,
        frame.iloc[:n_train].reset_index(drop=True),
        frame.iloc[n_train:].reset_index(drop=True),
        "label",
        spec,
        description,
    )


def cube_dataset(
    n_train: int = 600,
    n_test: int = 1000,
    *,
    random_state: int = 0,
    informative_std: float = 0.1,
    noise_mean: float = 0.5,
    noise_std: float = 0.1,
) -> Demo:
    """CUBE (ODIN, Zannone et al. 2019; AFABench): 20 one-column sensors, 8 classes.

    The class ``y`` is uniform on 0..7. Columns ``x00``..``x19`` are noise
    ``N(noise_mean, noise_std)``, except the three columns ``y, y+1, y+2``,
    which hold the class's 3 bits (lowest first) plus ``N(0,
    informative_std)``. Columns 10..19 never carry signal. Each column is a
    sensor of cost 1. The defaults are AFABench's dataset config (its
    generator's own defaults have ``noise_std=0.3``).

    Parameters
    ----------
    n_train, n_test : int
        Rows of each split, drawn independently from the same distribution.
    random_state : int
        Seed; the same seed gives the same rows.
    informative_std, noise_mean, noise_std : float
        The distribution's parameters (see above).

    Returns
    -------
    Demo
        ``name="cube"``, ``label="label"`` (0..7).

    Examples
    --------
    >>> demo = cube_dataset(60, 20)
    >>> demo.X_train.shape, demo.spec.n_sensors, demo.spec.total_cost
    ((60, 20), 20, 20.0)
    """
    _check_sizes(n_train, n_test)
    _check_std(informative_std=informative_std, noise_std=noise_std)
    rng = np.random.default_rng(random_state)
    n = int(n_train) + int(n_test)
    y = rng.integers(0, CUBE_CLASSES, size=n)
    X = rng.normal(noise_mean, noise_std, size=(n, 2 * CUBE_BLOCK))
    cols = y[:, None] + np.arange(3)
    signal = _class_bits(y) + rng.normal(0.0, informative_std, size=(n, 3))
    np.put_along_axis(X, cols, signal, axis=1)
    columns = [f"x{j:02d}" for j in range(2 * CUBE_BLOCK)]
    return _demo_from_arrays(
        "cube",
        X.round(6),
        y,
        columns,
        int(n_train),
        SensorSpec.per_column(columns, cost=1.0),
        "CUBE (synthetic, ODIN/AFABench): 20 one-column sensors of cost 1, 8 "
        "classes; columns y..y+2 hold the class's bits, the rest is noise.",
    )


def cube_nm_columns(n_contexts: int = 5) -> tuple[list[str], list[list[str]]]:
    """CUBE-NM's context columns and its blocks' columns.

    Returns ``(["ctx0", ...], [["b0_0", ..., "b0_9"], ...])``.
    """
    if int(n_contexts) != n_contexts or n_contexts < 2:
        raise ValueError(f"n_contexts must be an integer >= 2; got {n_contexts}.")
    context = [f"ctx{k}" for k in range(int(n_contexts))]
    blocks = [[f"b{k}_{j}" for j in range(CUBE_BLOCK)] for k in range(int(n_contexts))]
    return context, blocks


def cube_nm_block_spec(
    n_contexts: int = 5, *, context_cost: float = 1.0, block_cost: float = 10.0
) -> SensorSpec:
    """CUBE-NM with one sensor per block: ``context`` and ``block0``..``block4``.

    The context group (cost 1) and each 10-column block as one sensor (cost 10:
    the cost of its 10 columns), so the all-sensor cost stays 51 and a full DAG
    (64 states) fits. Use it with the frames of ``cube_nm_dataset()``.

    Examples
    --------
    >>> spec = cube_nm_block_spec()
    >>> spec.names, spec.total_cost
    (('context', 'block0', 'block1', 'block2', 'block3', 'block4'), 51.0)
    """
    context, blocks = cube_nm_columns(n_contexts)
    groups = {"context": context, **{f"block{k}": b for k, b in enumerate(blocks)}}
    costs = {"context": float(context_cost)}
    costs.update({f"block{k}": float(block_cost) for k in range(len(blocks))})
    return SensorSpec(groups, costs)


def cube_nm_dataset(
    n_train: int = 600,
    n_test: int = 1000,
    *,
    random_state: int = 0,
    n_contexts: int = 5,
    context_std: float = 0.1,
    informative_std: float = 0.3,
    noise_mean: float = 0.5,
    noise_std: float = 0.3,
    grouping: str = "columns",
) -> Demo:
    """CUBE-NM (AFABench): a context says which of five CUBE blocks holds the signal.

    A context ``c`` uniform on ``0..n_contexts-1`` and a class ``y`` uniform on
    0..7 are drawn independently. The context columns ``ctx0..`` are the
    one-hot code of ``c`` plus ``N(0, context_std)``. Each block ``b{k}_0..9``
    is noise ``N(noise_mean, noise_std)``; in block ``c`` only, the columns
    ``y, y+1, y+2`` (mod 10) hold the class's 3 bits plus ``N(0,
    informative_std)``. The context alone says nothing about the class; with
    it, one block of 10 columns suffices, so a planner buys the context first.

    Sensors (``grouping="columns"``, AFABench's ``CubeNMUnmasker`` with cheap
    context): the context group at cost 1 (5 columns of 1/5) and each block
    column its own sensor of cost 1; 51 sensors, all-sensor cost 51.
    ``grouping="blocks"``: :func:`cube_nm_block_spec` (6 sensors). The
    defaults are AFABench's ``cube_nm`` dataset config.

    Parameters
    ----------
    n_train, n_test : int
        Rows of each split, drawn independently from the same distribution.
    random_state : int
        Seed; the same seed gives the same rows.
    n_contexts : int
        Number of contexts and blocks.
    context_std, informative_std, noise_mean, noise_std : float
        The distribution's parameters (see above).
    grouping : {"columns", "blocks"}
        The sensors (see above); the rows do not depend on it.

    Returns
    -------
    Demo
        ``name="cube_nm"`` (``"cube_nm6"`` for blocks), ``label="label"``.

    Examples
    --------
    >>> demo = cube_nm_dataset(60, 20)
    >>> demo.X_train.shape, demo.spec.n_sensors, demo.spec.total_cost
    ((60, 55), 51, 51.0)
    >>> demo.spec.groups["context"]
    ['ctx0', 'ctx1', 'ctx2', 'ctx3', 'ctx4']
    """
    _check_sizes(n_train, n_test)
    _check_std(
        context_std=context_std, informative_std=informative_std, noise_std=noise_std
    )
    if grouping not in ("columns", "blocks"):
        raise ValueError(
            f"grouping must be 'columns' or 'blocks'; got {short_repr(grouping)}."
        )
    context_cols, block_cols = cube_nm_columns(n_contexts)
    k = len(context_cols)
    rng = np.random.default_rng(random_state)
    n = int(n_train) + int(n_test)
    context = rng.integers(0, k, size=n)
    y = rng.integers(0, CUBE_CLASSES, size=n)
    onehot = np.eye(k)[context] + rng.normal(0.0, context_std, size=(n, k))
    blocks = rng.normal(noise_mean, noise_std, size=(n, k, CUBE_BLOCK))
    signal = _class_bits(y) + rng.normal(0.0, informative_std, size=(n, 3))
    cols = (y[:, None] + np.arange(3)) % CUBE_BLOCK
    blocks[np.arange(n)[:, None], context[:, None], cols] = signal
    X = np.hstack([onehot, blocks.reshape(n, -1)])
    columns = context_cols + [c for block in block_cols for c in block]
    if grouping == "blocks":
        spec = cube_nm_block_spec(k)
        name, what = "cube_nm6", f"{k + 1} sensors: the context and {k} blocks"
    else:
        per_column = {c: [c] for block in block_cols for c in block}
        spec = SensorSpec(
            {"context": context_cols, **per_column},
            {"context": 1.0, **dict.fromkeys(per_column, 1.0)},
        )
        name, what = "cube_nm", f"{spec.n_sensors} sensors"
    description = (
        DEMOS["cube_nm"]
        if grouping == "columns"
        else (
            f"CUBE-NM (synthetic, AFABench) with {what} (context cost 1, blocks cost "
            "10); 8 classes."
        )
    )
    return _demo_from_arrays(
        name, X.round(6), y, columns, int(n_train), spec, description
    )


def digits_dataset(*, test_fraction: float = 0.25, random_state: int = 0) -> Demo:
    """8 x 8 images of digits (scikit-learn's copy of UCI's), a sensor per pixel.

    1797 images, 10 classes; each of the 64 pixels (grey level 0..16) is its
    own sensor of cost 1, named ``r{row}c{col}``. Split at random, stratified
    by the label, ``test_fraction`` of the rows in the test part, seeded by
    ``random_state``. No download.

    Examples
    --------
    >>> demo = digits_dataset()
    >>> demo.X_train.shape, demo.X_test.shape, demo.spec.n_sensors
    ((1347, 64), (450, 64), 64)
    """
    from sklearn.datasets import load_digits

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction}.")
    images = load_digits()
    columns = [f"r{r}c{c}" for r in range(8) for c in range(8)]
    data = pd.DataFrame(images.data, columns=columns)
    data["label"] = images.target
    train, test = _stratified_split(data, test_fraction, random_state)
    return Demo(
        "digits",
        train.reset_index(drop=True),
        test.reset_index(drop=True),
        "label",
        SensorSpec.per_column(columns, cost=1.0),
        DEMOS["digits"],
    )


#: The diabetes demo's sensors: scikit-learn's columns by the names of its
#: documentation (s1..s6 are blood serum measurements), grouped by test.
DIABETES_COLUMNS = {
    "exam": {"age": "age", "sex": "sex", "bmi": "bmi", "bp": "bp"},
    "cholesterol": {"s1": "tc", "s2": "ldl", "s3": "hdl", "s4": "tch"},
    "triglycerides": {"s5": "ltg"},
    "glucose": {"s6": "glu"},
}
#: Illustrative costs: a quick exam, then blood tests by how much they ask.
DIABETES_COSTS = {"exam": 1.0, "cholesterol": 4.0, "triglycerides": 3.0, "glucose": 2.0}


def diabetes_dataset(*, test_fraction: float = 0.25, random_state: int = 0) -> Demo:
    """Diabetes progression (scikit-learn's copy of Efron et al. 2004): regression.

    442 patients; the target ``progression`` is a measure of disease
    progression one year after baseline (25 to 346). Ten baseline columns in
    four sensors: ``exam`` (age, sex, bmi, bp; cost 1), ``cholesterol`` (tc,
    ldl, hdl, tch; cost 4), ``triglycerides`` (ltg; cost 3) and ``glucose``
    (glu; cost 2). The values are the raw ones (``scaled=False``); the costs
    are illustrative. Split at random (not stratified: the target is a
    number), ``test_fraction`` of the rows in the test part, seeded by
    ``random_state``. No download: the file ships with scikit-learn.

    Examples
    --------
    >>> demo = diabetes_dataset()
    >>> demo.task, demo.label, demo.X_train.shape, demo.X_test.shape
    ('regression', 'progression', (331, 10), (111, 10))
    >>> demo.spec.names
    ('exam', 'cholesterol', 'triglycerides', 'glucose')
    """
    from sklearn.datasets import load_diabetes
    from sklearn.model_selection import train_test_split

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction}.")
    raw = load_diabetes(scaled=False)
    renames = {k: v for group in DIABETES_COLUMNS.values() for k, v in group.items()}
    data = pd.DataFrame(raw.data, columns=raw.feature_names).rename(columns=renames)
    data["progression"] = raw.target
    train, test = train_test_split(
        data, test_size=test_fraction, random_state=random_state
    )
    groups = {name: list(cols.values()) for name, cols in DIABETES_COLUMNS.items()}
    return Demo(
        "diabetes",
        train.reset_index(drop=True),
        test.reset_index(drop=True),
        "progression",
        SensorSpec(groups, dict(DIABETES_COSTS)),
        DEMOS["diabetes"],
        task="regression",
    )
