"""Input checks that name the problem (column, row count, value) before training."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils._param_validation import (
    Interval,
    validate_parameter_constraints,
)
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d

# The one reader of environment variables, for the app too (ui/).
from ._bounded_io import env_setting as env_setting
from ._bounded_io import flag as flag
from ._bounded_io import positive_int as positive_int
from ._bounded_io import positive_number as positive_number
from ._bounded_io import short_repr
from .sensors import SensorSpec

MAX_FULL_DAG_SENSORS = 12
#: Most sensors a fit accepts (checked before any work, :func:`check_sensor_count`).
#: Beyond 12 the fit builds DAGs of one-sensor additions whose greedy orders
#: score every sensor left at each step: the work grows about with the
#: square of the sensors. One-column sensors x 300 rows, ``dag="auto"``, on
#: 2 cores shared with a dozen other jobs (``benchmarks/bench_fit_bounds.py``):
#: 20 sensors 17 s, 100 sensors 158 s, 200 sensors 426 s (the routed DAG's
#: part 4.9 times its 100-sensor time) at 0.5 GiB; 1 000 sensors ran past
#: 4 minutes at 2.7 GiB on an idle machine, about 25 times the 200-sensor
#: work. 256 keeps a fit within about 1.6 times the 200-sensor one.
MAX_SENSORS = 256
#: Most sensor subsets (``n_subsets``) a DAG is built over: 2^16 states at most.
MAX_N_SUBSETS = 16
#: Largest magnitude a feature value may have. Squares of larger values overflow
#: float64 (1e154 ** 2 > 1.8e308) in the standardisations of the policies and the
#: subset scorer; 1e150 leaves room for sums over a million rows.
MAX_ABS_VALUE = 1e150
#: Most cross-validation folds (``cv``) of a bank or a subset scorer: each
#: state's model is fitted once per fold, so the fit time grows with ``cv``,
#: while out-of-fold probabilities barely change beyond 20 folds.
MAX_CV = 20


def check_params(caller: str, constraints: Mapping[str, list], **values: Any) -> None:
    """Check a public function's arguments as the estimators'
    ``_parameter_constraints`` are checked.

    ``constraints`` maps a parameter name to its accepted values in
    scikit-learn's vocabulary (``Interval``, ``StrOptions``, types, None),
    e.g. :func:`int_in` and :func:`real_in`; an ``Interval`` refuses NaN,
    infinities (when unbounded) and values of the wrong type.

    Raises
    ------
    ValueError
        (scikit-learn's ``InvalidParameterError``, also a ``TypeError``) naming
        the parameter, ``caller`` and what it accepts.

    Examples
    --------
    >>> check_params("f", {"n": [int_in(2, 10)]}, n=11)
    Traceback (most recent call last):
    ...
    sklearn.utils._param_validation.InvalidParameterError: The 'n' parameter of f \
must be an int in the range [2, 10]. Got 11 instead.
    """
    validate_parameter_constraints(dict(constraints), values, caller_name=caller)


def int_in(low: int = 1, high: int | None = None) -> Interval:
    """Integers from ``low`` to ``high`` (both included; None: unbounded)."""
    return Interval(Integral, low, high, closed="both" if high is not None else "left")


def real_in(
    low: float | None = 0.0, high: float | None = None, closed: str = "left"
) -> Interval:
    """Finite real numbers between ``low`` and ``high`` (None: unbounded);
    ``closed`` as scikit-learn's ``Interval`` ("left", "right", "both",
    "neither")."""
    return Interval(Real, low, high, closed=closed)


def check_index(caller: str, name: str, value: Any, size: int) -> int:
    """``value`` as an index into ``size`` items (a state, a row), or a
    ``ValueError`` / ``TypeError`` naming the parameter; cheap enough for
    calls in loops."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(
            f"The {name!r} parameter of {caller} must be an int in the range "
            f"[0, {size - 1}]. Got {short_repr(value)} instead."
        )
    if not 0 <= value < size:
        raise ValueError(
            f"The {name!r} parameter of {caller} must be an int in the range "
            f"[0, {size - 1}]. Got {short_repr(value)} instead."
        )
    return int(value)


def int_seed(random_state: Any) -> int | None:
    """``random_state`` as scikit-learn takes it (None, an int or a numpy
    ``RandomState``) as an int seed, or None.

    A ``RandomState`` gives the seed it would draw next, without drawing it:
    the parts of a fit (folds, subsets, boosting) all use that one seed, and
    fitting again with the same ``RandomState`` gives the same model, as with
    an int (scikit-learn's own estimators would advance it).
    """
    if random_state is None:
        return None
    if isinstance(random_state, np.random.RandomState):
        peek = copy.deepcopy(random_state)
        return int(peek.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return int(random_state)
    raise ValueError(
        "random_state must be None, an int or a numpy RandomState; got "
        f"{type(random_state).__name__} {short_repr(random_state)}."
    )


def as_spec(sensors: Any) -> SensorSpec:
    """Accept a SensorSpec, a spec dict, or JSON text (never a path: see
    :meth:`SensorSpec.from_file`)."""
    if isinstance(sensors, SensorSpec):
        return sensors
    if isinstance(sensors, Mapping):
        return SensorSpec.from_dict(sensors)
    if isinstance(sensors, str | bytes):
        return SensorSpec.from_json(sensors)
    raise ValueError(
        f"'sensors' must be a SensorSpec, a dict or JSON; got {type(sensors).__name__}."
    )


def _as_array(X: Any) -> np.ndarray:
    """A non-DataFrame ``X`` as a 2-d numeric array, or a clear error."""
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError(
            "Sparse input is not supported (sparse data X): pass a dense array "
            "(X.toarray()) or a DataFrame."
        )
    if isinstance(X, str | bytes | Mapping) or not (
        hasattr(X, "__len__") or hasattr(X, "__array__")
    ):
        raise TypeError(
            "X must be a pandas DataFrame whose column names match the sensor spec, "
            f"or a 2-d array of the spec's columns in order; got {type(X).__name__}."
        )
    try:
        values = np.asarray(X)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X could not be read as a 2-d array: {exc}") from None
    if np.iscomplexobj(values):
        raise ValueError("Complex data not supported: X must hold real numbers.")
    if values.ndim != 2:
        raise ValueError(
            f"X must be 2-d (rows x columns); got an array of shape {values.shape}. "
            "Reshape your data with array.reshape(-1, 1) for a single feature or "
            "array.reshape(1, -1) for a single sample."
        )
    return values


def spec_for(X: Any, cost: float = 1.0) -> SensorSpec:
    """One sensor per column of ``X`` (names of a DataFrame, else ``x0, x1, ...``).

    The spec of an estimator built with ``sensors=None`` (scikit-learn style).
    """
    if isinstance(X, pd.DataFrame):
        columns = [str(c) for c in X.columns]
        shape = X.shape
    else:
        values = _as_array(X)
        columns, shape = [f"x{j}" for j in range(values.shape[1])], values.shape
    if not columns:
        raise ValueError(
            f"0 feature(s) (shape={shape}) while a minimum of 1 is required."
        )
    return SensorSpec.per_column(columns, cost)


def as_frame(X: Any, spec: SensorSpec, owner: str = "the model") -> pd.DataFrame:
    """``X`` as a DataFrame: a DataFrame as is, an array by column position.

    An array (as scikit-learn passes it) must hold the spec's columns in spec
    order (:attr:`SensorSpec.columns`), no more and no fewer.
    """
    if isinstance(X, pd.DataFrame):
        return X
    values = _as_array(X)
    columns = spec.columns
    if values.shape[1] != len(columns):
        shown = columns if len(columns) <= 8 else [*columns[:8], "..."]
        raise ValueError(
            f"X has {values.shape[1]} features, but {owner} is expecting "
            f"{len(columns)} features as input (the sensor spec's columns {shown}): "
            "pass a DataFrame, or an array of exactly the spec's columns in spec "
            "order."
        )
    return pd.DataFrame(values, columns=columns)


#: Why a model refuses missing values unless it says otherwise.
NAN_REFUSED = "this model needs every value"


def check_features(
    X: Any,
    spec: SensorSpec,
    owner: str = "the model",
    *,
    nan_refused: str | None = NAN_REFUSED,
) -> np.ndarray:
    """The spec's columns of ``X`` as a float array, or a ``ValueError``.

    ``X`` is a DataFrame (read by column name) or a 2-d array (read by column
    position, see :func:`as_frame`). A missing value (NaN, a value not
    measured) is kept where ``nan_refused`` is None, else refused with that
    reason, naming the column and the first row; infinite values are always
    refused.
    """
    X = as_frame(X, spec, owner)
    if len(X) == 0:
        raise ValueError("The data is empty (0 rows).")
    if X.columns.duplicated().any():
        dups = sorted(set(map(str, X.columns[X.columns.duplicated()])))
        raise ValueError(f"Duplicate column name(s) in the data: {dups}.")
    _check_text_names(X.columns)
    X = X.rename(columns=str)
    spec.check_columns(X.columns)
    kinds = X.dtypes[list(spec.columns)]
    for col, dtype in kinds.items():
        if getattr(dtype, "kind", None) not in _REAL_KINDS:  # numpy reals pass
            _check_numeric(X[col], col)
    values = X[spec.columns].to_numpy(dtype=float)
    # Two reductions, no temporary array: a NaN makes max and min NaN, which
    # compares False, so NaN, infinite and huge values go on to the checks.
    if values.size and -MAX_ABS_VALUE < values.min() <= values.max() < MAX_ABS_VALUE:
        return values
    infinite = np.isinf(values)
    if infinite.any():
        j = int(np.flatnonzero(infinite.any(axis=0))[0])
        rows = int(infinite[:, j].sum())
        first = int(np.flatnonzero(infinite[:, j])[0])
        raise ValueError(
            f"Column {short_repr(spec.columns[j])} has {rows} row(s) with infinite "
            f"values (first at row {first}): drop them or replace them by NaN (a "
            "value not measured)."
        )
    missing = np.isnan(values)
    if nan_refused is not None and missing.any():
        j = int(np.flatnonzero(missing.any(axis=0))[0])
        rows = int(missing[:, j].sum())
        first = int(np.flatnonzero(missing[:, j])[0])
        raise ValueError(
            f"Column {spec.columns[j]!r} has {rows} row(s) with NaN (missing) "
            f"values (first at row {first}), but {nan_refused}: drop or impute "
            "them, or use a bank that handles missing values (the default)."
        )
    huge = np.abs(np.nan_to_num(values)) >= MAX_ABS_VALUE
    if huge.any():
        j = int(np.flatnonzero(huge.any(axis=0))[0])
        first = int(np.flatnonzero(huge[:, j])[0])
        raise ValueError(
            f"Column {short_repr(spec.columns[j])} has {int(huge[:, j].sum())} "
            "value(s) of "
            f"magnitude >= {MAX_ABS_VALUE:g} (first at row {first}: "
            f"{values[first, j]:g}), too large to square in float64: rescale the "
            "column (e.g. other units) or drop those rows."
        )
    return values


def _check_text_names(columns: pd.Index) -> None:
    """Refuse two columns whose names are the same once written as text (the
    spec names columns by text: ``0`` and ``"0"`` would both be ``"0"``)."""
    seen: dict[str, Any] = {}
    for name in columns:
        text = str(name)
        if text in seen:
            raise ValueError(
                f"Columns {short_repr(seen[text])} and {short_repr(name)} have the "
                "same name once "
                "written as text (the sensor spec names columns by text): rename "
                "one."
            )
        seen[text] = name


#: numpy dtype kinds of real numbers (booleans, integers, floats): a column of
#: one is numeric without a look at its values.
_REAL_KINDS = frozenset("biuf")
#: What pandas infers for an object column whose values are all real numbers
#: (or missing): such a column is read as floats.
_REAL_OBJECTS = {"floating", "integer", "mixed-integer-float", "decimal", "boolean"}


def _check_numeric(column: pd.Series, name: str) -> None:
    """Refuse a feature column that does not hold real numbers, naming it."""
    dtype = column.dtype
    is_object = pd.api.types.is_object_dtype(dtype)
    kind = pd.api.types.infer_dtype(column, skipna=True) if is_object else None
    if getattr(dtype, "kind", None) == "c" or kind == "complex":
        raise ValueError(
            f"Feature column {short_repr(name)} holds complex numbers: the features "
            "must be real (split it into real and imaginary columns, or take the "
            "modulus)."
        )
    if kind in _REAL_OBJECTS or kind == "empty":
        return  # an object column of Python numbers: read as floats
    if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return
    bad = column[pd.to_numeric(column, errors="coerce").isna() & column.notna()]
    example = f" (e.g. {short_repr(bad.iloc[0])})" if len(bad) else ""
    raise ValueError(
        f"Feature column {short_repr(name)} is not numeric{example}: encode it "
        "(one-hot) or drop it from the sensor spec."
    )


def check_labels(
    y: Any, n_rows: int, cv: int | None, *, min_classes: int = 2
) -> np.ndarray:
    """Labels as a 1-d array, checked for length, gaps, type and class counts.

    ``cv`` (when fitting) asks for that many rows per class; ``min_classes=1``
    accepts labels of one class (evaluating on a subset of the classes).
    """
    if y is None:
        raise ValueError(
            "This estimator requires y to be passed, but the target y is None."
        )
    y = column_or_1d(y, warn=True)
    if len(y) != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {len(y)} labels.")
    missing = pd.isna(pd.Series(y))
    if missing.any():
        raise ValueError(
            f"{int(missing.sum())} label(s) are missing (first at row "
            f"{int(np.flatnonzero(missing)[0])})."
        )
    if y.dtype == object:
        is_text = np.array([isinstance(v, str | bytes) for v in y])
        if is_text.any() and not is_text.all():
            i, j = int(np.argmax(is_text)), int(np.argmin(is_text))
            raise ValueError(
                f"The labels mix text and numbers (row {i}: {short_repr(y[i])}, row "
                f"{j}: {short_repr(y[j])}): convert them to one type, e.g. "
                "y.astype(str)."
            )
    if cv is not None and type_of_target(y) == "continuous":
        raise ValueError(
            "Unknown label type: continuous. The labels are real numbers (e.g. "
            f"{y[0]}), not classes: use BudgetDAGRegressor for a numeric "
            "target, or bin it into classes."
        )
    classes, counts = np.unique(y, return_counts=True)
    if len(classes) < min_classes:
        raise ValueError(
            f"The label has only one class ({short_repr(classes[0])}): need at least "
            "two."
        )
    if cv is not None and counts.min() < cv:
        small = [repr(c) for c, k in zip(classes, counts, strict=True) if k < cv]
        raise ValueError(
            f"Class(es) {', '.join(small)} have fewer rows than cv={cv} folds "
            f"(smallest: {counts.min()}): lower cv or merge rare classes."
        )
    return y


def align_rows(X: Any, value: Any, what: str) -> Any:
    """``value`` (one entry per row of ``X``: targets, ``sample_costs``, ...)
    in the order of X's rows.

    When ``X`` and ``value`` are both pandas objects, rows go by label:
    ``value`` is reordered to X's index, and refused when the labels differ
    (a row of one missing from the other, a label used twice), since taking
    them by position would pair rows with other rows' values without a word.
    A plain array (or list) is taken by position.

    Raises
    ------
    ValueError
        Naming ``what`` and the first labels that differ.

    Examples
    --------
    >>> X = pd.DataFrame({"a": [1.0, 2.0, 3.0]}, index=["r1", "r2", "r3"])
    >>> align_rows(X, pd.Series([30, 10, 20], index=["r3", "r1", "r2"]), "y").tolist()
    [10, 20, 30]
    >>> align_rows(X, pd.Series([1, 2, 3], index=["r1", "r2", "r9"]), "y")
    Traceback (most recent call last):
    ...
    ValueError: y and X have different row labels: row 'r3' of X is not in y; row \
'r9' of y is not in X. Give y the index of X (or a plain array, taken by position).
    """
    if not isinstance(X, pd.DataFrame | pd.Series) or not isinstance(
        value, pd.DataFrame | pd.Series
    ):
        return value
    mine, theirs = X.index, value.index
    if theirs.equals(mine):
        return value
    for index, whose in ((mine, "X"), (theirs, what)):
        if index.has_duplicates:
            label = index[index.duplicated()][0]
            raise ValueError(
                f"{what} and X have different row labels, and {whose} uses the "
                f"label {short_repr(label)} for several rows: give {what} the "
                "index of X (or a plain array, taken by position)."
            )
    missing = mine[~mine.isin(theirs)]
    extra = theirs[~theirs.isin(mine)]
    if len(missing) or len(extra):
        said = []
        if len(missing):
            said.append(f"row {short_repr(missing[0])} of X is not in {what}")
        if len(extra):
            said.append(f"row {short_repr(extra[0])} of {what} is not in X")
        raise ValueError(
            f"{what} and X have different row labels: {'; '.join(said)}. Give "
            f"{what} the index of X (or a plain array, taken by position)."
        )
    return value.loc[mine]  # the same labels in another order: X's order


def check_sensor_count(n_sensors: int) -> None:
    """Refuse more than ``MAX_SENSORS`` sensors, naming the number.

    Examples
    --------
    >>> check_sensor_count(64)
    >>> check_sensor_count(1000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The sensor spec has 1000 sensors; a fit takes at most 256 ...
    """
    if n_sensors > MAX_SENSORS:
        raise ValueError(
            f"The sensor spec has {n_sensors} sensors; a fit takes at most "
            f"{MAX_SENSORS} (MAX_SENSORS: the many-sensor DAGs' work grows with "
            "the square of the sensors). Group columns into fewer sensors "
            "(a sensor may hold several columns) or select columns first."
        )


def check_sample_costs(
    sample_costs: Any, spec: SensorSpec, n_rows: int
) -> np.ndarray | None:
    """Example-dependent costs as (n_rows, n_sensors), or None."""
    if sample_costs is None:
        return None
    if isinstance(sample_costs, pd.DataFrame):
        missing = [n for n in spec.names if n not in sample_costs.columns]
        if missing:
            raise ValueError(f"sample_costs has no column for sensor(s) {missing}.")
        values = sample_costs[list(spec.names)].to_numpy(dtype=float)
    else:
        values = np.asarray(sample_costs, dtype=float)
    if values.shape != (n_rows, spec.n_sensors):
        raise ValueError(
            f"sample_costs must have shape ({n_rows}, {spec.n_sensors}); "
            f"got {values.shape}."
        )
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise ValueError(
            f"sample_costs of sensor {short_repr(spec.names[j])} at row {i} is "
            f"{values[i, j]}: costs must be finite and non-negative."
        )
    with np.errstate(over="ignore"):  # an overflow is the error said below
        totals = values.sum(axis=1)
    if not np.isfinite(totals).all():
        i = int(np.flatnonzero(~np.isfinite(totals))[0])
        raise ValueError(
            f"sample_costs of row {i} sum to infinity (float64 overflow): "
            "rescale the costs (e.g. other units)."
        )
    return values


def check_sample_weight(
    sample_weight: Any, n_rows: int, labels: Any = None
) -> np.ndarray | None:
    """Row weights as a float array of ``n_rows`` values, or None.

    A row of weight w counts as w copies of it. Weights must be finite
    numbers >= 0, not all 0; weights that are all 1 give None (the
    unweighted fit, bit for bit). ``labels`` (e.g. X's index) name the
    refused row; without them, its position.

    Raises
    ------
    ValueError
        Naming the row and the value (or the lengths).

    Examples
    --------
    >>> check_sample_weight([1, 2.5, 0], 3).tolist()
    [1.0, 2.5, 0.0]
    >>> check_sample_weight([1, 1], 2) is None
    True
    >>> check_sample_weight([1, -2], 2, labels=["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: sample_weight of row 'b' is -2.0: weights must be finite and >= 0.
    """
    if sample_weight is None:
        return None
    try:
        values = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"sample_weight must be numbers, one per row; got "
            f"{short_repr(sample_weight)} ({error})."
        ) from None
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.shape != (n_rows,):
        raise ValueError(
            f"sample_weight must have one value per row ({n_rows}); got shape "
            f"{values.shape}."
        )
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if bad.size:
        i = int(bad[0])
        row = short_repr(labels[i]) if labels is not None else str(i)
        raise ValueError(
            f"sample_weight of row {row} is {values[i]}: weights must be finite "
            "and >= 0."
        )
    if not values.any():
        raise ValueError(
            "sample_weight is zero on every row: at least one row must weigh "
            "more than zero."
        )
    if (values == 1).all():
        return None
    return values
