"""Write the flow graphs ``tests/core/test_dag_geometry.py`` draws.

Run from the repository root (a few minutes: digits takes the longest)::

    PYTHONPATH=$PWD python tests/data/make_flow_fixtures.py

Three tables a user brings, each one sensor per column of cost 1, fitted with
the app's defaults (``cost_scale=0.01``, 3 folds): scikit-learn's wine (13
sensors), breast cancer (30) and the digits demo (64 pixels). Each model's
flow of its training rows (``model.flow(X, y)``) is saved as node-link JSON
(gzip) with the sensor names and each state's cost, so the figure test needs
no fit.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import networkx as nx
import numpy as np
from sklearn.datasets import load_breast_cancer, load_wine

from budgetdag_core import BudgetDAGClassifier, SensorSpec, load_demo

HERE = Path(__file__).parent / "flows"


def tables() -> dict:
    wine = load_wine(as_frame=True)
    cancer = load_breast_cancer(as_frame=True)
    cancer_X = cancer.data.rename(columns=lambda c: c.replace(" ", "_"))
    digits = load_demo("digits")
    return {
        "wine13": (wine.data, wine.target),
        "cancer30": (cancer_X, cancer.target),
        "digits64": (digits.X_train, digits.y_train),
    }


def main() -> None:
    HERE.mkdir(exist_ok=True)
    for name, (X, y) in tables().items():
        spec = SensorSpec.per_column(list(X.columns))
        model = BudgetDAGClassifier(spec, cost_scale=0.01, cv=3, random_state=0)
        model.fit(X, y)
        g = model.flow(X, y)
        g.graph["sensor_names"] = list(model.sensor_dag_.sensor_names)
        cost = model.sensor_dag_.membership() @ np.asarray(spec.cost_vector, float)
        for k in g.nodes:
            g.nodes[k]["cost"] = float(cost[k])
        data = nx.node_link_data(g, edges="edges")
        text = json.dumps(
            data, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)
        )
        (HERE / f"{name}.json.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
        print(name, model.sensor_dag_.n_states, "states", model.strategy_)


if __name__ == "__main__":
    main()
