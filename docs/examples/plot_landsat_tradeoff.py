"""
The landsat trade-off curve
===========================

One classifier bank, many cost scales: :func:`~budgetdag_core.tradeoff_curve`
fits the bank once, learns the policies of several cost scales on it and
places the DAG's curve beside the baselines the app's Trade-off page draws:
every fixed sensor subset and their hull, the confidence cascade, all sensors
and the oracle bound.

The landsat demo has 4 spectral bands, each a sensor of cost 1 (16 states). To
keep the documentation build fast this example subsamples the training rows
and uses 3 folds; the full run is ``python benchmarks/run_all.py``.
"""

from budgetdag_core import load_demo, tradeoff_curve
from budgetdag_core.plotting import tradeoff_figure

demo = load_demo("landsat")
train = demo.train.sample(1200, random_state=0)
test = demo.test.sample(1000, random_state=0)
X_train, y_train = train[demo.spec.columns], train[demo.label]
X_test, y_test = test[demo.spec.columns], test[demo.label]
print(demo.spec.names, {s: len(c) for s, c in demo.spec.groups.items()})

# %%
# Trace the curve
# ---------------
# ``n_points`` picks the cost scales itself: 0, the scale above which nothing
# is bought, and points placed where the curve moves most. ``X_test`` and
# ``y_test`` add the test split, on which the methods are judged.

res = tradeoff_curve(
    X_train,
    y_train,
    demo.spec,
    n_points=6,
    X_test=X_test,
    y_test=y_test,
    cv=3,
    random_state=0,
    n_jobs=1,
)
test_rows = res.frame[res.frame["split"] == "test"]
print(test_rows.groupby("method").size())

# %%
# The DAG's points on the test split: each cost scale is a fitted model in
# ``res.models``, all sharing ``res.bank``.

dag = res.dag[res.dag["split"] == "test"]
print(dag[["cost_scale", "avg_cost", "avg_sensors", "error"]].round(4).to_string())

# %%
# The figure
# ----------
# Error against average cost. Below the fixed-subset hull means the policy
# does better than any random mix of non-adaptive subsets; the oracle is a
# bound no policy over these classifiers reaches.

fig = tradeoff_figure(res.frame, split="test")
fig.show()

# %%
# The summary compares the curves over their common cost range, in error
# points, and says at which share of the all-sensor cost the DAG gets within
# half a point of the all-sensor error.

print(res.summary.describe())

# %%
# A model for a budget
# --------------------
# Pick the most accurate point whose average cost on the *training* rows
# (out of fold) is at most 2 bands, then read its test error: choosing on the
# test split would flatter it.

model = res.model_for_budget(2.0)
print(model.cost_scale, model.evaluate(X_test, y_test))
