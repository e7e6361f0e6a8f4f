"""The compiled kernels: the warm-up compiles exactly what fits use, in a child.

Both tests run fresh processes: a kernel's compiled versions are per process,
and the warm-up's child writes numba's on-disk cache (here a temporary one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from budgetdag_core._compiled import KERNELS, OWNER_VARIABLE

ROOT = Path(__file__).resolve().parents[2]

USES = """
import json
import numpy as np
import pandas as pd
from numba import typeof

from budgetdag_core import BudgetDAGClassifier, SensorSpec, load_demo
from budgetdag_core._compiled import KERNELS, _kernel

rng = np.random.default_rng(0)
X = pd.DataFrame(rng.normal(size=(300, 6)), columns=list("abcdef"))
y = (X["a"] + X["b"] * X["c"] > 0).astype(int) + (X["d"] > 1)
for columns, kind in ((list("abc"), "hgb"), (list("abcdef"), "masked")):
    spec = SensorSpec.per_column(columns)
    model = BudgetDAGClassifier(
        spec, cv=2, random_state=0, bank_kind=kind, cost_scale=0.01
    )
    model.fit(X[columns], y).predict(X[columns])
    model.predict_proba(X[columns].iloc[:1])
    session = model.start()
    while (sensor := session.next_sensor()) is not None:
        session.observe(sensor, {c: X.loc[0, c] for c in spec.groups[sensor]})
    assert session.acquired, "the session should buy a sensor"
demo = load_demo("pima")  # two classes: one raw score per row
BudgetDAGClassifier(demo.spec, cv=2, random_state=0, cost_scale=0.01).fit(
    demo.X_train, demo.y_train
).trace(demo.X_test.iloc[:5])
out = {}
for module, name in KERNELS:
    dispatcher, args = _kernel(module, name)
    out[name] = {
        "used": sorted(map(str, dispatcher.signatures)),
        "warmed": str(tuple(typeof(a) for a in args)),
    }
print(json.dumps(out))
"""


def _run(code: str, **env: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={
            **{k: v for k, v in os.environ.items() if k != OWNER_VARIABLE},
            "PYTHONPATH": str(ROOT),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


def test_fits_use_each_kernel_in_the_one_version_the_warm_up_compiles():
    # Without the warm-up, the calls compile what they need: each kernel once,
    # with the argument types of its example (so the warm-up covers a fit).
    used = json.loads(_run(USES, BUDGETDAG_WARM_UP="0"))
    for name, kernel in used.items():
        assert kernel["used"] == [kernel["warmed"]], name


def test_warm_up_fills_the_cache_in_a_child_process(tmp_path):
    cache = str(tmp_path / "numba")
    before = _run(
        "from budgetdag_core import kernels_ready, warm_up\n"
        "ready = kernels_ready()\n"
        "started = warm_up(wait=True)\n"
        "import budgetdag_core._compiled as c\n"
        "print(ready, started, sorted(c._warm_up.done), kernels_ready())",
        NUMBA_CACHE_DIR=cache,
    )
    names = sorted(name for _, name in KERNELS)
    assert before == f"False True {names} True"
    # A later process finds them in the cache and starts no child.
    after = _run(
        "from budgetdag_core import kernels_ready, warm_up\n"
        "print(kernels_ready(), warm_up())",
        NUMBA_CACHE_DIR=cache,
    )
    assert after == "True False"
