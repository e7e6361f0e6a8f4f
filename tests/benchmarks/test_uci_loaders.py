"""The benchmark loaders read the UCI MiniBooNE and Covertype files as published.

Neither file ships with the project (users download them); these tests write
small files in the published formats and load them the way ``run_all`` does.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import load, use_data_dir  # noqa: E402


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("BUDGETDAG_DATA", raising=False)
    use_data_dir(str(tmp_path))
    yield tmp_path
    monkeypatch.delenv("BUDGETDAG_DATA", raising=False)


def test_miniboone_file_format(data_dir):
    rng = np.random.default_rng(0)
    n_signal, n_background = 60, 140
    # MiniBooNE_PID.txt: a line "n_signal n_background", then 50 values per
    # event, signal events first.
    values = rng.normal(size=(n_signal + n_background, 50))
    values[:n_signal, 0] += 3.0
    lines = [f" {n_signal} {n_background}"]
    lines += ["  " + "  ".join(f"{v:.6E}" for v in row) for row in values]
    (data_dir / "MiniBooNE_PID.txt").write_text("\n".join(lines) + "\n")
    d = load("miniboone", quick=True, max_train=None)
    assert d.X_train.shape[1] == 50 and d.spec.n_sensors == 50
    assert len(d.X_train) + len(d.X_test) == n_signal + n_background
    labels = np.r_[d.y_train, d.y_test]
    assert (labels == 1).sum() == n_signal and (labels == 0).sum() == n_background
    # Signal rows keep their shifted first feature: rows and labels stay paired.
    train_signal = d.X_train.loc[d.y_train == 1, "x00"].mean()
    assert train_signal > d.X_train.loc[d.y_train == 0, "x00"].mean() + 2
    assert d.params == {"n_subsets": 8, "include_all": True}


def test_covertype_file_format(data_dir):
    rng = np.random.default_rng(1)
    n = 300
    # covtype.data(.gz): 54 comma-separated integers, then the class 1..7.
    quantitative = rng.integers(0, 3000, size=(n, 10))
    wilderness = np.eye(4, dtype=int)[rng.integers(0, 4, n)]
    soil = np.eye(40, dtype=int)[rng.integers(0, 40, n)]
    label = rng.integers(1, 8, n)
    rows = np.column_stack([quantitative, wilderness, soil, label])
    text = "\n".join(",".join(map(str, row)) for row in rows) + "\n"
    with gzip.open(data_dir / "covtype.data.gz", "wt") as fh:
        fh.write(text)
    d = load("covertype", quick=True, max_train=None)
    assert d.spec.n_sensors == 12
    assert d.spec.groups["wilderness"] == [f"x{i:02d}" for i in range(10, 14)]
    assert len(d.spec.groups["soil"]) == 40
    assert len(d.X_train) + len(d.X_test) == n
    assert set(np.r_[d.y_train, d.y_test]) <= set(range(1, 8))
    # One-hot groups survive the split: each row has exactly one soil type.
    soil_cols = d.spec.groups["soil"]
    assert (d.X_train[soil_cols].sum(axis=1) == 1).all()
