"""Choose the sparse DAG's growth settings on VALIDATION rows only: the
training rows of bench_afa's split (``_bench_data.load``) are split again
(seeded, 70/30); each variant's validation error is read off the lower hull of
its tradeoff curve at 10/25/50 % of the all-sensor cost.

    python benchmarks/scratch/tune_sparse.py DATASET SEED VARIANT_JSON ...

A variant is a JSON dict of GrowthSettings fields (``{}``: the defaults).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _common import error_at, hull_of, load  # noqa: E402

import budgetdag_core.estimator._base as base  # noqa: E402
from budgetdag_core import tradeoff_curve  # noqa: E402
from budgetdag_core.sparse_dag import GrowthSettings  # noqa: E402


def main() -> None:
    name, seed = sys.argv[1], int(sys.argv[2])
    d = load(name, quick=False, max_train=None, seed=seed)
    idx = np.arange(len(d.X_train))
    tr, va = train_test_split(idx, test_size=0.3, random_state=seed, stratify=d.y_train)
    Xt, yt = d.X_train.iloc[tr], d.y_train[tr]
    Xv, yv = d.X_train.iloc[va], d.y_train[va]
    total = float(d.spec.cost_vector.sum())
    for text in sys.argv[3:]:
        extra = json.loads(text)
        fields = {"max_states": extra.pop("max_states", 1000)}

        def settings(**kw):
            return GrowthSettings(**{**kw, **extra})

        start = time.perf_counter()
        with mock.patch.object(base, "GrowthSettings", settings):
            res = tradeoff_curve(
                Xt, yt, d.spec, n_points=20, X_test=Xv, y_test=yv,
                random_state=seed, n_jobs=1, max_states=fields["max_states"],
            )  # fmt: skip
        seconds = time.perf_counter() - start
        f = res.frame.query("method == 'dag' and split == 'test'")
        hc, he = hull_of(f)
        errs = [error_at(hc, he, p * total) for p in (0.1, 0.25, 0.5)]
        states = res.models[0].sensor_dag_.n_states
        depth = max(m.bit_count() for m in res.models[0].sensor_dag_.states)
        print(
            f"{name} {seed} {text}: val e10/25/50 "
            + " ".join(f"{e:.3f}" for e in errs)
            + f" lowest {he.min():.3f} states {states} depth {depth} "
            f"{seconds:.0f}s",
            flush=True,
        )


if __name__ == "__main__":
    main()
