"""BENCHMARKS.md averages a dataset's seeded splits, each read off its own hulls.

Small synthetic result frames with hulls whose readings are known by hand: the
mean, the min-max range and the n/a rules of the report, and how run_all merges
the summaries of the splits.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import split_seeds  # noqa: E402
from _report import (  # noqa: E402
    METHODS,
    afa_runs,
    afa_sections,
    dataset_label,
    dataset_table,
    find_losses,
    loss_lines,
    losses,
    provenance,
    quality_row,
    reach_row,
    speed_row,
    split_stats,
)
from run_all import combine_splits  # noqa: E402

DAG, CASCADE, HULL = METHODS["dag"], METHODS["cascade"], METHODS["hull"]


def _rows(seed: int | None, method: str, points: list[tuple[float, float]]):
    return [
        {"seed": seed, "method": method, "split": "test", "avg_cost": c, "error": e}
        for c, e in points
    ]


def _curve() -> pd.DataFrame:
    """Two splits; all sensors cost 4. Budgets 25/50/75 % are costs 1, 2, 3."""
    rows = [
        # seed 0: DAG error 0.5 - 0.1 c; all sensors err 0.2.
        *_rows(0, "dag", [(0, 0.5), (4, 0.1)]),
        *_rows(0, "cascade", [(0, 0.6), (4, 0.2)]),
        *_rows(0, "hull", [(0, 0.5), (2, 0.3), (4, 0.2)]),
        *_rows(0, "all_sensors", [(4, 0.2)]),
        # seed 1: DAG error 0.3 - 0.05 c; the cascade cannot spend under 2.
        *_rows(1, "dag", [(0, 0.3), (4, 0.1)]),
        *_rows(1, "cascade", [(2, 0.2), (4, 0.1)]),
        *_rows(1, "hull", [(0, 0.4), (4, 0.2)]),
        *_rows(1, "all_sensors", [(4, 0.15)]),
    ]
    return pd.DataFrame(rows)


def test_mean_and_range_over_splits_from_each_splits_own_hull():
    stats = split_stats(_curve())
    assert stats.seeds == [0, 1] and stats.all_errors == [0.2, 0.15]
    mean = stats.mean.set_index("method")
    low, high = stats.low.set_index("method"), stats.high.set_index("method")
    np.testing.assert_allclose(
        mean.loc[DAG, ["error @ 25% cost", "error @ 50% cost", "error @ 75% cost"]],
        [(0.4 + 0.25) / 2, (0.3 + 0.2) / 2, (0.2 + 0.15) / 2],
    )
    assert low.at[DAG, "error @ 50% cost"] == pytest.approx(0.2)
    assert high.at[DAG, "error @ 50% cost"] == pytest.approx(0.3)
    # Cost to each split's own all-sensor error + 0.5 pt, as a fraction of 4:
    # 0.5 - 0.1 c = 0.205 -> c = 2.95; 0.3 - 0.05 c = 0.155 -> c = 2.9.
    assert mean.at[DAG, "cost to all-sensor error + 0.5 pt"] == pytest.approx(
        (2.95 + 2.9) / 2 / 4
    )
    # The cascade is n/a at 25 % in split 1: its mean is n/a, not split 0's.
    assert np.isnan(mean.at[CASCADE, "error @ 25% cost"])
    assert stats.n_missing.set_index("method").at[CASCADE, "error @ 25% cost"] == 1

    low_reach = stats.low.set_index("method").at[DAG, REACH]
    assert low_reach == pytest.approx(2.9 / 4)
    assert stats.at("dag", REACH) == pytest.approx((2.95 + 2.9) / 2 / 4)


REACH = "cost to all-sensor error + 0.5 pt"


def test_quality_row_gives_means_with_the_best_of_each_budget_in_bold():
    stats = split_stats(_curve())
    label = dataset_label("pima", stats)
    assert label == "pima (mean of 2 splits)"
    row = quality_row(label, stats, ("dag", "hull", "cascade", "cegb"))
    # all-sensor error (0.2 + 0.15) / 2; the DAG's means 0.325 / 0.25 / 0.175
    # are the lowest; the hull's 0.4, 0.3, 0.25 and 0.35, 0.3, 0.25.
    assert row[:2] == [label, "0.1750"]
    assert row[2] == "**0.3250** / **0.2500** / **0.1750**"
    assert row[3] == "0.3750 / 0.3000 / 0.2500"
    assert row[4] == "n/a / 0.3000 / 0.2250"  # n/a at 25 % in one split
    assert row[5] == "not run"
    reach = reach_row(label, stats, ("dag", "cascade", "cegb"))
    # The cascade: 3.95 and 2.9 of 4 (0.6 - 0.1 c, and 0.2 -> 0.1 over 2..4).
    assert reach == [label, "73.1%", "85.6%", "not run"]


def test_losses_name_each_budget_a_baseline_wins_by_over_half_a_point():
    dag = {"dag": [0.30, 0.20, 0.10]}
    values = {**dag, "cascade": [0.296, 0.19, 0.10], "cegb": [0.35, 0.10, 0.12]}
    splits = [
        {"dag": [0.3, 0.2, 0.1], "cascade": [0.3, 0.18, 0.1], "cegb": [0.3, 0.1, 0.1]},
        {"dag": [0.3, 0.2, 0.1], "cascade": [0.3, 0.21, 0.1], "cegb": [0.3, 0.1, 0.1]},
    ]
    found = find_losses("d", values, splits, ("cascade", "cegb"))
    # 0.4 points at 25 % is no loss; 1 and 10 points at 50 % are.
    assert [(x.fraction, x.method) for x in found] == [(0.5, "cascade"), (0.5, "cegb")]
    assert [x.ahead for x in found] == [1, 2]
    (line,) = loss_lines(found)
    assert line == (
        "- d at 50%: DAG 0.2000; cascade 0.1900 (+1.0 pt, ahead in 1 of 2), "
        "CEGB 0.1000 (+10.0 pt, ahead in 2 of 2)"
    )
    # From curves: the cascade never beats _curve()'s DAG.
    assert losses("pima", split_stats(_curve())) == []


def test_speed_row_gives_ratios_to_the_reference_or_plain_seconds():
    seconds = {
        "fit (bank + one policy)": 6.0,
        "one policy fit (bank reused)": 0.5,
        "sweep (bank reused)": 4.0,
        "CEGB fits only": 3.0,
    }
    s = {"seconds": seconds, "n_points": 20, "predict_rows_per_s": 5000.0}
    ref = {"fit_s": 2.0, "error": 0.1, "predict_rows_per_s": 10000.0}
    row = speed_row("d", {**s, "reference": ref})
    assert row == [
        "d", "2.00", "not timed", "3.0×", "0.25×", "2.0× (20 points)", "1.5×",
        "0.50×",
    ]  # fmt: skip
    old = speed_row("d", s)
    assert old[1:4] == ["not measured", "not timed", "6.0 s"]
    assert old[-1] == "5,000 rows/s"
    # Runs since the default fit is timed show it beside the others.
    timed = {**s, "seconds": {**seconds, "default fit (cost_scale auto)": 9.0}}
    assert speed_row("d", {**timed, "reference": ref})[2] == "4.5×"
    # Runs that recorded CPU seconds: those ratios (CEGB's stay wall).
    cpu = {
        "default fit (cost_scale auto)": 8.0,
        "fit (bank + one policy)": 4.0,
        "one policy fit (bank reused)": 1.0,
        "sweep (bank reused)": 12.0,
    }
    run = {**timed, "cpu_seconds": cpu, "reference": {**ref, "fit_cpu_s": 4.0}}
    assert speed_row("d", run)[2:] == [
        "2.0× (CPU)", "1.0× (CPU)", "0.25× (CPU)", "3.0× (20 points, CPU)",
        "1.5×", "0.50×",
    ]  # fmt: skip


def test_provenance_names_the_commit_and_command_of_each_dataset():
    quick = "python benchmarks/run_all.py --quick"
    summaries = {
        "letter": {"commit": "aaa", "finished_utc": "2026-11-27 14:00"},
        "pima": {"commit": "bbb", "command": quick},
        "spam": {"commit": "aaa", "finished_utc": "2026-11-27 14:00"},
        "dna": {"failed": "timed out"},
    }
    assert provenance(summaries) == (
        "letter, spam: commit `aaa`, finished 2026-11-27 14:00 UTC, command not "
        f"recorded; pima: commit `bbb`, `{quick}`"
    )


def write_afa_run(
    out: Path,
    seeds: list[int],
    errors: dict[str, float],
    *,
    lowest: dict[str, float] | None = None,
    hgb_s: float = 2.0,
    timed: tuple[str, ...] | None = None,
    cpu: dict[str, float] | None = None,
) -> None:
    """A saved ``bench_afa.py`` run on "cube" in ``out``: each method's error
    at every budget (``lowest``: its lowest error where it differs) and the
    speed of the ``timed`` methods (default: all), beside an HGB fit of
    ``hgb_s`` seconds (``cpu``: more speed columns, e.g. CPU seconds)."""
    out.mkdir(parents=True)
    lowest = lowest or {}
    timed = tuple(errors) if timed is None else timed
    rows, speed = [], []
    for seed in seeds:
        for method, e in errors.items():
            rows.append(
                {
                    "method": method,
                    **dict.fromkeys(("e10", "e25", "e50", "e75"), e),
                    "reach": 0.5,
                    "lowest": lowest.get(method, e),
                    "dataset": "cube",
                    "seed": seed,
                }
            )
        speed.append(
            {
                "dataset": "cube",
                "seed": seed,
                "n_sensors": 20,
                "hgb_fit_s": hgb_s,
                "hgb_rows_per_s": 1000.0,
                **{f"{m}_fit_s": 4.0 for m in timed},
                **{f"{m}_rows_per_s": 10.0 for m in timed},
                **(cpu or {}),
            }
        )
    pd.DataFrame(rows).to_csv(out / "readings.csv", index=False)
    pd.DataFrame(speed).to_csv(out / "speed.csv", index=False)


def test_afa_tables_use_the_saved_run_with_most_seeds(tmp_path):
    def run(folder: str, seeds: list[int], dag: float) -> None:
        errors = {"dag": dag, "greedy": 0.1, "allfeat": np.nan}
        write_afa_run(
            tmp_path / "afa" / folder,
            seeds,
            errors,
            lowest={"allfeat": 0.05},
            timed=("dag", "aaco", "greedy"),
        )

    run("one", [0], 0.9)
    run("three", [0, 1, 2], 0.3)
    three = tmp_path / "afa" / "three"
    assert afa_runs(tmp_path / "afa") == {
        "cube": {"allfeat": three, "dag": three, "greedy": three}
    }
    quality, speed, lost, floors = afa_sections(tmp_path / "afa")
    assert "| cube (3 seeds) | 0.300 / 0.300 / 0.300 |" in quality
    assert "**0.100** / **0.100** / **0.100** |" in quality
    assert "| cube (3 seeds) | 20 | 2.0 | not timed | 2.0× | not timed |" in speed
    assert {(x.method, x.ahead, x.n) for x in lost} == {("greedy", 3, 3)}
    assert len(floors) == 1 and "25.0 points above" in floors[0]
    assert afa_sections(tmp_path / "none") == ("", "", [], [])


def test_a_curve_without_seeds_is_one_split_read_as_before():
    curve = _curve()
    one = curve[curve["seed"] == 0].drop(columns="seed")
    stats = split_stats(one)
    assert stats.seeds == [None] and dataset_label("letter", stats) == "letter"
    table = dataset_table(one)[0]
    pd.testing.assert_frame_equal(stats.mean, table, check_dtype=False)


def test_pima_runs_five_seeded_splits_fixed_splits_run_once():
    assert split_seeds("pima") == (0, 1, 2, 3, 4)
    assert split_seeds("spam") == (0,) and split_seeds("spam", 3) == (0, 1, 2)
    assert split_seeds("letter", 5) == (0,) and split_seeds("dna") == (0,)
    with pytest.raises(ValueError, match="n_splits must be at least 1"):
        split_seeds("pima", 0)


def test_combine_splits_keeps_shared_facts_once_and_averages_seconds():
    def summary(seed: int, degree: int, fit_s: float) -> dict:
        return {
            "name": "pima",
            "description": "Pima.",
            "n_train": 576,
            "n_test": 192,
            "n_sensors": 3,
            "n_states": 8,
            "bank_kind": "hgb",
            "params": {"random_state": 0, "cv": 5, "policy_degree": degree},
            "notes": [
                f"random stratified 75/25 split, seed {seed}",
                f"degree -> {degree}",
            ],
            "degree_scores": {"1": 0.2, "2": 0.21},
            "n_points": 20,
            "seconds": {"bank fit": fit_s},
            "predict_rows_per_s": 1000.0 * (seed + 1),
        }

    out = combine_splits([(0, summary(0, 2, 1.0)), (1, summary(1, 1, 3.0))])
    assert out["split_seeds"] == [0, 1]
    assert out["params"] == {"random_state": 0, "cv": 5}  # the degree differs
    assert out["notes"][1:] == [
        "random stratified 75/25 split",
        "seed 0: degree -> 2",
        "seed 1: degree -> 1",
    ]
    assert out["notes"][0].startswith("mean of 2 seeded splits (seeds 0, 1)")
    assert out["seconds"] == {"bank fit": 2.0}
    assert out["predict_rows_per_s"] == 1500.0
    assert [s["params"]["policy_degree"] for s in out["splits"]] == [2, 1]
    single = combine_splits([(0, summary(0, 2, 1.0))])
    assert single["split_seeds"] == [0] and single["seconds"] == {"bank fit": 1.0}


def test_afa_tables_take_each_method_from_its_own_run(tmp_path):
    """A run of the DAG alone stands beside the peers' run on the same rows;
    each ratio is to the HGB of its own run, and seeds are counted per method."""

    def run(folder: str, seeds: list[int], methods: dict[str, float], hgb_s: float):
        write_afa_run(tmp_path / "afa" / folder, seeds, methods, hgb_s=hgb_s)

    run("peers", [0], {"dag": 0.9, "greedy": 0.2, "allfeat": 0.1}, hgb_s=4.0)
    run("dag", [0, 1, 2], {"dag": 0.3, "allfeat": 0.1}, hgb_s=2.0)
    runs = afa_runs(tmp_path / "afa")["cube"]
    assert runs["dag"].name == "dag" and runs["allfeat"].name == "dag"
    assert runs["greedy"].name == "peers"
    quality, speed, lost, _ = afa_sections(tmp_path / "afa")
    assert "| cube (DAG 3 seeds, others 1) | 0.300 / 0.300 / 0.300 |" in quality
    # DAG fit 4 s against its run's 2 s HGB; greedy 4 s against its run's 4 s.
    cells = "| 20 | 2.0 | not timed | 2.0× | not timed | not timed | not run | 1.0× |"
    assert cells in speed
    # The greedy acquirer is ahead in the one seed both ran.
    assert {(x.method, x.ahead, x.n) for x in lost} == {("greedy", 1, 1)}


def test_afa_speed_shows_the_default_fit_and_refits_where_timed(tmp_path):
    cpu = {
        "hgb_fit_cpu_s": 2.0,
        "dag_fit_cpu_s": 4.0,
        "dag_default_fit_cpu_s": 9.0,
        "dag_refit_cpu_s": 1.0,
        "dag_whatif_cpu_s": 5.0,
    }
    write_afa_run(tmp_path / "afa" / "run", [0, 1], {"dag": 0.3}, cpu=cpu)
    _, speed, _, _ = afa_sections(tmp_path / "afa")
    # CPU ratios to the run's HGB: default fit 9 / 2, fit 4 / 2, refit 1 / 2,
    # the default model's what-if refit 5 / 2.
    assert "| 2.0 | 4.5× (CPU) | 2.0× (CPU) | 0.50× (CPU) | 2.50× (CPU) |" in speed


def test_the_regressor_section_shows_each_saved_table_in_name_order(tmp_path):
    from _report import regressor_section

    assert regressor_section(tmp_path / "none") == []
    folder = tmp_path / "regressor_many"
    folder.mkdir()
    for name, title in (("1_design.md", "with x"), ("0_default.md", "the default")):
        (folder / name).write_text(f"# Regressor: {title}\n\n| a |\n| --- |\n| 1 |\n")
    text = "\n".join(regressor_section(folder))
    assert text.startswith("## The regressor beyond 12 sensors")
    # Each file's title one level under the section's, the default's first.
    assert text.index("### Regressor: the default") < text.index(
        "### Regressor: with x"
    )
