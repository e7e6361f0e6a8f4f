"""Sizes of the policy files the app writes, to set its model upload cap.

Trains each ``demo:classifier`` given (default: every demo at the app's
default bank, and the random-forest bank on pima and landsat) as the Train
page does at its defaults (sensor subsets, t = 8, where a demo needs them)
and prints the size of its ``.skops`` and pickle downloads (slim: without
the bank's out-of-fold predictions), beside ``ui.uploads.MODEL_MAX_MB``.

    PYTHONPATH=$PWD python benchmarks/bench_model_sizes.py [landsat:random_forest ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from budgetdag_core import dumps_policy, dumps_policy_skops  # noqa: E402
from budgetdag_core.validation import MAX_FULL_DAG_SENSORS  # noqa: E402
from ui.data import demo_dataset, load_app_demo  # noqa: E402
from ui.training import TrainSettings, train  # noqa: E402
from ui.uploads import MODEL_MAX_MB  # noqa: E402

DEFAULT = [
    "pima:hist_gradient_boosting",
    "landsat:hist_gradient_boosting",
    "spam:masked_boosting",
    "letter:hist_gradient_boosting",
    "pima:random_forest",
    "landsat:random_forest",
]


def main(cases: list[str]) -> None:
    print(f"model upload cap: {MODEL_MAX_MB} MB")
    print(
        f"{'demo':<8} {'bank':<24} {'states':>6} {'skops':>9} {'pickle':>9} {'fit':>6}"
    )
    for case in cases:
        name, classifier = case.split(":")
        dataset = demo_dataset(load_app_demo(name))
        many = dataset.spec.n_sensors > MAX_FULL_DAG_SENSORS
        settings = TrainSettings(
            cost_scale=0.05, classifier=classifier, n_subsets=8 if many else None
        )
        start = time.perf_counter()
        run = train(dataset, dataset.spec, settings)
        took = time.perf_counter() - start
        skops = len(dumps_policy_skops(run.model)) / 2**20
        pickle = len(dumps_policy(run.model)) / 2**20
        states = run.model.dag_.number_of_nodes()
        print(
            f"{name:<8} {classifier:<24} {states:>6} {skops:>6.2f} MB "
            f"{pickle:>6.2f} MB {took:>5.0f}s",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "cases",
        nargs="*",
        default=DEFAULT,
        metavar="DEMO:CLASSIFIER",
        help="demo and bank to train (default: every demo at the app's default "
        "bank, and the random-forest bank on pima and landsat)",
    )
    main(parser.parse_args().cases)
