"""How much a training adds to what the session store keeps (no Streamlit).

Estimated before the training starts, so that the Train page can say when
its model will not be kept whole for reloads (:func:`ui.store.max_bytes`):
:mod:`ui.session` then keeps it slim (its bank without the out-of-fold
predictions) or not at all. The figures are the compressed pickle's
(``zlib`` level 1), measured on the demos and digits (see the constants).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from budgetdag_core import Dataset, SensorSpec
from budgetdag_core.bank import resolve_bank_kind
from budgetdag_core.estimates import FitProbe, strategy_states

from . import store
from .estimate import settings_probe
from .plan import strategies_of
from .training import TrainSettings, bank_kind_of

#: Compressed bytes per out-of-fold probability (8-byte floats, which zlib
#: halves roughly): landsat's 16 states x 4 435 rows x 6 classes take 1.5 MB.
OOF_BYTES = 4.0
#: Compressed bytes of a state's booster per output (class; one for two
#: classes), from 1 000 training rows on: its trees stop early, so rows count
#: less than the data's difficulty. Measured per state and output: 2.3 kB on
#: pima (576 rows), 19 kB on landsat (4 435 rows), 43 kB on digits (1 347
#: rows, 16 or 512 states: the issue's 263 MB): an upper end, so that the
#: warning comes before a training that will not be kept.
BOOSTER_BYTES = 45_000.0
#: Below this many training rows the boosters are proportionally smaller.
BOOSTER_FULL_ROWS = 1_000
#: A masked bank's boosters (one per fold) serve every state: about this many
#: per-state boosters' worth in all (each sees every column).
MASKED_BOOSTERS = 10
#: Compressed bytes per training row of the random forest's 100 trees, per
#: state, and per class beyond the first two: 230 kB per state on pima.
FOREST_BYTES_PER_ROW = 400.0


@dataclass(frozen=True)
class Footprint:
    """A model's estimated bytes in a session snapshot: ``full`` with its
    bank's out-of-fold predictions, ``slim`` without."""

    full: float
    slim: float


#: Compressed bytes of a grown DAG's kept probabilities (its growth): per
#: (row, state) cell known (the row's number) and per class probability
#: in it (a float64): 14 to 17 a cell on breast cancer (2 classes), 70 on
#: digits (10) (``benchmarks/bench_cold_start.py --part many``, issue 53).
GROWTH_BYTES_PER_CELL = 2.0
GROWTH_BYTES_PER_VALUE = 6.6
#: A strategy's growth knows every row at each of a chain's ``n_sensors + 1``
#: states, and, per row, this many cells per state of its DAG beyond them
#: (rows its search scored there, rows the policies rolled out there), as
#: the kept DAG (the cost scale search's several Graph-Reduces). Breast
#: cancer's grown DAG (875 states): 178 cells a row; digits' (1 000 states)
#: 301; the routed DAG: 241 (697 states).
ROLLOUT_CELLS_PER_ROW_STATE = {"grown": 0.2, "routed": 0.25}
#: Compressed bytes a state of a kept many-sensor DAG adds to a slim model
#: (its policy's learner, its columns and inputs) per policy input (the
#: table's columns, the classes and one): 0.26 to 0.28 kB on breast cancer
#: (33 inputs), 0.63 kB on digits (75).
SPARSE_STATE_BYTES_PER_INPUT = 8.4
#: Compressed bytes of an any-subset bank's fold model when the probe did
#: not fit one (its kind then unknown): 42 kB on breast cancer, 66 kB on
#: digits (the network its ``"auto"`` kind chose on both).
SPARSE_FOLD_BYTES = 60_000.0
#: The any-subset bank's dedicated all-sensor boosters (one a fold) are
#: about this share of a per-state booster each (``BOOSTER_BYTES``): 1 MB
#: on digits (5 folds, 10 classes), 17 kB on breast cancer.
DEDICATED_BOOSTER_SHARE = 0.5
#: Compressed bytes of a policy weight (8-byte floats): a node's filter tree
#: holds about one per input and action, half the sensors' actions left on
#: average (wine's 256 states: 0.6 kB a node).
POLICY_BYTES_PER_WEIGHT = 8.0


def estimate(
    dataset: Dataset,
    settings: TrainSettings,
    n_states: int,
    *,
    probe: FitProbe | None = None,
    strategies: dict[str, int] | None = None,
    spec: SensorSpec | None = None,
) -> Footprint:
    """The snapshot bytes of a model trained with ``settings`` on ``dataset``
    over a DAG of ``n_states`` states (see the module's measurements; a fit
    of DAGs of one-sensor additions counts as :func:`reload_warning` says).

    ``probe`` (the fit's :func:`ui.estimate.settings_probe`): the bank's
    models are counted at the size its fitted fold models measured
    (``model_bytes``, per state or the masked bank's), not the constants.
    ``strategies``: the many-sensor strategies the fit grows (their kept
    probabilities, the any-subset bank's fold models). ``spec``: the
    training's sensors (default the dataset's)."""
    spec = dataset.spec if spec is None else spec
    rows = len(dataset.train)
    # A regression keeps one prediction per row and state, one output a model.
    regression = dataset.task == "regression"
    classes = 1 if regression else max(2, int(dataset.y("train").nunique()))
    outputs = 1 if classes <= 2 else classes
    n_sensors, n_columns = spec.n_sensors, len(spec.columns)
    inputs = n_columns + classes + 1
    # A state's actions: stop, and about half the units left (sensors, or
    # Alg. 2's subsets: a DAG over 8 has no more children than that).
    units = min(n_sensors, getattr(settings, "n_subsets", None) or n_sensors)
    policies = n_states * inputs * (units / 2 + 1) * POLICY_BYTES_PER_WEIGHT
    measured = None if probe is None else probe.model_bytes
    if strategies:
        return _grown_footprint(
            rows, spec, strategies, measured, probe, classes, outputs
        )
    oof = n_states * rows * classes * OOF_BYTES
    kind = settings.classifier
    if regression:  # ridge as the logistic regressions, boosting as theirs
        kind = {"boosting": "hist_gradient_boosting"}.get(kind, "logistic")
    if kind == "auto":  # the library's choice: one of the boosting banks
        resolved = resolve_bank_kind(bank_kind_of(kind), None, n_states)
        kind = "masked_boosting" if resolved == "masked" else "hist_gradient_boosting"
    masked = kind == "masked_boosting" or kind.startswith("masked")
    if measured is not None and probe is not None and probe.fits:
        # The fold models the bank keeps, at their measured size: each
        # non-empty state's (a per-state bank), or the masked bank's.
        models = measured * probe.fits * (1 if masked else max(n_states - 1, 1))
    elif kind == "random_forest":
        models = n_states * FOREST_BYTES_PER_ROW * rows * (1 + (classes - 2) / 4)
    elif kind in ("hist_gradient_boosting", "masked_boosting"):
        booster = BOOSTER_BYTES * min(1.0, rows / BOOSTER_FULL_ROWS) * outputs
        boosters = n_states if kind == "hist_gradient_boosting" else MASKED_BOOSTERS
        models = boosters * booster
    else:  # logistic regressions: a weight per column and class, per fold
        weights = (n_columns + 1) * classes * 8
        models = n_states * (settings.cv + 1) * weights
    return Footprint(full=oof + models + policies, slim=models + policies)


def grown_parts(
    rows: int,
    spec: SensorSpec,
    strategies: dict[str, int],
    measured: float | None,
    probe: FitProbe | None,
    classes: int,
    outputs: int,
) -> dict[str, float]:
    """The parts of a many-sensor model's snapshot (bytes): ``"models"``,
    the any-subset bank's fold models and dedicated all-sensor boosters
    (once: every strategy's bank shares them); ``"growth"``, the kept
    strategy's probabilities (the others wait in ``strategy_banks_``
    ungrown until a fit keeps them) and ``"rows"``, the
    training rows they are of, both in a full snapshot only;
    ``"states"``, the kept strategy's policies and state columns (the first
    of :func:`~budgetdag_core.estimates.strategy_states`)."""
    n_sensors, n_columns = spec.n_sensors, len(spec.columns)
    booster = BOOSTER_BYTES * min(1.0, rows / BOOSTER_FULL_ROWS) * outputs
    if measured is not None and probe is not None and probe.fits:
        models = measured * probe.fits
        folds = probe.fits
    else:
        models, folds = SPARSE_FOLD_BYTES * 5, 5
    models += DEDICATED_BOOSTER_SHARE * booster * folds
    states = strategy_states(strategies, rows, n_sensors, max(2, classes))
    kept = next(iter(states))
    per_state = ROLLOUT_CELLS_PER_ROW_STATE.get(kept, 0.0)
    cells = rows * (n_sensors + 1 + per_state * states[kept])
    per_cell = GROWTH_BYTES_PER_CELL + GROWTH_BYTES_PER_VALUE * classes
    inputs = n_columns + classes + 1
    state = SPARSE_STATE_BYTES_PER_INPUT * inputs
    return {
        "models": models,
        "growth": cells * per_cell,
        "rows": rows * n_columns * OOF_BYTES,
        "states": states[kept] * state,
    }


def _grown_footprint(
    rows: int,
    spec: SensorSpec,
    strategies: dict[str, int],
    measured: float | None,
    probe: FitProbe | None,
    classes: int,
    outputs: int,
) -> Footprint:
    """:func:`estimate` of a fit that grows DAGs of one-sensor additions on
    one any-subset bank (:func:`grown_parts`): a slim snapshot keeps the
    kept strategy's bank without its growth (``ui.store``), as a slim
    policy file does."""
    parts = grown_parts(rows, spec, strategies, measured, probe, classes, outputs)
    slim = parts["models"] + parts["states"]
    return Footprint(full=sum(parts.values()), slim=slim)


def model_footprint(
    dataset: Dataset,
    spec: SensorSpec,
    settings: TrainSettings,
    *,
    strategies: dict[str, int] | None = None,
    probe: FitProbe | None = None,
) -> Footprint:
    """The snapshot bytes of a model trained with ``settings`` on ``dataset``
    (``strategies``: the fit plan's, default the settings'; ``probe``: the
    fit's :func:`ui.estimate.settings_probe`, asked when needed)."""
    if strategies is None:
        strategies = strategies_of(spec, settings)
    if probe is None:
        probe = settings_probe(dataset, spec, settings)
    if strategies:
        n_states = (spec.n_sensors + 1) * len(strategies)
        if settings.classifier == "auto":
            settings = replace(settings, classifier="masked_boosting")
    else:
        n_states = 2**spec.n_sensors if probe is None else probe.n_states
    return estimate(dataset, settings, n_states, probe=probe, strategies=strategies)


def reload_warning(
    dataset: Dataset, spec: SensorSpec, settings: TrainSettings
) -> str | None:
    """What the Train page says before a training whose model will not be
    kept whole for reloads, or None.

    The DAG's states are the probe's (:func:`ui.estimate.settings_probe`).
    A fit of DAGs of one-sensor additions keeps each strategy's
    out-of-fold probabilities (every row at each of a chain's ``n_sensors
    + 1`` states, and more where its DAG is wider: :func:`grown_parts`)
    and the masked bank's boosters; slim, the kept strategy's bank alone.
    """
    size = model_footprint(dataset, spec, settings)
    limit = store.max_bytes()
    if size.full <= limit:
        return None
    about = (
        f"This training's model should take about {store.megabytes(size.full)}, "
        f"over the {store.megabytes(limit)} this server keeps per session for "
        "reloads: "
    )
    if size.slim <= limit:
        return about + (
            "a reload brings it back without its bank's out-of-fold predictions "
            "(every page works; a retrain of its policies refits the bank)."
        )
    return about + (
        "a reload will not bring it back (the data, sensors and settings are "
        "kept). Download it on the Export page to keep it, or ask for less: "
        "fewer sensor subsets, a lighter classifier."
    )
