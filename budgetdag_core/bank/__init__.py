"""The classifier bank: class probabilities at every DAG state, with out-of-fold copies.

A bank maps (rows, state) to the probabilities of the classifier that sees only
the state's sensors. It does not depend on acquisition costs, so one fitted
bank serves every ``cost_scale``. Three kinds (:data:`BANK_KINDS`, built by
:func:`make_bank`): a model per state (``"per_subset"``, ``"hgb"``) or one
missing-value-capable model for all states (``"masked"``).
:class:`RegressorBank` is the regression twin of :class:`ClassifierBank`.
"""

from ._base import SERVE_MODES, BaseBank, proba_at_every_state, row_blocks
from ._masked import MAX_STACK_ROWS, MaskedBank
from ._models import MAX_ROUNDS, boosting_classifier, default_classifier
from ._per_state import (
    AUTO_MASKED_MIN_STATES,
    BANK_KINDS,
    DEFAULT_BANK_KIND,
    ClassifierBank,
    RegressorBank,
    default_regressor,
    make_bank,
    resolve_bank_kind,
)
from ._regressor_models import REGRESSOR_KINDS, regressor_template
from ._sparse import SparseMaskedBank

__all__ = [
    "AUTO_MASKED_MIN_STATES",
    "BANK_KINDS",
    "DEFAULT_BANK_KIND",
    "MAX_ROUNDS",
    "MAX_STACK_ROWS",
    "REGRESSOR_KINDS",
    "SERVE_MODES",
    "BaseBank",
    "ClassifierBank",
    "MaskedBank",
    "RegressorBank",
    "SparseMaskedBank",
    "boosting_classifier",
    "default_classifier",
    "default_regressor",
    "make_bank",
    "proba_at_every_state",
    "regressor_template",
    "resolve_bank_kind",
    "row_blocks",
]
