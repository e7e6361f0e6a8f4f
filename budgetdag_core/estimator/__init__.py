"""The estimators: fit a bank, a DAG and its node policies; predict adaptively.

:class:`BudgetDAGClassifier` and :class:`BudgetDAGRegressor` are scikit-learn
estimators; :class:`PolicySession` runs a fitted one on one example, one sensor
at a time; :class:`LossTablePolicy` learns policies from a loss table alone
(section 2.4 of the paper).
"""

from ._classifier import BudgetDAGClassifier
from ._policy import LossTablePolicy
from ._regressor import BudgetDAGRegressor
from ._session import PolicySession

__all__ = [
    "BudgetDAGClassifier",
    "BudgetDAGRegressor",
    "LossTablePolicy",
    "PolicySession",
]
