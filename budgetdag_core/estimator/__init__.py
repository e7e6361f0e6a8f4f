"""The estimators: fit a bank, a DAG and its node policies; predict adaptively.

:class:`BudgetDAGClassifier` and :class:`BudgetDAGRegressor` are scikit-learn
estimators; :class:`PolicySession` runs a fitted one on one example, one sensor
at a time; :class:`LossTablePolicy` learns policies from a loss table alone
(section 2.4 of the paper). A fit follows a :class:`FitPlan`
(:class:`EveryRowPlan` or :class:`GrownPlan`, see ``estimator.fit_plan``).
"""

from ._auto_scale import NothingBoughtWarning
from ._classifier import BudgetDAGClassifier
from ._inputs import POLICY_FEATURES, model_inputs, uses_model_inputs
from ._plans import (
    SUBSET_MAX_ROWS,
    EveryRowPlan,
    FitPlan,
    GrownPlan,
    PolicyProblem,
    TrainingData,
    fitted_plan,
)
from ._policy import LossTablePolicy, route_rows
from ._regressor import BudgetDAGRegressor
from ._session import PolicySession

__all__ = [
    "POLICY_FEATURES",
    "SUBSET_MAX_ROWS",
    "BudgetDAGClassifier",
    "BudgetDAGRegressor",
    "EveryRowPlan",
    "FitPlan",
    "GrownPlan",
    "LossTablePolicy",
    "NothingBoughtWarning",
    "PolicyProblem",
    "PolicySession",
    "TrainingData",
    "fitted_plan",
    "model_inputs",
    "route_rows",
    "uses_model_inputs",
]
