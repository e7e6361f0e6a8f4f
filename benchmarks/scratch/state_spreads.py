# ruff: noqa: E501, E701, E702
# Research script of issue 30 (see /work/notes/many_sensors_log.md).
"""How far the threshold of policy_features="auto" is from the paper's data:
per cached bench_policies bank, the smallest out-of-fold spread of a non-root
state (mean total-variation distance of the rows' probabilities from their
mean); "auto" adds sensor values where it is below CONSTANT_STATE_SPREAD."""

import pickle
import sys
from pathlib import Path

import numpy as np

from budgetdag_core.estimator._inputs import CONSTANT_STATE_SPREAD


def spreads(p):
    mean = p.mean(axis=0)
    return (np.abs(p - mean).sum(axis=2) / 2).mean(axis=0)


for path in sorted(Path(sys.argv[1]).glob("*.pkl")):
    bank = pickle.load(open(path, "rb"))
    s = spreads(np.asarray(bank.oof_proba_, dtype=float))[1:]
    print(
        f"{path.stem:40s} states {len(s) + 1:4d} smallest non-root spread {s.min():.3f} (threshold {CONSTANT_STATE_SPREAD})"
    )
