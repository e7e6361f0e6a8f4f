"""Bundled demo datasets with their sensor groups and costs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .sensors import SensorSpec

_ROOT = Path(__file__).resolve().parent.parent


def data_dirs() -> list[Path]:
    """Where dataset files are looked up: $BUDGETDAG_DATA, assets/, ../shared."""
    dirs = []
    if os.environ.get("BUDGETDAG_DATA"):
        dirs.append(Path(os.environ["BUDGETDAG_DATA"]))
    dirs += [_ROOT / "assets", _ROOT.parent / "shared" / "datasets"]
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
}


def load_demo(name: str, *, test_fraction: float = 0.25, random_state: int = 0) -> Demo:
    """Load a bundled demo: landsat, letter or pima (pima is split at random)."""
    if name == "landsat":
        train = pd.read_csv(find_file("landsat_train.csv.gz"))
        test = pd.read_csv(find_file("landsat_test.csv.gz"))
        spec = _landsat_spec()
    elif name == "letter":
        train = pd.read_csv(find_file("letter_train.csv.gz"))
        test = pd.read_csv(find_file("letter_test.csv.gz"))
        spec = _letter_spec()
    elif name == "pima":
        from sklearn.model_selection import train_test_split

        data = pd.read_csv(find_file("pima.csv.gz"))
        train, test = train_test_split(
            data,
            test_size=test_fraction,
            random_state=random_state,
            stratify=data["label"],
        )
        spec = _pima_spec()
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
