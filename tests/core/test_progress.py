"""verbose= and the progress bar: one bar through every stage, full at the end."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor
from budgetdag_core._progress import ProgressBar
from budgetdag_core.cli import main
from tests.conftest import SYNTH_SPEC, make_synthetic

#: The bar's drawn states: "desc (stage done/total): pct%|...| n/total [elapsed]".
DRAWN = re.compile(r"(\d+)/(\d+) \[")


def drawn_states(text: str) -> list[tuple[int, int]]:
    """(n, total) of every state of the bar drawn in ``text``."""
    return [(int(n), int(t)) for n, t in DRAWN.findall(text)]


def test_the_bar_adds_each_stage_and_fills_on_close() -> None:
    out = io.StringIO()
    with ProgressBar("fit", file=out) as bar:
        for done in range(4):
            bar("bank", done, 3)
        bar("strategies", 0, 2)
        bar("grown", 50, 300)
        bar("strategies", 1, 2)
        bar("bank", 1, 3)  # the stage again from a lower count: a new part
        bar("strategies", 2, 2)
    states = drawn_states(out.getvalue())
    totals = [t for _, t in states]
    assert totals == sorted(totals)  # the total only grows, as stages start
    assert states[-1] == (3 + 2 + 300 + 3, 3 + 2 + 300 + 3)  # full at the end
    assert all(n <= t for n, t in states)
    assert out.getvalue().endswith("\n") and out.getvalue().count("\n") == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["bank", "strategies", "grown", "policies"]),
            st.integers(0, 12),
            st.integers(1, 12),
        ),
        max_size=30,
    )
)
def test_any_calls_keep_the_count_within_the_total_and_end_full(calls) -> None:
    out = io.StringIO()
    with ProgressBar("fit", file=out) as bar:
        for stage, done, total in calls:
            bar(stage, done, total)
    states = drawn_states(out.getvalue())
    assert all(n <= t for n, t in states)
    n, total = states[-1]
    assert n == total >= 1
    totals = [t for _, t in states]
    assert totals == sorted(totals)


def test_a_failed_call_leaves_the_bar_where_it_stopped() -> None:
    out = io.StringIO()
    with pytest.raises(RuntimeError), ProgressBar("fit", file=out) as bar:
        bar("bank", 1, 4)
        raise RuntimeError("stop")
    assert drawn_states(out.getvalue())[-1] == (1, 4)


def many_sensor_data(n: int = 300, m: int = 14) -> tuple[pd.DataFrame, np.ndarray]:
    """s0 says which of s1, s2 carries the class: a routed DAG is built
    beside the chain, so the fit compares them (the "choice" stage)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(n, m)), columns=[f"s{i}" for i in range(m)])
    y = np.where(X["s0"] > 0, X["s1"] > 0, X["s2"] > 0).astype(int)
    return X, y


@pytest.mark.parametrize("many", [False, True])
def test_verbose_draws_one_bar_that_ends_with_the_fit(capsys, many) -> None:
    if many:  # beyond 12 sensors: bank kind, bank, strategies, choice, policies
        X, y = many_sensor_data()
        model = BudgetDAGClassifier(cost_scale=0.01, cv=2, max_states=40)
    else:
        X, y = make_synthetic(200)
        model = BudgetDAGClassifier(SYNTH_SPEC, cost_scale=0.05, cv=2)
    model.set_params(random_state=0, verbose=1).fit(X, y)
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.count("\n") == 1 and err.endswith("\n")  # one bar, one line
    states = drawn_states(err)
    n, total = states[-1]
    assert n == total and total > 1  # full when the fit returns
    assert len(states) >= 3  # it moved through the stages
    assert "bank" in err and "policies" in err
    if many:
        assert "strategies" in err and "choice" in err
    # verbose=0 (the default): nothing at all.
    model.set_params(verbose=0).fit(X, y)
    assert capsys.readouterr() == ("", "")


def test_verbose_regressor_and_a_given_callback_wins(capsys) -> None:
    X, y = make_synthetic(150)
    target = X.to_numpy() @ np.linspace(1, 2, X.shape[1])
    model = BudgetDAGRegressor(SYNTH_SPEC, cv=2, random_state=0, verbose=1)
    model.fit(X, target)
    n, total = drawn_states(capsys.readouterr().err)[-1]
    assert n == total > 1
    calls = []
    model.fit(X, target, progress=lambda *a: calls.append(a))
    # The automatic scale's search ends the fit's calls.
    assert capsys.readouterr().err == "" and calls[-1][0] == "cost scale"
    assert "policies" in {stage for stage, _, _ in calls}


@pytest.mark.parametrize("make", [BudgetDAGClassifier, BudgetDAGRegressor])
def test_the_default_estimators_draw_one_bar_to_the_end(capsys, make) -> None:
    # Defaults only (cost_scale="auto" fits several trial policies on one
    # bank): still one bar, on one line, full when fit returns.
    X, y = make_synthetic(150)
    X = X[["w1", "m1", "s1"]]  # 8 states: a short full-DAG fit
    target = y if make is BudgetDAGClassifier else X["w1"] + X["s1"]
    make(random_state=0, verbose=1).fit(X, target)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    states = drawn_states(captured.err)
    n, total = states[-1]
    assert n == total > 1 and len(states) >= 2
    assert "policies" in captured.err


def test_the_automatic_scale_counts_its_trials_to_the_end() -> None:
    # cost_scale="auto": the first trial's stages, then one "cost scale"
    # step per policy fit tried, ending at the most trials whatever it tried.
    from budgetdag_core.estimator._auto_scale import AUTO_MAX_TRIALS

    X, y = make_synthetic(150)
    X = X[["w1", "m1", "s1"]]
    calls = []
    model = BudgetDAGClassifier(random_state=0, cv=3)
    model.fit(X, y, progress=lambda *a: calls.append(a))
    trials = [done for stage, done, _ in calls if stage == "cost scale"]
    tried = len(model.cost_scale_search_["tried"])
    assert trials == [*range(1, tried + 1), AUTO_MAX_TRIALS]
    assert calls[-1] == ("cost scale", AUTO_MAX_TRIALS, AUTO_MAX_TRIALS)
    first = calls.index(("cost scale", 1, AUTO_MAX_TRIALS))
    assert {stage for stage, _, _ in calls[:first]} == {"bank", "policies"}


def test_the_bank_kind_counts_each_kind_it_judges() -> None:
    # A many-sensor fit's "auto" bank: one step per kind fitted and judged.
    from budgetdag_core import SensorSpec

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 14)), columns=[f"x{i}" for i in range(14)])
    y = (X["x0"] + X["x1"] - X["x2"] > 0).astype(int)
    calls = []
    model = BudgetDAGClassifier(
        SensorSpec.per_column(list(X.columns)), cv=3, random_state=0, cost_scale=0.01
    ).fit(X, y, progress=lambda *a: calls.append(a))
    kinds = [k for k in model.bank_.validation_ if k != "rows"]
    steps = [(done, total) for stage, done, total in calls if stage == "bank kind"]
    assert len(kinds) > 1
    assert steps == [(done, len(kinds)) for done in range(len(kinds) + 1)]


def test_a_sweep_of_a_verbose_estimator_draws_no_bar_per_point(capsys) -> None:
    from budgetdag_core import tradeoff_curve

    X, y = make_synthetic(150)
    template = BudgetDAGClassifier(SYNTH_SPEC, cv=2, random_state=0, verbose=1)
    stages = []
    tradeoff_curve(X, y, template, n_points=3, progress=lambda *a: stages.append(a))
    assert capsys.readouterr().err == ""
    assert ("sweep", 3, 3) in stages


def test_verbose_is_checked() -> None:
    X, y = make_synthetic(60)
    with pytest.raises(ValueError, match="verbose"):
        BudgetDAGClassifier(SYNTH_SPEC, verbose=-1).fit(X, y)


def test_the_command_line_draws_one_bar_per_command(tmp_path, capsys) -> None:
    X, y = make_synthetic(200)
    X.assign(target=y).to_csv(tmp_path / "train.csv", index=False)
    SYNTH_SPEC.to_json(tmp_path / "spec.json")
    code = main(
        [
            "train", str(tmp_path / "train.csv"), "--label", "target",
            "--sensors", str(tmp_path / "spec.json"), "--cv", "2",
            "--out", str(tmp_path / "m.pkl"),
        ]
    )  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    # The table's check may warn first (a strong sensor); then the bar, one
    # line redrawn (\r), then "trained in ... s".
    (bar,) = [line for line in err.split("\n") if "budgetdag train:" not in line][:1]
    assert bar.lstrip("\r").startswith("train") and "bank: 1/" not in err
    n, total = drawn_states(bar)[-1]
    assert n == total > 1


def test_the_choice_counts_each_candidates_growth_and_judgement() -> None:
    # Growing a candidate again on the held-out part's fit rows can take
    # seconds: the count moves after it, not only after the judgement.
    X, y = many_sensor_data()
    calls: list[tuple[str, int, int]] = []
    BudgetDAGClassifier(cost_scale=0.01, cv=2, random_state=0).fit(
        X, y, progress=lambda *a: calls.append(a)
    )
    choice = [(done, total) for stage, done, total in calls if stage == "choice"]
    assert choice[:5] == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
