"""
A trade-off sweep on a Dask cluster
===================================

Bank fits, the points of a sweep and the nodes of Graph-Reduce run through
joblib, so any active joblib backend runs them: inside
``joblib.parallel_config(backend="dask")`` the work goes to a Dask cluster.
The results do not depend on the backend.

This example starts a small local cluster in this process, so it runs
anywhere; for a real cluster pass the scheduler's address to ``Client``
(``Client("tcp://scheduler-host:8786")``) and start the workers from the same
environment, so they have the same versions of ``budgetdag`` and
scikit-learn.
"""

import joblib
from distributed import Client, LocalCluster

from budgetdag_core import toy_dataset, tradeoff_curve
from budgetdag_core.plotting import tradeoff_figure

demo = toy_dataset(n_train=600, n_test=300, random_state=0)
common = {
    "cost_scales": [0.0, 0.01, 0.03, 0.1, 0.3],
    "X_test": demo.X_test,
    "y_test": demo.y_test,
    "cv": 3,
    "random_state": 0,
}

# %%
# The sweep on Dask
# -----------------
# ``n_jobs=-1`` lets joblib use every worker of the cluster.

with (
    LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster,
    Client(cluster) as client,
):
    print(client)
    with joblib.parallel_config(backend="dask"):
        on_dask = tradeoff_curve(
            demo.X_train, demo.y_train, demo.spec, n_jobs=-1, **common
        )

dag = on_dask.dag[on_dask.dag["split"] == "test"]
print(dag[["cost_scale", "avg_cost", "error"]].to_string(index=False))
tradeoff_figure(on_dask.frame, split="test", title="Traced on Dask").show()

# %%
# The same curve without Dask
# ---------------------------
# The default backend, in this process, gives the same numbers.

local = tradeoff_curve(demo.X_train, demo.y_train, demo.spec, n_jobs=1, **common)
same = on_dask.frame.equals(local.frame)
print("same frame with and without Dask:", same)
