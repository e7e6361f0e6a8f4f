"""A what-if refit after the default fit, with and without its incumbent.

On ``bench_afa.py``'s tables and splits: the default model
(``BudgetDAGClassifier(spec).fit``, ``cost_scale="auto"``, one thread), then
``refit_policies`` at ``--factors`` times its chosen scale, as the app's
retrain at a new cost runs it. Each refit runs twice from the same copy of
the default model (its held-out growths sent along, as the app's worker
receives them): with its *own choice* (a close call judged on every
training row, as before ``kept_incumbent``) and with the *incumbent* rule
(a close call keeps the model's strategy where it is within one standard
error on the first split). It prints, per refit, the CPU seconds (and their
ratio to one single-threaded HGB fit in the same process), the test error
and average cost, the strategy kept and the held-out parts judged.

    BUDGETDAG_DATA=... python benchmarks/bench_whatif_refit.py \\
        --datasets digits dna_400 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import pickle
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's budgetdag_core wins

from _common import Clock, default_params, load, timed_reference_fit  # noqa: E402

from budgetdag_core import BudgetDAGClassifier  # noqa: E402
from budgetdag_core.estimator import _plans  # noqa: E402
from budgetdag_core.strategies import held_out_pickled  # noqa: E402

RULES = ("own choice", "incumbent")
CHOOSE = _plans.choose_strategy  # the library's, with the incumbent rule


def choose_without_incumbent(*args, incumbent=None, **kwargs):
    """``choose_strategy`` as before the incumbent rule."""
    return CHOOSE(*args, **kwargs)


def refit(model, d, scale: float, rule: str) -> dict:
    """``model.refit_policies`` at ``scale`` under ``rule``: its numbers."""
    _plans.choose_strategy = CHOOSE if rule == "incumbent" else choose_without_incumbent
    try:
        with Clock() as clock:
            other = model.refit_policies(d.X_train, d.y_train, scale)
    finally:
        _plans.choose_strategy = CHOOSE
    metrics = other.evaluate(d.X_test, d.y_test)
    choice = other.strategy_choice_
    return {
        "cpu": clock.cpu,
        "error": metrics["error"],
        "cost": metrics["avg_cost"],
        "strategy": other.strategy_,
        "folds": choice.folds,
        "kept": choice.kept_incumbent,
    }


def one(name: str, seed: int, factors: list[float]) -> list[str]:
    d = load(name, quick=False, max_train=None, seed=seed)
    params = {"random_state": 0, "n_jobs": 1, **default_params(d)}
    params = {k: v for k, v in params.items() if v is not None and k != "cost_scale"}
    _, hgb, _ = timed_reference_fit(d.X_train, d.y_train, d.X_test, d.y_test)
    default = BudgetDAGClassifier(d.spec, **params).fit(d.X_train, d.y_train)
    with held_out_pickled():  # both rules start from the same growths
        frozen = pickle.dumps(default)
    lines = []
    for factor in factors:
        scale = factor * float(default.cost_scale_)
        cells = []
        for rule in RULES:
            r = refit(pickle.loads(frozen), d, scale, rule)
            cells.append(
                f"{rule} {r['cpu']:6.2f} s {r['cpu'] / hgb.cpu:6.2f}x "
                f"err {r['error']:.4f} cost {r['cost']:.3f} {r['strategy']} "
                f"parts {r['folds']}" + (" kept" if r["kept"] else "")
            )
        lines.append(
            f"{name} seed {seed} x{factor:g} (HGB {hgb.cpu:.2f} s, default "
            f"{default.strategy_}): " + " | ".join(cells)
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["digits", "dna_400"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--factors", nargs="+", type=float, default=[2.0, 0.5])
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for name in args.datasets:
        for seed in args.seeds:
            for line in one(name, seed, args.factors):
                print(line, flush=True)


if __name__ == "__main__":
    main()
