"""Trade-off curves over greedy sensor subsets (Alg. 2, t=8) on spam and DNA.

- spam: 57 single-feature sensors (UCI Spambase), seeded stratified 70/30 split.
- dna: 60 position sensors of 3 one-hot bits each (StatLog DNA; sensor ``pNN`` is
  ``pNN_A, pNN_C, pNN_G``), standard 2000/1186 split.

Every sensor costs 1 (the paper's uniform costs), so ``avg_cost`` is the average
number of sensors acquired. Alg. 2 selects 7 greedy subsets + all sensors
(``n_subsets=8, include_all=True``, as the paper); the bank (default
standardised logistic regression) is fitted once and the policies are refitted
for each ``cost_scale``. Prints test error vs average cost, with the all-sensor
classifier and the cheapest non-adaptive subset as reference.

Run from the repository root: ``python -m benchmarks.bench_greedy_subsets``.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
from sklearn.model_selection import train_test_split

from budgetdag_core import BudgetDAGClassifier, SensorSpec
from budgetdag_core.datasets import find_file

COST_SCALES = [0.0, 0.001, 0.003, 0.01, 0.03]


def load(name: str) -> tuple[pd.DataFrame, pd.DataFrame, SensorSpec]:
    if name == "spam":
        df = pd.read_csv(find_file("spam.csv.gz"))
        train, test = train_test_split(
            df, test_size=0.3, stratify=df["label"], random_state=0
        )
        cols = [c for c in df.columns if c != "label"]
        return train, test, SensorSpec.per_column(cols, cost=1.0)
    train = pd.read_csv(find_file("dna_train.csv.gz"))
    test = pd.read_csv(find_file("dna_test.csv.gz"))
    cols = [c for c in train.columns if c != "label"]
    return train, test, SensorSpec.by_prefix(cols, separator="_", cost=1.0)


def run(name: str, n_jobs: int) -> None:
    train, test, spec = load(name)
    X, y = train[spec.columns], train["label"]
    Xt, yt = test[spec.columns], test["label"]
    print(
        f"\n== {name}: {len(train)} train / {len(test)} test rows, "
        f"{spec.n_sensors} sensors ({len(spec.columns)} columns), t=8 (7 greedy + all)"
    )
    start = time.perf_counter()
    model = BudgetDAGClassifier(
        spec,
        cost_scale=COST_SCALES[0],
        n_subsets=8,
        include_all=True,
        random_state=0,
        n_jobs=n_jobs,
    ).fit(X, y)
    fit_s = time.perf_counter() - start
    sel = model.subset_selection_
    print(
        f"subsets (sizes) {[len(s) for s in sel.subsets]}; G = {sel.reward:.4f} of "
        f"{sel.n_rows} rows, {sel.n_evaluations} candidate fits; "
        f"{model.sensor_dag_.n_states} DAG states; first fit {fit_s:.1f} s"
    )
    for s in sel.subsets[:-1]:
        print("   ", ", ".join(s))
    states = model.evaluate_states(Xt, yt)
    full = states.iloc[-1]
    print(f"all {spec.n_sensors} sensors, non-adaptive: error {full['error']:.4f}")
    singles = states[states["n_sensors"] < spec.n_sensors].sort_values("error")
    best = singles.iloc[0]
    print(
        f"best non-adaptive union of subsets: error {best['error']:.4f} at "
        f"{best['n_sensors']} sensors"
    )
    print(f"{'cost_scale':>10} {'error':>7} {'avg_cost':>9} {'fit_s':>6}")
    for i, cs in enumerate(COST_SCALES):
        start = time.perf_counter()
        m = model if i == 0 else model.refit_policies(X, y, cost_scale=cs)
        secs = fit_s if i == 0 else time.perf_counter() - start
        r = m.evaluate(Xt, yt)
        print(f"{cs:>10g} {r['error']:>7.4f} {r['avg_cost']:>9.2f} {secs:>6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["spam", "dna"])
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    for name in args.datasets:
        run(name, args.n_jobs)


if __name__ == "__main__":
    main()
