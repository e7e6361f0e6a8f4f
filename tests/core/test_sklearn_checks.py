"""scikit-learn's common estimator checks on both estimators.

The checks build their own arrays of 1 to 10 columns, so the estimators are
given ``sensors=None`` (one unit-cost sensor per column, named ``x0, x1, ...``)
and ``n_subsets=2`` (a DAG of at most four states whatever the width, which
keeps the run short); a small ``cost_scale`` lets the policies buy sensors, as
the accuracy checks need.
"""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from budgetdag_core import BudgetDAGClassifier, BudgetDAGRegressor

#: Checks that a sensor-spec estimator fails by design, with the reason.
EXPECTED_FAILED_CHECKS = {
    "check_dtype_object": (
        "Object-dtype feature columns are refused with a ValueError naming the "
        "column ('is not numeric: encode it'), never cast: in a table they are a "
        "data-preparation mistake (see test_bad_input), so the TypeError the check "
        "expects for a dict entry is not raised."
    ),
}


def _expected_failed_checks(estimator) -> dict[str, str]:
    return EXPECTED_FAILED_CHECKS


@parametrize_with_checks(
    [
        BudgetDAGClassifier(cv=2, n_subsets=2, cost_scale=0.001, random_state=0),
        BudgetDAGRegressor(cv=2, n_subsets=2, cost_scale=0.001, random_state=0),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible_estimator(estimator, check) -> None:
    check(estimator)
