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
    assert summary["split_seeds"] == [0, 1, 2, 3, 4] and len(summary["splits"]) == 5
    assert summary["seconds"]["bank fit"] > 0 and summary["predict_rows_per_s"] > 0
    assert json.loads((work / "run.json").read_text())["total_s"] > 0

    report = out.read_text()
    # The summary row is the mean of the 5 splits; pima's section lists each.
    assert "| pima (mean of 5 seeded splits) |" in report and "## pima" in report
    assert "| split seed | method |" in report
    assert "LightGBM CEGB" in report and "mode --quick" in report
    # The cascade has its column in the summary and a row in pima's table.
    assert "| confidence cascade | CEGB | AACO | greedy CMI |" in report
    assert "| AACO (k-NN oracle) | " in report[report.index("## pima") :]
    assert summary["seconds"]["AACO rollout (test rows)"] > 0
    assert "| confidence cascade | " in report[report.index("## pima") :]
    assert (tmp_path / "benchmarks" / "figures" / "pima.png").stat().st_size > 1000

    # --report-only rebuilds the same tables from the saved results.
    again = subprocess.run(
        [*cmd, "--report-only"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stderr[-2000:]
    rebuilt = out.read_text()
    table = report[report.index("## Summary") : report.index("## Discussion")]
    assert table in rebuilt

    # A partial run merges with saved results of other datasets: a saved
    # single-split dataset (no seed column, as older runs wrote) and pima.
    one = curve[curve["seed"] == 0].drop(columns="seed")
    one.to_csv(work / "landsat_curve.csv", index=False)
    old = {k: v for k, v in summary.items() if k not in ("split_seeds", "splits")}
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
    assert "## landsat" in both and "## pima" in both
    assert "| landsat | " in both and "| pima (mean of 5 seeded splits) |" in both
