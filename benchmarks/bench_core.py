"""Core engine numbers: landsat sweep vs fixed band subsets, fit times.

Run: python benchmarks/bench_core.py   (prints measured numbers; not a test)
"""

from __future__ import annotations

import time

import numpy as np

from budgetdag_core import BudgetDAGClassifier, load_demo


def best_fixed_at_cost(states, cost: float) -> float:
    """Lowest test error of a fixed subset costing at most ``cost``."""
    ok = states[states["avg_cost"] <= cost + 1e-9]
    return float(ok["error"].min())


def landsat_sweep(cost_scales=(0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2)):
    demo = load_demo("landsat")
    t0 = time.perf_counter()
    base = BudgetDAGClassifier(demo.spec, cost_scale=cost_scales[0], random_state=0)
    base.fit(demo.X_train, demo.y_train)
    print(f"landsat full fit (bank + policies): {time.perf_counter() - t0:.1f} s")
    states = base.evaluate_states(demo.X_test, demo.y_test)
    print("\nfixed band subsets (test):")
    for _, r in states.sort_values("avg_cost").iterrows():
        print(
            f"  {'+'.join(r['sensors']) or '(none)':28s} cost {r['avg_cost']:.0f}"
            f"  error {r['error']:.4f}"
        )
    print("\nDAG sweep (test):  cost_scale  avg_cost  error  best_fixed<=cost  gain")
    wins = 0
    for cs in cost_scales:
        t0 = time.perf_counter()
        model = base.refit_policies(demo.X_train, demo.y_train, cost_scale=cs)
        dt = time.perf_counter() - t0
        ev = model.evaluate(demo.X_test, demo.y_test)
        fixed = best_fixed_at_cost(states, ev["avg_cost"])
        wins += ev["error"] < fixed
        print(
            f"  {cs:10.3f}  {ev['avg_cost']:8.3f}  {ev['error']:.4f}  {fixed:.4f}"
            f"  {fixed - ev['error']:+.4f}   (policies {dt:.1f} s)"
        )
    print(f"DAG below the best fixed subset at equal or lower cost: {wins} points")


def letter_fit_time():
    demo = load_demo("letter")
    t0 = time.perf_counter()
    model = BudgetDAGClassifier(demo.spec, cost_scale=0.05, random_state=0)
    model.fit(demo.X_train, demo.y_train)
    fit = time.perf_counter() - t0
    ev = model.evaluate(demo.X_test, demo.y_test)
    t0 = time.perf_counter()
    model.predict(demo.X_test)
    pred = time.perf_counter() - t0
    print(
        f"\nletter (16000 rows, 3 sensors) fit: {fit:.1f} s; predict "
        f"{len(demo.X_test) / pred:,.0f} rows/s; test {ev}"
    )


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    landsat_sweep()
    letter_fit_time()
