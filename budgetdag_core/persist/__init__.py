"""Policy files: save and load fitted models, check them, bring old ones up to date.

Two formats: skops (:func:`save_policy_skops`, loads without running code from
the file) and pickle (:func:`save_policy`, for trusted files). Either loader
checks the model's arrays before returning it and upgrades models written by
older versions (see ``_compat``). Every file is written whole or not at all
(:func:`atomic_write`).
"""

from .._bounded_io import atomic_write
from .._integrity import IntegrityError
from ._integrity import check_model_integrity
from ._io import (
    FORMAT_VERSION,
    PICKLE_FORMAT_VERSION,
    SKOPS_TRUSTED_TYPES,
    TRAINING_ONLY_ATTRS,
    PolicyVersionWarning,
    dumps_policy,
    dumps_policy_skops,
    load_policy,
    load_policy_skops,
    loads_policy,
    loads_policy_skops,
    policy_bundle,
    save_policy,
    save_policy_skops,
)

__all__ = [
    "FORMAT_VERSION",
    "PICKLE_FORMAT_VERSION",
    "SKOPS_TRUSTED_TYPES",
    "TRAINING_ONLY_ATTRS",
    "IntegrityError",
    "PolicyVersionWarning",
    "atomic_write",
    "check_model_integrity",
    "dumps_policy",
    "dumps_policy_skops",
    "load_policy",
    "load_policy_skops",
    "loads_policy",
    "loads_policy_skops",
    "policy_bundle",
    "save_policy",
    "save_policy_skops",
]
