"""Bundled demo datasets with their sensor groups and costs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from .sensors import SensorSpec

_ROOT = Path(__file__).resolve().parent.parent


def package_data_dir() -> Path:
    """The demo files shipped inside the package (``budgetdag_core/_data``).

    Found through :mod:`importlib.resources`, so a regular (non-editable)
    install finds them wherever it is run from.
    """
    return Path(str(resources.files(__package__).joinpath("_data")))


def data_dirs() -> list[Path]:
    """Where dataset files are looked up, in order.

    ``$BUDGETDAG_DATA``, the package's own demo files, then (in a source
    checkout) ``assets/`` and ``../shared/datasets`` for the benchmark files.
    """
    dirs = []
    if os.environ.get("BUDGETDAG_DATA"):
        dirs.append(Path(os.environ["BUDGETDAG_DATA"]))
    dirs += [package_data_dir(), _ROOT / "assets", _ROOT.parent / "shared" / "datasets"]
    return dirs


def find_file(name: str) -> Path:
    for d in data_dirs():
        if (d / name).exists():
            return d / name
    raise FileNotFoundError(
        f"Dataset file {name!r} not found in {[str(d) for d in data_dirs()]}; set "
        "BUDGETDAG_DATA to the folder that holds it."
    )


@dataclass
class Demo:
    name: str
    train: pd.DataFrame
    test: pd.DataFrame | None
    label: str
    spec: SensorSpec
    description: str

    @property
    def X_train(self) -> pd.DataFrame:
        return self.train[self.spec.columns]

    @property
    def y_train(self) -> pd.Series:
        return self.train[self.label]

    @property
    def X_test(self) -> pd.DataFrame:
        return self.test[self.spec.columns]

    @property
    def y_test(self) -> pd.Series:
        return self.test[self.label]


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
    "spam": "Spambase e-mails (UCI, CC BY 4.0): 57 word, character and capital-run "
    "frequencies, each its own sensor of cost 1; spam or not. Too many sensors for a "
    "full DAG (2^57 states): the app selects sensor subsets (Alg. 2) and builds the "
    "DAG over their unions.",
    "toy": "Teaching toy (synthetic): two cheap but noisy sensors and one expensive "
    "but clean one, one column each, 2 classes; try cost_scale 0.03.",
}

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
        Rows of each split.
    random_state : int
        Seed; the same seed gives the same rows.

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
    if n_train < 10 or n_test < 1:
        raise ValueError(
            f"toy_dataset needs n_train >= 10 and n_test >= 1; got {n_train}, {n_test}."
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
    """Load a bundled demo (see :data:`DEMOS`).

    landsat and letter come with their standard train/test files; pima and spam
    (Spambase: 57 one-column sensors of cost 1, rows ordered by class in the
    file) are split at random, stratified by the label, with ``test_fraction``
    of the rows in the test part and ``random_state`` as the seed; toy is
    generated (:func:`toy_dataset`).

    Examples
    --------
    >>> demo = load_demo("spam")
    >>> demo.X_train.shape, demo.X_test.shape, demo.spec.n_sensors
    ((3450, 57), (1151, 57), 57)
    """
    if name == "toy":
        return toy_dataset(random_state=random_state)
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
        raise ValueError(f"Unknown demo {name!r}; choose from {sorted(DEMOS)}.")
    return Demo(
        name,
        train.reset_index(drop=True),
        test.reset_index(drop=True),
        "label",
        spec,
        DEMOS[name],
    )
