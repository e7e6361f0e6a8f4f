"""
A policy for a budget
=====================

A cost scale is hard to pick by hand: its meaning (one error is worth
``1 / cost_scale`` units of cost) depends on the data. Usually one knows the
budget instead: "we can afford two spectral bands per pixel on average".
:func:`~budgetdag_core.fit_for_budget` fits the classifier bank once, then
bisects the cost scale until the policy's average cost on held-out rows meets
the target, and returns that model with a report of the search.

The landsat demo has 4 bands of cost 1. To keep the documentation build fast
this example subsamples the training rows and uses 3 folds.
"""

import plotly.graph_objects as go

from budgetdag_core import fit_for_budget, load_demo

demo = load_demo("landsat")
train = demo.train.sample(1500, random_state=0)
X_train, y_train = train[demo.spec.columns], train[demo.label]

model = fit_for_budget(X_train, y_train, demo.spec, 2.0, cv=3, random_state=0)
report = model.budget_report_
print(f"cost scale {report.cost_scale:.4g}, met: {report.met}")
print(
    f"held-out average cost {report.validation_avg_cost:.3f} "
    f"(target 2.0 +- {report.tolerance:.3g}), error {report.validation_error:.4f}"
)

# %%
# The search
# ----------
# Each row of ``report.history`` is one bisection step: a cost scale, the
# policy learned at it on the same bank, and its average cost and error on
# the training and the held-out rows (``validation_fraction=0.25`` of them).

print(report.history.round(4).to_string(index=False))

# %%
# On the test split
# -----------------
# The budget was met on held-out training rows; the test split checks it
# generalises.

scores = model.evaluate(demo.X_test, demo.y_test)
print({k: round(v, 4) for k, v in scores.items()})

# %%
# Several budgets
# ---------------
# One call per budget, each with its own bank: for many budgets
# :func:`~budgetdag_core.tradeoff_curve` (one bank for all) is cheaper. Here
# two more budgets, and the error each buys on the test split. At cost scale
# 0 the policy already stops at about 2.9 bands (the fourth band rarely
# helps), so budgets above that are met by spending less.

rows = [(2.0, scores["avg_cost"], scores["error"])]
for budget in (1.5, 2.5):
    fitted = fit_for_budget(X_train, y_train, demo.spec, budget, cv=3, random_state=0)
    test = fitted.evaluate(demo.X_test, demo.y_test)
    rows.append((budget, test["avg_cost"], test["error"]))
rows.sort()
for budget, cost, error in rows:
    print(f"budget {budget}: test cost {cost:.3f}, error {error:.4f}")

fig = go.Figure(
    go.Scatter(
        x=[cost for _, cost, _ in rows],
        y=[error for _, _, error in rows],
        text=[f"budget {budget}" for budget, _, _ in rows],
        mode="lines+markers+text",
        textposition="top right",
    )
)
fig.update_layout(
    title="fit_for_budget on landsat: test error at each budget",
    xaxis_title="average test cost (bands)",
    yaxis_title="test error",
)
fig.show()
