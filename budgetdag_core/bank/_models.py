"""Model templates of the banks: the logistic default and short gradient boosting."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.validation import has_fit_parameter

from ._lgbm_trees import LightGBMTrees


def default_classifier() -> Any:
    """Standardised multinomial logistic regression."""
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))


#: Round cap of :func:`boosting_classifier`: a bound, not a setting (early
#: stopping ends the fits well before it).
MAX_ROUNDS = 300
#: Rounds of the default template when a table is too small to validate on:
#: without a stop, the count of rounds is what regularises.
UNSTOPPED_ROUNDS = 100


def boosting_classifier(random_state: int | None = None) -> Any:
    """Gradient boosting tuned for many short fits (the ``"hgb"`` bank).

    LightGBM (:class:`~budgetdag_core.bank._lgbm_trees.LightGBMTrees`, stored as
    validated arrays): learning rate 0.25 on 63 bins per feature, stopped when
    the log loss on the validation rows (a cross-fitted bank's held-out fold)
    has not improved for 5 rounds. The stop decides, not the cap of
    ``MAX_ROUNDS`` rounds: a lower cap cut the strongest states of many-class
    problems (letter) short and cost accuracy, while the other benchmark banks
    stop well before it. Larger steps, fewer bins and less patience fit faster
    for a slightly higher out-of-fold log loss (chosen on the training rows'
    out-of-fold predictions, ``benchmarks/bench_bank_options.py``). The L2
    penalty keeps the large steps stable with many classes. LightGBM fits
    these small problems faster than ``HistGradientBoostingClassifier`` at the
    same accuracy (``benchmarks/bench_fit_predict_speed.py``). Missing values are
    handled natively, so the same template serves the masked bank.
    """
    return LightGBMTrees(
        learning_rate=0.25,
        max_iter=MAX_ROUNDS,
        l2_regularization=1.0,
        early_stopping=True,
        validation_fraction=0.1,
        n_iter_no_change=5,
        max_bins=63,
        random_state=random_state,
    )


def masked_classifier(random_state: int | None = None) -> Any:
    """The masked bank's model: :func:`boosting_classifier`.

    One model learns every state, a harder task than one subset's; its early
    stopping is sound (the bank splits validation rows by original row), so
    the same stop decides its rounds (on letter a 50-round cap cost 0.054 vs
    0.043 test error with all sensors).
    """
    return boosting_classifier(random_state)


def stops_on_given_rows(model: Any) -> bool:
    """True when ``model`` early-stops and accepts its validation rows in ``fit``.

    HistGradientBoosting takes ``X_val``/``y_val``: a cross-fitted bank then
    stops each fold's model on that fold's held-out rows, and the masked bank
    validates on whole rows (replicas of one row under different masks are
    near-duplicates, so a random split of its stack would leak).
    """
    params = model.get_params(deep=False) if hasattr(model, "get_params") else {}
    if params.get("early_stopping") is not True:
        return False
    import inspect

    return "X_val" in inspect.signature(model.fit).parameters


def unstopped(model: Any) -> Any:
    """``model`` (changed in place) without early stopping; the default
    LightGBM template then runs at most ``UNSTOPPED_ROUNDS`` rounds."""
    model.set_params(early_stopping=False)
    if isinstance(model, LightGBMTrees) and model.max_iter > UNSTOPPED_ROUNDS:
        model.set_params(max_iter=UNSTOPPED_ROUNDS)
    return model


def fit_ready(
    template: Any, n_rows: int, n_classes: int, min_class_rows: int | None = None
) -> Any:
    """``template``, without early stopping when its validation split is too small.

    A stratified validation split of ``validation_fraction * n_rows`` rows needs
    a couple of rows per class, and at least two rows of every class
    (``min_class_rows``, the rarest class's rows in the smallest training fold);
    on tiny tables (or folds, or rare classes) scikit-learn raises instead, so
    the template then runs its full ``max_iter`` rounds (the default
    LightGBM template at most ``UNSTOPPED_ROUNDS``).
    """
    params = template.get_params(deep=False) if hasattr(template, "get_params") else {}
    fraction = params.get("validation_fraction")
    if params.get("early_stopping") is True and isinstance(fraction, float):
        too_rare = min_class_rows is not None and min_class_rows < 2
        if fraction * n_rows < 2 * n_classes or too_rare:
            return unstopped(clone(template))
    return template


def fit_weighted(
    model: Any,
    X: np.ndarray,
    y: np.ndarray,
    sample_weight: np.ndarray | None = None,
    val_weight: np.ndarray | None = None,
    **fit_kwargs: Any,
) -> Any:
    """``model.fit(X, y, **fit_kwargs)`` where row i counts
    ``sample_weight[i]`` times (None: each once).

    Rows of weight 0 are left out (as if removed: a histogram model's bins
    and leaf sizes count rows, not weights). The weights go to the model's
    ``sample_weight`` (and the validation rows' ``val_weight`` to its
    ``sample_weight_val`` where it has one); a pipeline's to every step that
    takes them (a scaler's means and variances too). A model whose ``fit``
    takes no weights is refused, naming it.
    """
    if sample_weight is None:
        return model.fit(X, y, **fit_kwargs)
    w = np.asarray(sample_weight, dtype=float)
    keep = w > 0
    if not keep.any():
        raise ValueError(
            "Every training row of one of the bank's fits has sample_weight 0 "
            "(a fold, or a class of a state): give more rows a positive weight."
        )
    if not keep.all():
        X, y, w = X[keep], y[keep], w[keep]
    if isinstance(model, Pipeline):
        routed = {
            f"{name}__sample_weight": w
            for name, step in model.steps
            if step is not None
            and step != "passthrough"
            and has_fit_parameter(step, "sample_weight")
        }
        last = model.steps[-1][0]
        if f"{last}__sample_weight" not in routed:
            raise ValueError(_no_weights(model.steps[-1][1]))
        return model.fit(X, y, **routed, **fit_kwargs)
    if not has_fit_parameter(model, "sample_weight"):
        raise ValueError(_no_weights(model))
    if val_weight is not None and has_fit_parameter(model, "sample_weight_val"):
        fit_kwargs["sample_weight_val"] = val_weight
    return model.fit(X, y, sample_weight=w, **fit_kwargs)


def _no_weights(model: Any) -> str:
    return (
        f"sample_weight: the bank's model {type(model).__name__} takes no "
        "sample_weight in its fit; use a model that does (the default "
        "templates, HistGradientBoosting, LogisticRegression, Ridge, ...) "
        "or fit without weights."
    )


def weighted_prior(
    y: np.ndarray, n_classes: int, sample_weight: np.ndarray | None = None
) -> tuple[np.ndarray, Any]:
    """The class frequencies of ``y`` (row i counting ``sample_weight[i]``
    times) and the fitted prior classifier of the empty state."""
    n = len(y)
    model = DummyClassifier(strategy="prior")
    if sample_weight is None:
        return np.bincount(y, minlength=n_classes) / n, model.fit(np.zeros((n, 1)), y)
    w = np.asarray(sample_weight, dtype=float)
    prior = np.bincount(y, weights=w, minlength=n_classes) / w.sum()
    return prior, fit_weighted(model, np.zeros((n, 1)), y, w)
