"""Mask-encoded models for the masked banks: a small neural network or a
logistic regression on AFABench's encoding of a partly observed row.

A masked bank hands its model rows whose unacquired columns are NaN. Trees
route NaN natively; a neural network or a linear model needs numbers, so
:class:`MaskEncodedClassifier` encodes each row as its standardised values
times the mask (an unobserved value is 0, the mean; outliers compressed)
followed by the mask itself (1 where the column was observed), the encoding
of AFABench's masked classifiers. The mask inputs let the model tell
"observed at the mean" from "not observed", and learn how each subset shifts
the evidence.

Few rows and many sensors are where this pays: boosting one model on a few
hundred rows under random masks learns interactions poorly (issue 30), while a
network trained on the same masks shares what it learns across subsets.

The fitted model keeps plain arrays (weights, standardisation), not the
scikit-learn estimator that trained it: prediction is a few matrix products,
and a policy file holds nothing a loader must trust beyond arrays whose shapes
:meth:`MaskEncodedClassifier.check_integrity` checks.
"""

from __future__ import annotations

import copy
import weakref
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

from .._integrity import check_array, fail
from ..validation import int_seed
from ._network import ReluNetwork, zero_subnormals

#: The models a :class:`MaskEncodedClassifier` can train.
ENCODED_MODELS = ("mlp", "logistic")
#: Standardised values beyond this many standard deviations are compressed
#: logarithmically (see :func:`encode`).
OUTLIER_Z = 3.0
#: Probability floor of the validation log loss that early stopping reads.
_EPS = 1e-15
#: (row, mask) pairs :meth:`MaskEncodedClassifier.proba_under_masks` scores
#: at once (bounds its memory: a few arrays of this many first-layer rows).
MASKED_BLOCK_PAIRS = 16_384
#: Each fitted model's float32 weights (not part of the model: not saved).
_SINGLE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Most columns a mask may add to those every mask keeps for
#: :meth:`MaskEncodedClassifier.proba_under_masks` to add them one by one.
FEW_EXTRA_COLUMNS = 4
#: Most single masks whose terms a fitted model keeps (see
#: :meth:`MaskEncodedClassifier._mask_terms`).
MAX_KEPT_MASKS = 4096


def single_precision(a: np.ndarray) -> np.ndarray:
    """A float32 copy of ``a``, its subnormal values zero
    (``zero_subnormals``: a weight of a
    network fitted before its training zeroed them, or converted from
    float64, can land there; the products then run several times slower,
    to the same outputs).

    Examples
    --------
    >>> single_precision(np.array([1e-40, -1e-39, 0.5, 1e-30])).tolist()
    [0.0, 0.0, 0.5, 1.0000000031710769e-30]
    """
    return zero_subnormals(np.array(a, dtype=np.float32))


def encode(X: np.ndarray, center: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """AFABench's encoding: standardised values times the mask, then the mask.

    Beyond ``OUTLIER_Z`` standard deviations a value grows logarithmically:
    heavy-tailed counts (spam's word frequencies) otherwise swamp a network's
    and a logistic regression's inputs (spam, 400 rows, random masks: test
    log loss 0.43 / 0.49 plain, 0.37 / 0.41 compressed; digits and CUBE-NM
    unchanged within 0.01)."""
    observed = ~np.isnan(X)
    z = (np.nan_to_num(X) - center) / scale
    size = np.abs(z)
    tail = size > OUTLIER_Z
    if tail.any():
        z[tail] = np.sign(z[tail]) * (OUTLIER_Z + np.log1p(size[tail] - OUTLIER_Z))
    values = np.where(observed, z, 0.0)
    return np.hstack([values, observed.astype(float)])


def observed_moments(
    X: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of each column's observed (non-NaN)
    values: the standardisation of :func:`encode` (a scale of 1 where a
    column's observed values are constant; ``sample_weight``: row i counts
    that many times)."""
    observed = ~np.isnan(X)
    values = np.where(observed, X, 0.0)
    if sample_weight is None:
        counts = observed.sum(axis=0)
        center = values.sum(axis=0) / np.maximum(counts, 1)
        spread = np.where(observed, values - center, 0.0)
        scale = np.sqrt((spread**2).sum(axis=0) / np.maximum(counts, 1))
        return center, np.where(scale > 0, scale, 1.0)
    w = np.asarray(sample_weight, dtype=float)[:, None] * observed
    counts = w.sum(axis=0)
    safe = np.where(counts > 0, counts, 1.0)
    center = (w * values).sum(axis=0) / safe
    spread = np.where(observed, values - center, 0.0)
    scale = np.sqrt((w * spread**2).sum(axis=0) / safe)
    return center, np.where(scale > 0, scale, 1.0)


def compressed_values(X: np.ndarray, center: np.ndarray, scale: np.ndarray):
    """The value half of :func:`encode` of rows ``X`` seen whole (no NaN):
    standardised, outliers compressed, before any mask multiplies it."""
    z = (X - center) / scale
    size = np.abs(z)
    tail = size > OUTLIER_Z
    if tail.any():
        z[tail] = np.sign(z[tail]) * (OUTLIER_Z + np.log1p(size[tail] - OUTLIER_Z))
    return z


def check_width(X: np.ndarray, n_features_in: int) -> None:
    """Refuse rows ``X`` (2-D) whose width is not the fitted model's."""
    if X.ndim != 2 or X.shape[1] != n_features_in:
        raise ValueError(
            f"X has {X.shape[-1]} columns; the model was fitted on {n_features_in}."
        )


def check_standardisation(model: Any) -> int:
    """Check a mask-encoded model's ``n_features_in_`` and its
    standardisation (``center_``, ``scale_``: finite, positive scales);
    returns the width."""
    width = getattr(model, "n_features_in_", None)
    if not isinstance(width, int | np.integer) or width < 1:
        raise fail("n_features_in_", "expected a positive integer")
    for name in ("center_", "scale_"):
        check_array(
            getattr(model, name, None), name, shape=(width,), kind="f", finite=True
        )
    if (model.scale_ <= 0).any():
        raise fail("scale_", "scales must be positive")
    return int(width)


def _log_loss(
    proba: np.ndarray,
    classes: np.ndarray,
    y: np.ndarray,
    weight: np.ndarray | None = None,
) -> float:
    """Mean negative log probability of ``y`` (rows of unseen labels skipped;
    ``weight``: row i counts that many times)."""
    idx = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    known = classes[idx] == y
    if not known.any():
        return float("inf")
    p = proba[np.flatnonzero(known), idx[known]]
    if weight is not None:
        w = np.asarray(weight, dtype=float)[known]
        if w.sum() <= 0:
            return float("inf")
        return float(-np.average(np.log(np.clip(p, _EPS, 1.0)), weights=w))
    return float(-np.mean(np.log(np.clip(p, _EPS, 1.0))))


class MaskEncodedClassifier(ClassifierMixin, BaseEstimator):
    """A classifier of partly observed rows (NaN = not acquired), on the
    standardised-values-times-mask encoding plus the mask.

    Parameters
    ----------
    model : {"mlp", "logistic"}, default="mlp"
        ``"mlp"``: a ReLU network trained by Adam in float32 (``ReluNetwork``:
        ``MLPClassifier``'s arithmetic without its per-batch overhead), one
        epoch at a time and stopped on validation rows; ``"logistic"``:
        ``LogisticRegression`` (L2, lbfgs).
    hidden_layer_sizes : tuple of int, default=(64, 64)
        The network's hidden layers (``"mlp"``).
    alpha : float, default=1.0
        The network's L2 penalty (``"mlp"``; scikit-learn's scaling, per
        mini-batch row). Strong: with a few hundred rows under random masks a
        weaker penalty stopped after a few epochs at a higher validation loss.
    C : float, default=1.0
        Inverse L2 penalty of the logistic regression (``"logistic"``).
    learning_rate_init, batch_size
        Adam's step size and mini-batch rows (``"mlp"``). The defaults (with
        ``mask_dropout``) were picked on digits at 400 and 1 100 rows under
        random masks: test log loss 0.73 and 0.56 against 0.81 and 0.59 for
        the masked LightGBM model, at 1 to 2.5 times its fit time.
    max_iter : int, default=200
        Most epochs (``"mlp"``) or lbfgs iterations (``"logistic"``).
    early_stopping : bool, default=True
        (``"mlp"``) Stop when the log loss on validation rows has not improved
        for ``n_iter_no_change`` epochs, and keep the best epoch's weights.
        The validation rows are ``fit``'s ``X_val``/``y_val`` (a masked bank
        passes whole held-out rows under their masks, so no replica of a
        training row validates), else a random ``validation_fraction`` of the
        rows given.
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=8
    tol : float, default=1e-4
        Smallest drop of the validation log loss that counts as progress.
    mask_dropout : float, default=0.5
        (``"mlp"``) Each epoch, each row hides each observed value with a
        probability drawn uniformly up to this (fresh masks every epoch).
    random_state : int or None
        Seeds the network's initial weights, the epochs' shuffling and the
        validation split: the same data and seed give the same weights.

    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    center_, scale_ : ndarray (n_features,)
        Mean and standard deviation of each column's observed values.
    coefs_, intercepts_ : list of ndarray
        The layers' weights (one layer for the logistic regression); the
        output is a logistic unit with two classes, a softmax beyond.
    n_iter_ : int
        Epochs of the kept weights (``"mlp"``), lbfgs iterations
        (``"logistic"``).
    validation_loss_ : float
        Log loss of the kept weights on the validation rows (NaN without).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> X[rng.random(X.shape) < 0.3] = np.nan  # unacquired values
    >>> model = MaskEncodedClassifier("logistic").fit(X, y)
    >>> model.predict_proba(X[:2]).shape
    (2, 2)
    """

    def __init__(
        self,
        model: str = "mlp",
        *,
        hidden_layer_sizes: tuple[int, ...] = (64, 64),
        alpha: float = 1.0,
        C: float = 1.0,
        learning_rate_init: float = 5e-3,
        batch_size: int = 256,
        max_iter: int = 200,
        early_stopping: bool = True,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 8,
        tol: float = 1e-4,
        mask_dropout: float = 0.5,
        random_state: int | None = None,
    ) -> None:
        self.model = model
        self.hidden_layer_sizes = hidden_layer_sizes
        self.alpha = alpha
        self.C = C
        self.learning_rate_init = learning_rate_init
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.mask_dropout = mask_dropout
        self.random_state = random_state

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        X: Any,
        y: Any,
        X_val: Any = None,
        y_val: Any = None,
        sample_weight: Any = None,
        sample_weight_val: Any = None,
    ) -> MaskEncodedClassifier:
        """Fit on rows ``X`` (NaN: not observed); ``X_val``/``y_val``: the
        rows early stopping validates on (see ``early_stopping``).
        ``sample_weight`` (and ``sample_weight_val`` of the validation
        rows): row i's log loss counts that many times, in the
        standardisation, the fit and early stopping's validation loss."""
        if self.model not in ENCODED_MODELS:
            raise ValueError(
                f"model must be one of {list(ENCODED_MODELS)}; got {self.model!r}."
            )
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        w = None if sample_weight is None else np.asarray(sample_weight, float)
        self.classes_ = np.unique(y)
        self.n_features_in_ = X.shape[1]
        center, self.scale_ = observed_moments(X, w)
        self.center_ = center
        self.validation_loss_ = float("nan")
        if len(self.classes_) == 1:  # nothing to learn: the one class
            self.coefs_, self.intercepts_, self.n_iter_ = [], [], 0
            return self
        if self.model == "logistic":
            Z = encode(X, self.center_, self.scale_)
            fitted = LogisticRegression(C=self.C, max_iter=self.max_iter).fit(
                Z, y, sample_weight=w
            )
            self.coefs_ = [fitted.coef_.T.copy()]
            self.intercepts_ = [fitted.intercept_.copy()]
            self.n_iter_ = int(np.max(fitted.n_iter_))
            return self
        val = None
        if X_val is not None and len(X_val):
            val = (
                encode(np.asarray(X_val, float), center, self.scale_),
                y_val,
                None
                if w is None or sample_weight_val is None
                else np.asarray(sample_weight_val, float),
            )
        elif self.early_stopping:
            X, y, w, val = self._split(X, y, w)
        self._fit_network(X, y, val, w)
        return self

    def _split(
        self, X: np.ndarray, y: np.ndarray, w: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, tuple | None]:
        """A random ``validation_fraction`` of the rows held out (none when
        that would leave a class out of training), with their weights."""
        rng = np.random.default_rng(int_seed(self.random_state))
        n_val = int(round(self.validation_fraction * len(X)))
        held = np.zeros(len(X), dtype=bool)
        held[rng.permutation(len(X))[:n_val]] = True
        if not n_val or len(np.unique(y[~held])) < len(self.classes_):
            return X, y, w, None
        Zv = encode(X[held], self.center_, self.scale_)
        if w is None:
            return X[~held], y[~held], None, (Zv, y[held], None)
        return X[~held], y[~held], w[~held], (Zv, y[held], w[held])

    def _fit_network(
        self,
        X: np.ndarray,
        y: np.ndarray,
        val: tuple | None,
        w: np.ndarray | None = None,
    ) -> None:
        """Epochs of Adam, keeping the weights of the best validation epoch.

        Each epoch hides a fresh random share of each row's observed values
        (up to ``mask_dropout``): a row under a smaller mask is another state
        the bank serves, and new masks every epoch keep the network from
        memorising a few hundred rows' fixed replicas (AFABench draws a mask
        per batch)."""
        d = X.shape[1]
        observed = ~np.isnan(X)
        values = compressed_values(np.nan_to_num(X), self.center_, self.scale_)
        values = values.astype(np.float32)
        net = ReluNetwork(
            (2 * d, *self.hidden_layer_sizes, 1 if len(self.classes_) == 2 else
             len(self.classes_)),
            alpha=self.alpha,
            learning_rate=self.learning_rate_init,
            batch_size=min(int(self.batch_size), len(X)),
            seed=int_seed(self.random_state) or 0,
        )  # fmt: skip
        Y = net.targets(np.searchsorted(self.classes_, y))
        # Weights of mean one: a mini-batch's step is the weighted rows' mean
        # gradient on the scale of the unweighted one's.
        row_weight = None if w is None else (w / w.mean()).astype(np.float32)
        Z = np.empty((len(X), 2 * d), dtype=np.float32)
        rng = np.random.default_rng([int_seed(self.random_state) or 0, 1])
        stop = self.early_stopping and val is not None
        best: tuple | None = None
        best_loss, since = float("inf"), 0
        epochs = 0
        for epochs in range(1, int(self.max_iter) + 1):
            seen = observed
            if self.mask_dropout > 0:
                rate = rng.uniform(0.0, self.mask_dropout, size=(len(X), 1))
                seen = observed & ~(rng.random(X.shape, dtype=np.float32) < rate)
            np.multiply(values, seen, out=Z[:, :d])
            Z[:, d:] = seen
            net.epoch(Z, Y, row_weight)
            if not stop:
                continue
            self.coefs_, self.intercepts_ = net.coefs, net.intercepts
            loss = _log_loss(
                self._proba(val[0]), self.classes_, np.asarray(val[1]), val[2]
            )
            if loss < best_loss - self.tol:
                best = (copy.deepcopy(net.coefs), copy.deepcopy(net.intercepts))
                best_loss, since, self.n_iter_ = loss, 0, epochs
            else:
                since += 1
                if since >= self.n_iter_no_change:
                    break
        if best is None:
            best = (net.coefs, net.intercepts)
            self.n_iter_ = epochs
        self.coefs_ = [np.asarray(w, dtype=float) for w in best[0]]
        self.intercepts_ = [np.asarray(b, dtype=float) for b in best[1]]
        if stop:
            self.validation_loss_ = best_loss

    # ------------------------------------------------------------ inference
    def _proba(self, Z: np.ndarray) -> np.ndarray:
        """The network's class probabilities of encoded rows ``Z``."""
        return self._head(Z @ self.coefs_[0] + self.intercepts_[0])

    def _head(
        self,
        out: np.ndarray,
        coefs: list[np.ndarray] | None = None,
        intercepts: list[np.ndarray] | None = None,
    ) -> np.ndarray:
        """Class probabilities from the first layer's pre-activations ``out``
        (overwritten: every caller's is a temporary), through the later
        layers (``coefs``, ``intercepts``; default: the fitted ones). In
        place where the dtypes allow: the same arithmetic as new arrays,
        with less memory traffic (the heads of a growth's pairs)."""
        coefs = self.coefs_[1:] if coefs is None else coefs
        intercepts = self.intercepts_[1:] if intercepts is None else intercepts
        for W, b in zip(coefs, intercepts, strict=True):
            np.maximum(out, 0.0, out=out)
            out = out @ W
            if out.dtype == np.result_type(out, b):
                out += b
            else:
                out = out + b
        if out.shape[1] == 1:
            p = expit(out[:, 0])
            return np.column_stack([1.0 - p, p])
        out -= out.max(axis=1, keepdims=True)
        np.exp(out, out=out)
        out /= out.sum(axis=1, keepdims=True)
        return out

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (columns in ``classes_`` order) of rows ``X``."""
        X = np.asarray(X, dtype=float)
        check_width(X, self.n_features_in_)
        if not self.coefs_:
            return np.ones((len(X), 1))
        return self._proba(encode(X, self.center_, self.scale_))

    def proba_of_columns(self, values: Any, present: Any) -> np.ndarray:
        """:meth:`predict_proba` of rows with only the columns where
        ``present`` is true acquired (the others NaN), given just those
        columns' ``values`` (n_rows, present.sum()), and multiplying only
        them: a state of a few sensors among many costs a few columns'
        products, not every column's (the same float64 arithmetic, summed in
        another order)."""
        present = np.asarray(present, dtype=bool)
        if present.shape != (self.n_features_in_,):
            raise ValueError(
                f"present has shape {present.shape}; the model was fitted on "
                f"{self.n_features_in_} columns."
            )
        cols = np.flatnonzero(present)
        values = np.asarray(values, dtype=float)
        if values.ndim != 2 or values.shape[1] != len(cols):
            raise ValueError(
                f"values has {values.shape[-1]} columns; present holds {len(cols)}."
            )
        if not self.coefs_:
            return np.ones((len(values), 1))
        d = self.n_features_in_
        W, b = self.coefs_[0], self.intercepts_[0]
        observed = ~np.isnan(values)
        z = compressed_values(
            np.nan_to_num(values), self.center_[cols], self.scale_[cols]
        )
        pre = np.where(observed, z, 0.0) @ W[cols] + b
        if observed.all():
            pre += W[d + cols].sum(axis=0)
        else:
            pre += observed.astype(float) @ W[d + cols]
        return self._head(pre)

    def _single_precision(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The layers' weights in float32, converted once per fitted model."""
        cached = self._single_cache()
        return cached[1], cached[2]

    def _single_cache(self) -> tuple[Any, list, list, dict]:
        """(fitted weights, float32 weights, float32 intercepts, the terms
        of single masks): kept per fitted model, anew after a refit."""
        cached = _SINGLE.get(self)
        if cached is None or cached[0] is not self.coefs_:
            cached = (
                self.coefs_,
                [single_precision(W) for W in self.coefs_],
                [single_precision(b) for b in self.intercepts_],
                {},
            )
            _SINGLE[self] = cached
        return cached

    def _mask_terms(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
        """A column mask's columns, the first layer's value rows of them and
        the mask's own term (with the bias), float32, as
        :meth:`proba_under_masks` computes them for a call of this mask
        alone; kept per model (a walk asks the same states again and
        again, a few rows at a time)."""
        _, coefs, intercepts, terms = self._single_cache()
        key = mask.tobytes()
        kept = terms.get(key)
        if kept is None:
            d = len(mask)
            top, bottom = coefs[0][:d], coefs[0][d:]
            masks = mask[None]
            mask_term = masks.astype(np.float32) @ bottom + intercepts[0]
            kept = (np.flatnonzero(mask), top[mask], mask_term)
            if len(terms) >= MAX_KEPT_MASKS:  # bounded: start again
                terms.clear()
            terms[key] = kept
        return kept

    def proba_under_masks(self, X: Any, column_masks: Any) -> np.ndarray:
        """Class probabilities of each row of ``X`` under each column mask,
        (n_rows, n_masks, n_classes): :meth:`predict_proba` of the rows with
        the columns outside the mask set to NaN, without building that stack.

        Row i's first-layer input under mask m is ``[z_i * m, m]``; its product
        with the weights splits into z_i's product over the columns every
        mask keeps (once per row), the mask's own term (once per mask), and
        the columns a mask adds to the shared ones: one rank-one term each
        when every mask adds few (a sparse DAG's candidate sensors), else one
        product over those columns. Computed in float32: equal to
        :meth:`predict_proba` within single precision's rounding.
        """
        X = np.asarray(X, dtype=float)
        masks = np.atleast_2d(np.asarray(column_masks, dtype=bool))
        n, K = len(X), len(masks)
        if not self.coefs_:
            return np.ones((n, K, 1))
        if np.isnan(X).any():  # a row's own gaps: the input differs per pair
            Xs = np.tile(X, (K, 1))
            Xs[~np.repeat(masks, n, axis=0)] = np.nan
            return self.predict_proba(Xs).reshape(K, n, -1).swapaxes(0, 1)
        if K == 1 and masks.shape[1] == X.shape[1]:
            return self._proba_under_mask(X, masks[0])
        d = X.shape[1]
        # float32: the products of many (row, mask) pairs are most of a sparse
        # DAG's growth; its probabilities only rank and calibrate.
        coefs, intercepts = self._single_precision()
        z = compressed_values(X, self.center_, self.scale_).astype(np.float32)
        top, bottom = coefs[0][:d], coefs[0][d:]
        mask_term = masks.astype(np.float32) @ bottom + intercepts[0]  # (K, H)
        common = masks.all(axis=0)
        extra = masks & ~common
        row_term = z[:, common] @ top[common]  # (n, H)
        H = top.shape[1]
        counts = extra.sum(axis=1)
        most = int(counts.max())
        few = most <= FEW_EXTRA_COLUMNS
        if few and most:  # each mask's added columns, padded with a zero column d
            first = np.argsort(~extra, axis=1, kind="stable")[:, :most]
            idx = np.where(np.arange(most) < counts[:, None], first, d)
            z = np.hstack([z, np.zeros((n, 1), dtype=np.float32)])
            top = np.vstack([top, np.zeros((1, H), dtype=np.float32)])
        used = np.flatnonzero(extra.any(axis=0))
        out = np.empty((n, K, len(self.classes_)))
        size = max(1, MASKED_BLOCK_PAIRS // K)
        for start in range(0, n, size):
            r = slice(start, start + size)
            pre = row_term[r, None, :] + mask_term[None, :, :]
            if few and most:
                for e in range(most):
                    pre += z[r][:, idx[:, e], None] * top[idx[:, e]][None]
            elif not few:
                Zu = z[r][:, None, used] * extra[None, :, used]
                pre += (Zu.reshape(-1, used.size) @ top[used]).reshape(-1, K, H)
            head = self._head(pre.reshape(-1, H), coefs[1:], intercepts[1:])
            out[r] = head.reshape(-1, K, out.shape[2])
        return out

    def proba_of_pairs(self, X: Any, column_masks: Any) -> np.ndarray:
        """Class probabilities of each row of ``X`` under its own column mask
        (row i under ``column_masks[i]``), (n_rows, n_classes): what
        :meth:`proba_under_masks` gives each (row, mask) pair, in one product
        for pairs of many masks (a rollout's rows at the states they reached),
        in float32 as it computes, the columns outside a row's mask adding
        zeros (equal within single precision's rounding).
        """
        X = np.asarray(X, dtype=float)
        masks = np.asarray(column_masks, dtype=bool)
        if masks.shape != X.shape:
            raise ValueError(f"expected one mask per row, got {masks.shape}")
        if not self.coefs_:
            return np.ones((len(X), 1))
        if np.isnan(X).any():  # a row's own gaps: the input of predict_proba
            Xs = X.copy()
            Xs[~masks] = np.nan
            return self.predict_proba(Xs)
        d = X.shape[1]
        coefs, intercepts = self._single_precision()
        top, bottom = coefs[0][:d], coefs[0][d:]
        out = np.empty((len(X), len(self.classes_)))
        for start in range(0, len(X), MASKED_BLOCK_PAIRS):
            r = slice(start, start + MASKED_BLOCK_PAIRS)
            m = masks[r]
            z = compressed_values(X[r], self.center_, self.scale_).astype(np.float32)
            z[~m] = 0.0
            pre = z @ top + m.astype(np.float32) @ bottom + intercepts[0]
            out[r] = self._head(pre, coefs[1:], intercepts[1:])
        return out

    def _proba_under_mask(self, X: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """:meth:`proba_under_masks` of one mask (rows without NaN): the same
        float32 products (every column it keeps is common, none extra), with
        the mask's terms kept (:meth:`_mask_terms`) and only its columns
        standardised (elementwise: the same values)."""
        coefs, intercepts = self._single_precision()
        cols, top, mask_term = self._mask_terms(mask)
        z = compressed_values(X[:, cols], self.center_[cols], self.scale_[cols])
        row_term = z.astype(np.float32) @ top  # (n, H)
        H = top.shape[1]
        out = np.empty((len(X), 1, len(self.classes_)))
        for start in range(0, len(X), MASKED_BLOCK_PAIRS):
            r = slice(start, start + MASKED_BLOCK_PAIRS)
            pre = row_term[r, None, :] + mask_term[None, :, :]
            head = self._head(pre.reshape(-1, H), coefs[1:], intercepts[1:])
            out[r] = head.reshape(-1, 1, out.shape[2])
        return out

    def predict(self, X: Any) -> np.ndarray:
        """The most probable class of each row of ``X``."""
        return self.classes_[self.predict_proba(X).argmax(axis=1)]

    # ------------------------------------------------------------ integrity
    def check_integrity(self) -> None:
        """Raise ``ValueError`` unless the fitted arrays chain: standardisation
        of ``n_features_in_`` columns, layers from twice that width to one
        output per class (one with two classes), finite weights."""
        width = check_standardisation(self)
        classes = check_array(
            getattr(self, "classes_", None), "classes_", shape=(None,)
        )
        coefs, intercepts = (
            getattr(self, "coefs_", None),
            getattr(self, "intercepts_", None),
        )
        if not isinstance(coefs, list) or not isinstance(intercepts, list):
            raise fail("coefs_", "expected lists of layer weights")
        if len(coefs) != len(intercepts):
            raise fail("intercepts_", f"{len(intercepts)} layers, {len(coefs)} weights")
        if not coefs:
            if len(classes) != 1:
                raise fail("coefs_", "no layers for several classes")
            return
        n_out = 1 if len(classes) == 2 else len(classes)
        rows = 2 * int(width)
        for i, (W, b) in enumerate(zip(coefs, intercepts, strict=True)):
            cols = n_out if i == len(coefs) - 1 else None
            W = check_array(
                W, f"coefs_[{i}]", shape=(rows, cols), kind="f", finite=True
            )
            check_array(
                b, f"intercepts_[{i}]", shape=(W.shape[1],), kind="f", finite=True
            )
            rows = W.shape[1]


#: Training rows from which ``"auto"``'s network is penalised less
#: (:data:`LARGE_TABLE_ALPHA`): the defaults were tuned on a few hundred rows,
#: where a strong penalty pays; with thousands of rows it underfits (CUBE-NM
#: with 5 000 rows). The benchmarks' smaller tables keep their model.
LARGE_TABLE_ROWS = 4_000
#: The network's L2 penalty on :data:`LARGE_TABLE_ROWS` rows or more (weaker
#: still was worse on CUBE-NM with 5 000 rows).
LARGE_TABLE_ALPHA = 0.1
#: Epochs without progress before the network stops on that many rows: a
#: weaker penalty's validation loss is noisier from epoch to epoch, and the
#: small-table patience stopped it before its best epoch.
LARGE_TABLE_PATIENCE = 12


def masked_neural_classifier(
    random_state: int | None = None, n_rows: int | None = None
) -> MaskEncodedClassifier:
    """The ``"masked_mlp"`` bank's model: two ReLU layers of 64 on the
    mask encoding, Adam, stopped on held-out rows after 8 epochs without
    progress; on ``n_rows`` training rows of at least
    :data:`LARGE_TABLE_ROWS`, a weaker penalty and more patience
    (:data:`LARGE_TABLE_ALPHA`, :data:`LARGE_TABLE_PATIENCE`)."""
    if n_rows is not None and n_rows >= LARGE_TABLE_ROWS:
        return MaskEncodedClassifier(
            "mlp",
            alpha=LARGE_TABLE_ALPHA,
            n_iter_no_change=LARGE_TABLE_PATIENCE,
            random_state=random_state,
        )
    return MaskEncodedClassifier("mlp", random_state=random_state)


def masked_logistic_classifier(
    random_state: int | None = None,
) -> MaskEncodedClassifier:
    """The ``"masked_logistic"`` bank's model: an L2 logistic regression on the
    mask encoding (cheap; no interactions beyond what the mask inputs shift)."""
    return MaskEncodedClassifier(
        "logistic", early_stopping=False, max_iter=1000, random_state=random_state
    )


#: The any-subset masked bank kinds: one model for every sensor subset.
MASKED_KINDS = ("masked", "masked_mlp", "masked_logistic")


def masked_template(
    kind: str, random_state: int | None = None, n_rows: int | None = None
) -> Any:
    """The model of the masked bank kind ``kind`` (one of :data:`MASKED_KINDS`)
    for ``n_rows`` training rows (None: the small-table model)."""
    from ._models import masked_classifier

    if kind == "masked":
        return masked_classifier(random_state)
    if kind == "masked_mlp":
        return masked_neural_classifier(random_state, n_rows)
    if kind == "masked_logistic":
        return masked_logistic_classifier(random_state)
    raise ValueError(
        f"Unknown masked bank kind {kind!r}; choose from {list(MASKED_KINDS)}."
    )
