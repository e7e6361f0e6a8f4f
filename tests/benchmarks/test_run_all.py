"""The benchmark command end to end on its smallest dataset (``--quick``, pima).

The full run takes about 40 minutes and lives outside the suite; this checks that
the one command still runs every method and writes a complete report.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]


def test_quick_run_on_pima_writes_the_report(tmp_path):
    out, work = tmp_path / "BENCHMARKS.md", tmp_path / "work"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--quick"]
    cmd += ["--datasets", "pima", "--out", str(out), "--work-dir", str(work)]
    cmd += ["--afa-dir", str(tmp_path / "afa")]
    done = subprocess.run(
        [*cmd, "--parallel", "1"], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pima: ok" in done.stderr

    curve = pd.read_csv(work / "pima_curve.csv")
    # pima runs on 5 seeded splits by default, every method on each.
    assert sorted(curve["seed"].unique()) == [0, 1, 2, 3, 4]
    assert curve.groupby("seed")["method"].nunique().nunique() == 1
    methods = set(curve["method"])
    assert {
        "dag",
        "dag_paper",
        "fixed",
        "hull",
        "hull_oof",
        "all_sensors",
        "oracle",
        "cegb",
        "cascade",
        "aaco",
        "greedy",
    } <= methods
    assert curve["error"].between(0, 1).all() and (curve["avg_cost"] >= 0).all()
    # CEGB pays sensors with the DAG's accounting: never more than all of them.
    all_cost = curve.loc[curve["method"] == "all_sensors", "avg_cost"].iloc[0]
    cegb = curve[curve["method"] == "cegb"]
    assert (cegb["avg_cost"] <= all_cost + 1e-9).all()

    summary = json.loads((work / "pima.json").read_text())
    assert summary["n_states"] == 8 and summary["n_points"] >= 4
    # Few sensors: the library's default is the full DAG; no n_subsets rows.
    assert summary["strategy"] == "full" and summary["paper_params"] is None
    assert "paper" not in methods and "n_subsets" not in summary["params"]
    assert summary["split_seeds"] == [0, 1, 2, 3, 4] and len(summary["splits"]) == 5
    assert summary["seconds"]["bank fit"] > 0 and summary["predict_rows_per_s"] > 0
    assert summary["seconds"]["AACO rollout (test rows)"] > 0
    # A user's first fit (cost_scale="auto", no bank given) is timed too.
    assert summary["seconds"]["default fit (cost_scale auto)"] > 0
    # CPU seconds beside them (the mean of the splits), and the HGB's.
    assert summary["cpu_seconds"]["default fit (cost_scale auto)"] > 0
    assert summary["reference"]["fit_cpu_s"] > 0
    # The speed unit: one single-threaded HGB, timed in the same process.
    assert summary["reference"]["fit_s"] > 0
    assert 0 <= summary["reference"]["error"] <= 1
    assert summary["commit"] and summary["machine"]

    report = out.read_text()
    for section in ("## Quality", "## Speed", "## Scale", "## Where we lose"):
        assert section in report
    assert "## How to rerun" in report and "`bench_afa.py`" in report
    # One row per dataset in each table; pima is the mean of its 5 splits.
    assert report.count("| pima (mean of 5 splits) |") == 2  # quality, reach
    head = (
        "| dataset | all sensors | DAG (default) | DAG, paper's policy inputs "
        "| fixed-subset hull, chosen on test rows "
        "| fixed-subset hull, chosen on training rows "
    )
    assert head + "| cascade | CEGB | AACO | greedy CMI | oracle |" in report
    speed = report[report.index("## Speed") : report.index("## Scale")]
    assert "| pima | " in speed and "×" in speed
    # Each dataset's numbers name the command (and commit) that produced them.
    assert "`python benchmarks/run_all.py --quick --datasets pima" in report
    # The cost-error figure beside the report, embedded in it.
    figure = tmp_path / "docs" / "images" / "benchmarks" / "pima.svg"
    assert figure.read_text().startswith("<svg") and "DAG" in figure.read_text()
    assert "(docs/images/benchmarks/pima.svg)" in report

    # --report-only rebuilds the same report from the saved results.
    again = subprocess.run(
        [*cmd, "--report-only"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert out.read_text() == report

    # Saved results of several runs merge: a saved single-split dataset (no
    # seed column, no speed reference, as older runs wrote) and pima.
    one = curve[curve["seed"] == 0].drop(columns="seed")
    one.to_csv(work / "landsat_curve.csv", index=False)
    old = {k: v for k, v in summary.items() if k not in ("split_seeds", "splits")}
    old = {k: v for k, v in old.items() if k not in ("reference", "machine")}
    (work / "landsat.json").write_text(json.dumps({**old, "name": "landsat"}))
    two = [*cmd[:3], "--datasets", "landsat", "pima", *cmd[5:]]
    merged = subprocess.run(
        [*two, "--report-only"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert merged.returncode == 0, merged.stderr[-2000:]
    both = out.read_text()
    assert "| landsat | " in both and "| pima (mean of 5 splits) |" in both
    assert "| landsat | not measured |" in both  # no reference: plain seconds


def test_beyond_12_sensors_the_paper_subsets_run_beside_the_default():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import run_all
    from _common import BenchData, default_params
    from sklearn.datasets import make_classification

    from budgetdag_core import SensorSpec

    X, y = make_classification(300, 14, n_informative=6, random_state=0)
    cols = [f"x{i:02d}" for i in range(14)]
    frame = pd.DataFrame(X, columns=cols)
    spec = SensorSpec.per_column(cols, dict.fromkeys(cols, 1.0))
    paper = {"n_subsets": 3, "include_all": True}
    d = BenchData(
        "tiny", frame[:200], y[:200], frame[200:], y[200:], spec, "tiny",
        params={**paper, "cv": 2}, paper_params=paper,
    )  # fmt: skip
    # The default drops the paper's keys and keeps the others.
    assert default_params(d) == {"cv": 2}
    points, seconds = run_all.paper_subsets_curve(d, {"random_state": 0, "cv": 2}, 3)
    assert set(points["method"]) == {"paper"} and set(points["split"]) == {"test"}
    assert len(points) >= 2 and points["error"].between(0, 1).all()
    assert seconds > 0
    # Where the paper's configuration does not apply, no rows.
    d.paper_params = None
    none, zero = run_all.paper_subsets_curve(d, {"random_state": 0, "cv": 2}, 3)
    assert none.empty and zero == 0.0


def test_keep_peers_reads_the_saved_points_and_seconds_of_the_split(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import argparse

    import pytest
    import run_all

    args = argparse.Namespace(work_dir=tmp_path)
    with pytest.raises(SystemExit, match="no saved run of pima"):
        run_all.saved_peers("pima", args, 0)
    rows = [
        {"seed": seed, "method": method, "avg_cost": 1.0 + seed, "error": 0.1}
        for seed in (0, 1)
        for method in ("dag", "aaco", "greedy")
    ]
    pd.DataFrame(rows).to_csv(tmp_path / "pima_curve.csv", index=False)
    seconds = dict.fromkeys(run_all.PEER_SECONDS, 2.0)
    splits = [
        {"seed": 0, "seconds": {**seconds, "bank fit": 1.0}},
        {"seed": 1, "seconds": dict.fromkeys(seconds, 3.0)},
    ]
    summary = {"seconds": seconds, "splits": splits}
    (tmp_path / "pima.json").write_text(json.dumps(summary))
    peers, kept = run_all.saved_peers("pima", args, 1)
    assert set(peers["method"]) == {"aaco", "greedy"} and "seed" not in peers
    assert (peers["avg_cost"] == 2.0).all() and kept == dict.fromkeys(seconds, 3.0)
    # A saved run of the DAG alone has no peers to keep.
    pd.DataFrame(rows[:1]).to_csv(tmp_path / "pima_curve.csv", index=False)
    with pytest.raises(SystemExit, match="has no peers"):
        run_all.saved_peers("pima", args, 0)
