"""Save and load fitted policies with the metadata needed to trust and use them."""

from __future__ import annotations

import copy
import pickle
import warnings
from pathlib import Path
from typing import Any

import sklearn

from ._version import __version__

FORMAT_VERSION = 1


class PolicyVersionWarning(UserWarning):
    """A policy file was written by other library versions than those loading it."""


def policy_bundle(model: Any, *, slim: bool = True) -> dict[str, Any]:
    """The dict that :func:`save_policy` pickles.

    With ``slim`` the bank's out-of-fold training predictions are left out: they
    are needed to learn new policies, not to run this one.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)
    heavy = [a for a in ("oof_proba_", "oof_pred_") if hasattr(model.bank_, a)]
    if slim and heavy:
        model = copy.copy(model)
        model.bank_ = copy.copy(model.bank_)
        for attr in heavy:
            delattr(model.bank_, attr)
    classes = getattr(model, "classes_", None)
    return {
        "format_version": FORMAT_VERSION,
        "budgetdag_core_version": __version__,
        "sklearn_version": sklearn.__version__,
        "sensor_spec": model.spec_.to_dict(),
        "feature_columns": list(model.feature_names_in_),
        "task": "classification" if classes is not None else "regression",
        "classes": None if classes is None else list(classes),
        "label": getattr(model, "label_name_", None),
        "model": model,
    }


def save_policy(model: Any, path: str | Path, *, slim: bool = True) -> Path:
    """Pickle a fitted model with format and library versions, spec and classes.

    Works for classifiers and regressors (``"classes"`` is ``None`` for a
    regressor, ``"task"`` says which).
    """
    path = Path(path)
    with path.open("wb") as fh:
        pickle.dump(
            policy_bundle(model, slim=slim), fh, protocol=pickle.HIGHEST_PROTOCOL
        )
    return path


def dumps_policy(model: Any, *, slim: bool = True) -> bytes:
    """:func:`save_policy` to bytes (for downloads)."""
    return pickle.dumps(
        policy_bundle(model, slim=slim), protocol=pickle.HIGHEST_PROTOCOL
    )


def _check_bundle(bundle: Any) -> Any:
    if not isinstance(bundle, dict) or "model" not in bundle:
        raise ValueError("This file is not a BudgetDAG policy (no model bundle).")
    if bundle.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"Policy file format {bundle.get('format_version')!r} is not supported "
            f"(this library reads format {FORMAT_VERSION})."
        )
    found = {
        "budgetdag_core": (bundle.get("budgetdag_core_version"), __version__),
        "scikit-learn": (bundle.get("sklearn_version"), sklearn.__version__),
    }
    for lib, (saved, now) in found.items():
        if saved != now:
            warnings.warn(
                f"Policy saved with {lib} {saved}, loaded with {now}: predictions "
                "may differ.",
                PolicyVersionWarning,
                stacklevel=3,
            )
    model = bundle["model"]
    model.metadata_ = {k: v for k, v in bundle.items() if k != "model"}
    return model


def load_policy(path: str | Path) -> Any:
    """Load a model written by :func:`save_policy`.

    Unpickling runs code from the file: load only files you trust. Warns
    (``PolicyVersionWarning``) when library versions differ from the saved ones.
    """
    with Path(path).open("rb") as fh:
        return _check_bundle(pickle.load(fh))


def loads_policy(data: bytes) -> Any:
    """:func:`load_policy` from bytes. Same trust caveat."""
    return _check_bundle(pickle.loads(data))
