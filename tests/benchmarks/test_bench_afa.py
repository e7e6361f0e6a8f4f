"""The AFA benchmark harness: its readings on known points, and a tiny run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_afa  # noqa: E402
from _common import BenchData  # noqa: E402
from _report import machine  # noqa: E402

from budgetdag_core.datasets import cube_nm_dataset  # noqa: E402


def test_readings_on_the_hull_with_caps():
    points = pd.DataFrame(
        {
            "method": ["a", "a", "a", "b", "b"],
            "avg_cost": [0.0, 4.0, 10.0, 0.0, 5.0],
            "error": [0.8, 0.2, 0.1, 0.8, 0.3],
        }
    )
    table = bench_afa.readings(points, 10.0, 0.25, {"b": 5.0}).set_index("method")
    # a's hull: (0, .8) - (4, .2) - (10, .1); at 25 % (cost 2.5) halfway-ish.
    assert table.at["a", "e10"] == pytest.approx(0.8 - 0.6 * 1 / 4)
    assert table.at["a", "e25"] == pytest.approx(0.8 - 0.6 * 2.5 / 4)
    assert table.at["a", "e50"] == pytest.approx(0.2 - 0.1 * 1 / 6)
    # a reaches 0.25 at cost 4 * (0.55 / 0.6).
    assert table.at["a", "reach"] == pytest.approx(4 * 0.55 / 0.6 / 10)
    # b's run stopped at cost 5: no reading past it, and it never reaches 0.25.
    assert table.at["b", "e50"] == pytest.approx(0.3)
    assert np.isnan(table.at["b", "e75"]) and np.isnan(table.at["b", "reach"])


@pytest.fixture
def tiny_cube_nm(monkeypatch):
    def load(name, *, quick, max_train, seed):
        demo = cube_nm_dataset(400, 150, random_state=seed, grouping="blocks")
        return BenchData(
            name,
            demo.X_train,
            demo.y_train.to_numpy(),
            demo.X_test,
            demo.y_test.to_numpy(),
            demo.spec,
            demo.description,
            paper_params={"n_subsets": 2, "include_all": True},
        )

    monkeypatch.setattr(bench_afa, "load", load)
    monkeypatch.setattr(bench_afa, "SESSION_ROWS", 5)


def test_a_tiny_run_reads_every_method(tiny_cube_nm, tmp_path):
    peers = (
        '{"classifier": {"engine": "hgb", "n_masks": 4, "oof_folds": 2, '
        '"params": {"max_iter": 20, "early_stopping": false}}, '
        '"aaco": {"n_masks": 20}, "greedy": {"k_neighbors": 4}, '
        '"aaco_lambdas": [0.5]}'
    )
    bench_afa.main(
        ["--datasets", "tiny", "--seeds", "0", "--n-points", "3"]
        + ["--dag-params", '{"cv": 2}', "--peer-params", peers]
        + ["--out", str(tmp_path)]
    )
    readings = pd.read_csv(tmp_path / "readings.csv")
    assert set(readings["method"]) == set(bench_afa.METHODS)
    points = pd.read_csv(tmp_path / "points.csv")
    assert {"budget", "own stop", "soft"} <= set(
        points.loc[points.method == "aaco", "rule"]
    )
    assert {"budget", "threshold"} <= set(points.loc[points.method == "greedy", "rule"])
    speed = pd.read_csv(tmp_path / "speed.csv").iloc[0]
    for m in ("dag", "aaco", "greedy"):
        assert 0 <= speed[f"{m}_first_context"] <= 1
        assert speed[f"{m}_fit_s"] > 0 and speed[f"{m}_rows_per_s"] > 0
    assert speed["dag_session_ms"] > 0 and speed["hgb_fit_s"] > 0
    assert speed["dag_sweep_cpu_s"] > 0 and speed["hgb_fit_cpu_s"] > 0
    tables = (tmp_path / "tables.md").read_text()
    assert "First purchase is the context group" in tables
    assert "| tiny (1) | 25% (12.75) |" in tables
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["machine"] == machine()  # readings are tied to their machine


def test_the_machine_line_names_the_cpu_generation_and_blas_kernel():
    # Peers' readings move with the BLAS kernel (one per CPU generation), so a
    # run's machine must tell two CPUs of one brand name apart.
    from threadpoolctl import threadpool_info

    line = machine()
    assert " cores, " in line and "budgetdag_core " in line
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists() and "model name" in cpuinfo.read_text():
        assert "(family " in line
    kernels = [p["architecture"] for p in threadpool_info() if p.get("architecture")]
    assert all(k in line for k in kernels)
    assert ("BLAS kernel " in line) == bool(kernels)


def test_a_change_table_reads_cpu_seconds_where_both_runs_have_them(tmp_path):
    from _report import change_rows

    def run(side: str, wall: float, cpu: float | None) -> Path:
        folder = tmp_path / side / "t"
        folder.mkdir(parents=True)
        pd.DataFrame(
            {"dataset": ["t"], "seed": [0], "method": ["dag"], "e10": [0.2],
             "e25": [0.1], "e50": [0.1], "e75": [0.1]}
        ).to_csv(folder / "readings.csv", index=False)  # fmt: skip
        speed = {"dataset": ["t"], "hgb_fit_s": [1.0], "dag_fit_s": [wall]}
        speed |= {"dag_sweep_s": [2 * wall]}
        if cpu is not None:
            speed |= {"hgb_fit_cpu_s": [1.0], "dag_fit_cpu_s": [cpu]}
            speed |= {"dag_sweep_cpu_s": [2 * cpu]}
        pd.DataFrame(speed).to_csv(folder / "speed.csv", index=False)
        return tmp_path / side

    (row,) = change_rows(run("b", 9.0, 4.0), run("a", 12.0, 3.0))
    assert row[-2:] == ["4.0× → 3.0× (CPU)", "8.0× → 6.0× (CPU)"]
    (row,) = change_rows(run("old", 9.0, None), run("new", 12.0, 3.0))
    assert row[-2:] == ["9.0× → 12.0×", "18.0× → 24.0×"]  # wall: one lacks CPU
    # The default fit's column, where asked: "not timed" unless both runs
    # recorded its CPU seconds.
    (row,) = change_rows(tmp_path / "b", tmp_path / "a", default_fit=True)
    assert row[-1] == "not timed"


def test_designs_not_kept_get_their_own_tables_with_the_default_fit(tmp_path):
    import json

    from _report import changes_section

    def run(folder: Path, default_cpu: float) -> None:
        folder.mkdir(parents=True)
        pd.DataFrame(
            {"dataset": ["t"], "seed": [0], "method": ["dag"], "e10": [0.2],
             "e25": [0.1], "e50": [0.1], "e75": [0.1]}
        ).to_csv(folder / "readings.csv", index=False)  # fmt: skip
        speed = {"dataset": ["t"], "hgb_fit_s": [1.0], "dag_fit_s": [2.0]}
        speed |= {"dag_sweep_s": [4.0], "hgb_fit_cpu_s": [1.0]}
        speed |= {"dag_fit_cpu_s": [2.0], "dag_sweep_cpu_s": [4.0]}
        speed |= {"dag_default_fit_cpu_s": [default_cpu]}
        pd.DataFrame(speed).to_csv(folder / "speed.csv", index=False)

    for name, kept in (("kept_one", True), ("tried_one", False)):
        run(tmp_path / name / "before" / "t", 10.0)
        run(tmp_path / name / "after" / "t", 5.0)
        info = {"title": name, "what": "w", "kept": kept}
        (tmp_path / name / "change.json").write_text(json.dumps(info))
    text = "\n".join(changes_section(tmp_path))
    head = "### Designs measured and not kept"
    assert text.index("**kept_one**") < text.index(head) < text.index("**tried_one**")
    # Only the designs' tables show the default fit.
    assert text.count("10.0× → 5.0× (CPU)") == 1
    assert text.rstrip().endswith("| 10.0× → 5.0× (CPU) |")


def test_the_afa_speed_table_reads_cpu_seconds_where_recorded(tmp_path):
    from _report import _afa_speed_ratios

    for side, cpu in (("wall", None), ("cpu", 2.0)):
        (tmp_path / side).mkdir()
        speed = {"dataset": ["t"], "hgb_fit_s": [1.0], "dag_fit_s": [9.0]}
        speed |= {"hgb_rows_per_s": [100.0], "dag_rows_per_s": [50.0]}
        if cpu is not None:
            speed |= {"hgb_fit_cpu_s": [1.0], "dag_fit_cpu_s": [cpu]}
        pd.DataFrame(speed).to_csv(tmp_path / side / "speed.csv", index=False)
    wall = _afa_speed_ratios("t", "dag", {"dag": tmp_path / "wall"})
    cpu = _afa_speed_ratios("t", "dag", {"dag": tmp_path / "cpu"})
    assert wall == (9.0, 0.5, False) and cpu == (2.0, 0.5, True)
