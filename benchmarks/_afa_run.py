"""The AFA peers on one benchmark dataset: settings, rollouts, points, timings.

Shared by ``bench_afa.py`` and ``run_all.py``: AACO (``_aaco.py``) and the
greedy CMI acquirer (``_greedy_cmi.py``) fitted on a ``BenchData``'s training
rows with one masked classifier, rolled out on its test rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from _aaco import AACO
from _afa_common import MaskedClassifier, Rollout, SensorColumns
from _common import BenchData
from _greedy_cmi import GreedyCMI
from threadpoolctl import threadpool_limits

#: The sensor whose first purchase is counted (CUBE-NM's context group).
ROUTING_SENSOR = "context"
#: The masked classifier's engine per dataset, chosen on validation rows
#: (``bench_afa.py --check-engines``: a 75/25 split of seed 0's training rows,
#: errors at 10/25/50/100 % of the sensors; ``bench_afa.py --check-engines``):
#: the MLP, about 10x faster to predict in the peers' loops, unless boosting
#: errs less by more than 1 point on average there.
ENGINES = {"cube": "hgb", "spam": "hgb", "cube_nm6": "hgb"}


def peer_settings(d: BenchData, peer_params: dict) -> dict:
    """The peers' settings for ``d``: defaults updated by ``--peer-params``.

    Rollouts stop at ``max_fraction`` of the all-sensor cost: all of it up to 8
    sensors, 80 % up to 20, 60 % beyond (each step costs a pass over the
    candidates; the readings that matter are at 10-50 %)."""
    n = d.spec.n_sensors
    cap = 1.0 if n <= 8 else 0.8 if n <= 20 else 0.6
    return {
        "classifier": {
            "engine": ENGINES.get(d.name, "mlp"),
            "oof_folds": 3,
            **peer_params.get("classifier", {}),
        },
        "aaco": dict(peer_params.get("aaco", {})),
        "greedy": dict(peer_params.get("greedy", {})),
        "max_fraction": float(peer_params.get("max_fraction", cap)),
        "aaco_lambdas": list(peer_params.get("aaco_lambdas", [])),
    }


def _rollout_points(method: str, parts: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(parts, ignore_index=True).assign(method=method)


def run_peers(
    d: BenchData, methods: set[str], settings: dict, n_jobs: int
) -> tuple[pd.DataFrame, dict]:
    """AACO and the greedy acquirer on the test rows, one masked classifier."""
    sensors = SensorColumns.from_spec(d.spec)
    X, y = d.X_train[list(sensors.columns)].to_numpy(float), np.asarray(d.y_train)
    Xt, yt = d.X_test[list(sensors.columns)].to_numpy(float), np.asarray(d.y_test)
    clf_params = dict(settings["classifier"])
    if "aaco" not in methods:
        clf_params["oof_folds"] = 0  # only AACO scores training rows
    clf = MaskedClassifier(sensors, n_jobs=n_jobs, **clf_params).fit(X, y)
    cap = settings["max_fraction"] * sensors.costs.sum()
    parts, info = [], {"peer_cap": cap}
    with threadpool_limits(n_jobs):
        if "aaco" in methods:
            aaco = AACO(clf, **settings["aaco"]).fit(X, y)
            rollout = aaco.rollout(Xt, force=True, max_cost=cap)
            found = [rollout.budget_points(yt), rollout.own_stop_point(yt)]
            for lam in settings["aaco_lambdas"]:
                aaco.acquisition_cost = float(lam)
                soft = aaco.rollout(Xt, force=False, max_cost=cap)
                found.append(soft.own_stop_point(yt).assign(param=lam, rule="soft"))
            parts.append(_rollout_points("aaco", found))
            info.update(_peer_info("aaco", rollout, sensors, len(Xt)))
            info["aaco_fit_s"] = clf.fit_seconds_["full"] + clf.fit_seconds_["folds"]
        if "greedy" in methods:
            greedy = GreedyCMI(clf, **settings["greedy"]).fit(X, y)
            rollout = greedy.rollout(Xt, max_cost=cap)
            found = [rollout.budget_points(yt), rollout.threshold_points(yt)]
            parts.append(_rollout_points("greedy", found))
            info.update(_peer_info("greedy", rollout, sensors, len(Xt)))
            info["greedy_fit_s"] = clf.fit_seconds_["full"]
    points = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return points, info


def _peer_info(
    name: str, rollout: Rollout, sensors: SensorColumns, n_test: int
) -> dict:
    """Speed, reach and first purchases of one peer's rollout."""
    out = {
        f"{name}_rows_per_s": n_test / rollout.seconds,
        f"{name}_rollout_s": rollout.seconds,
        f"{name}_max_cost": float(rollout.cost.mean(axis=0).max()),
    }
    if ROUTING_SENSOR in sensors.names:
        first = rollout.acquired[:, 0] if rollout.acquired.size else np.array([-1])
        out[f"{name}_first_context"] = float(
            (first == sensors.names.index(ROUTING_SENSOR)).mean()
        )
    return out
