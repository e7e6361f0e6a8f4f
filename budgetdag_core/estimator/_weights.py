"""``sample_weight`` of the estimators' ``fit``: checked, lined up with X's
rows, and refused where a part of the fit cannot take it.

A row of weight w counts as w copies of it: in the bank (each model's
``sample_weight``, the calibration, the prior), in the states' choice
(Alg. 2's subset scores; the many-sensor strategies' gains and the
validation choice among them) and in Graph-Reduce (a row's action costs
count w times at each node it reaches). The folds are those of
the rows, so weights equal row copies exactly at the node level
(``graph_reduce``) and in behaviour at the estimator's (a row of weight 0 is
as if removed, up to the folds it sits in).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import is_classifier

from ..validation import align_rows, check_sample_weight


def fit_sample_weight(
    est: Any, X: Any, sample_weight: Any, spec: Any, y_fit: np.ndarray
) -> np.ndarray | None:
    """The checked weights of a fit (None: unweighted, or all ones), in the
    order of X's rows (a Series goes by X's index, as ``y`` does).

    Raises
    ------
    ValueError
        Naming the row and value (negative, NaN, infinite), the lengths, or
        the part of the fit that takes no weights (the plan's
        ``weights_refused``; a bank model or subset scorer without
        ``sample_weight`` is refused as it is fitted); a classifier's weights
        that leave one class only.
    """
    if sample_weight is None:
        return None
    n_rows = len(y_fit)
    # Row labels of a table (a list's ``index`` is a method, not labels).
    labels = X.index if isinstance(X, pd.DataFrame | pd.Series) else None
    w = check_sample_weight(
        align_rows(X, sample_weight, "sample_weight"),
        n_rows,
        None if labels is None else list(labels),
    )
    if w is None:
        return None
    if is_classifier(est):
        classes = np.unique(y_fit[w > 0])
        if len(classes) < 2:
            raise ValueError(
                "sample_weight leaves rows of one class only with a weight "
                f"above zero (class index {int(classes[0])}): a classifier needs "
                "two classes."
            )
    refused = est.fit_plan(spec, n_rows).weights_refused()
    if refused is not None:
        raise ValueError(f"sample_weight: {refused}")
    return w
