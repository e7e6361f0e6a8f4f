"""The classifier bank: class probabilities at every DAG state, with out-of-fold copies.

A bank maps (rows, state) to the probabilities of the classifier that sees only
the state's sensors. It does not depend on acquisition costs, so one fitted
bank serves every ``cost_scale``. The kinds (:data:`BANK_KINDS`, built by
:func:`make_bank`): a model per state (``"per_subset"``, ``"hgb"``) or one
model for all states on masked rows (``"masked"``: boosting;
``"masked_mlp"``, ``"masked_logistic"``: a network or a logistic regression
on the mask encoding). A sparse DAG's bank (``make_sparse_bank``) is one
of the masked kinds, or with ``"auto"`` (``DedicatedMaskedBank``, an
``AutoMaskedBank``) the one that scores best on validation rows, with a
dedicated all-sensor model blended in where the out-of-fold rows say so.
:class:`RegressorBank` is the regression twin of :class:`ClassifierBank`, and
``SparseRegressorBank`` (a masked boosting or ridge regressor per fold, any
sensor subset) the twin of a sparse DAG's bank.
"""

from ._auto import (
    AUTO_NEURAL_MAX_ROWS,
    SPARSE_BANK_KINDS,
    AutoMaskedBank,
)
from ._base import SERVE_MODES, BaseBank, proba_at_every_state, row_blocks
from ._dedicated import DedicatedMaskedBank, make_sparse_bank
from ._encoded import MASKED_KINDS, MaskEncodedClassifier, masked_template
from ._masked import MAX_STACK_ROWS, SPARSE_FIT_PAIRS, MaskedBank, subsets_per_row
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
from ._sparse_regressor import (
    SPARSE_REGRESSOR_KINDS,
    MaskEncodedRegressor,
    SparseRegressorBank,
)

__all__ = [
    "BANK_KINDS",
    "ClassifierBank",
    "MaskedBank",
    "RegressorBank",
    "make_bank",
]
