"""Graph-Reduce never keeps a node policy that is worse than one fixed action."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from budgetdag_core import SensorDAG, graph_reduce
from budgetdag_core.graph_reduce import ConstantAction


class WorstAction(BaseEstimator):
    """A deliberately bad cost-sensitive learner: picks the costliest action."""

    def fit(self, Z, C):
        self.worst_ = int(np.argmax(np.asarray(C).sum(axis=0)))
        return self

    def predict(self, Z):
        return np.full(len(Z), self.worst_, dtype=np.intp)


def test_bad_node_learners_fall_back_to_the_best_action():
    rng = np.random.default_rng(0)
    dag = SensorDAG(["a", "b"])
    n = 200
    Z = rng.normal(size=(n, 2))
    losses = rng.integers(0, 2, size=(n, dag.n_states)).astype(float)
    result = graph_reduce(
        lambda k: Z[:, dag.sensors_in(k)],
        losses,
        np.array([0.1, 0.2]),
        dag,
        WorstAction(),
        cost_scale=0.0,
    )
    fitted = [p for p in result.policies if p.learner is not None]
    assert fitted and all(isinstance(p.learner, ConstantAction) for p in fitted)
    # With free sensors, the root's cost-to-go is at most the all-sensor loss.
    assert result.cost_to_go[:, 0].mean() <= losses[:, -1].mean()
    for p in fitted:
        np.testing.assert_array_equal(p.predict(Z[:5]), np.full(5, p.learner.action))
