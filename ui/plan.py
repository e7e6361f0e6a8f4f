"""What a training builds, in words: its DAG's states and its bank (no Streamlit).

The library decides what a fit builds: beyond 12 sensors without Alg. 2
subsets, DAGs of one-sensor additions (``fit_plan(spec).strategies()``), with subsets
the DAG over their unions (counted by the fit's probe, see
:func:`ui.estimate.fit_probe`), else the full DAG. The Train page's plan, the
Sensors page, the sidebar and the Data page's one-click button say it with
these functions, from the settings as they stand, so that every text follows
the library's default rather than a copy of it.
"""

from __future__ import annotations

from budgetdag_core import Dataset, SensorSpec
from budgetdag_core.bank import resolve_bank_kind
from budgetdag_core.tradeoff import FitProbe, dag_states_at_most

from .grouping import describe_grouping
from .training import (
    Settings,
    estimate_params,
    estimator_params,
    is_regression,
    make_model,
)

#: Each many-sensor strategy in words, with the most states of its DAG.
STRATEGY_WORDS = {
    "chain": "a chain of {n} states (one acquisition order, the confidence cascade's)",
    "routed": (
        "a routed DAG (the chain, or a sensor whose value says where to look "
        "and an order per group of its values, or branches by what the first "
        "sensors said of the class; at most {n} states)"
    ),
    "grown": "a DAG grown where rows gain most (at most {n} states)",
}
#: Each strategy as the model that kept it is described.
KEPT_WORDS = {
    "chain": "the chain",
    "routed": "the routed DAG",
    "grown": "the grown DAG",
}
#: Each strategy in the short list of what a training may build.
SHORT_WORDS = {
    "chain": "a chain of {n} states",
    "routed": "a routed DAG of at most {n} states",
    "grown": "a DAG grown to at most {n} states",
}


def strategies_of(spec: SensorSpec, settings: Settings) -> dict[str, int]:
    """The DAGs of one-sensor additions a training with ``settings`` builds
    and the most states of each (the library's ``fit_plan(spec).strategies()``);
    empty for the full DAG or Alg. 2's subsets."""
    params = {"cost_scale": 1.0, **estimator_params(settings)}
    return make_model(spec, params).fit_plan(spec).strategies()


def _asked_subsets(settings: Settings) -> tuple[int | None, bool]:
    params = estimator_params(settings)
    return params.get("n_subsets"), bool(params.get("include_all", False))


def _planned_strategies(
    spec: SensorSpec, settings: Settings, probe: FitProbe | None
) -> dict[str, int]:
    """:func:`strategies_of`, or the probe's: it knows the training rows
    (a routed DAG only where a sensor's value says where to look)."""
    if probe is not None and probe.strategies:
        return dict(probe.strategies)
    return strategies_of(spec, settings)


def states_words(
    spec: SensorSpec, settings: Settings, probe: FitProbe | None = None
) -> str:
    """The DAG a training builds in a few words (captions, sidebar):
    ``"16 DAG states"``, ``"5 sensor subsets (Alg. 2, of at most 8), 17 DAG
    states"`` (counted by ``probe``) or ``"... at most 129 DAG states"``
    (without), ``"a chain of 14 states or a routed DAG of at most 621
    states, the best on held-out rows"``."""
    strategies = _planned_strategies(spec, settings, probe)
    if strategies:
        parts = [SHORT_WORDS[name].format(n=n) for name, n in strategies.items()]
        if len(parts) == 1:
            return f"{parts[0]} (one sensor per step)"
        return ", ".join(parts[:-1]) + f" or {parts[-1]}, the best on held-out rows"
    t, include_all = _asked_subsets(settings)
    if t is None:
        return f"{2**spec.n_sensors:,} DAG states"
    if probe is not None and probe.n_subsets is not None:
        return (
            f"{probe.n_subsets} sensor subsets (Alg. 2, of at most {t}), "
            f"{probe.n_states} DAG states"
        )
    most = dag_states_at_most(spec.n_sensors, t, include_all=include_all)
    return f"{t} sensor subsets (Alg. 2), at most {most} DAG states"


def dag_words(
    spec: SensorSpec, settings: Settings, probe: FitProbe | None = None
) -> str:
    """:func:`states_words`, saying so when it is the full DAG (a state per
    combination of sensors, which a grouping of fewer columns into more
    sensors can make many times longer to train): what the Sensors and
    Train pages say before training."""
    words = states_words(spec, settings, probe)
    full = not _planned_strategies(spec, settings, probe)
    if full and _asked_subsets(settings)[0] is None:
        words += " (the full DAG: one per combination of sensors)"
    return words


def _bank_words(settings: Settings, n_states: int, at_most: str) -> str:
    """What the bank fits for a DAG of ``n_states`` states."""
    params = estimate_params(settings)
    cv = int(params["cv"])
    kind = resolve_bank_kind(params["bank_kind"], params["classifier"], n_states)
    if kind.startswith("masked"):
        return (
            f"{cv} masked models (one per fold) that serve all {at_most}"
            f"{n_states} states"
        )
    # The boosting banks are cross-fitted (fold models averaged): no refit.
    per_state = cv + (0 if kind == "hgb" else 1)
    fits = n_states * per_state
    models = "regressors" if is_regression(settings) else "classifiers"
    return f"{at_most}{fits:,} {models} ({n_states} states x {per_state})"


def _sparse_bank_words(settings: Settings, cv: int) -> str:
    """What a many-sensor fit's any-subset bank fits, in words."""
    if is_regression(settings):  # a masked ridge or booster per fold
        regressor = estimator_params(settings).get("regressor")
        model = "ridge regressions" if regressor == "ridge" else "boosting models"
        return f"fits {cv} masked {model} (one per fold)"
    if estimate_params(settings)["bank_kind"] == "auto":  # the library's choice
        return (
            "picks the model (boosting, a small network or a logistic "
            "regression) that predicts a held-out fifth of the rows best, then "
            f"fits {cv} of it (one per fold)"
        )
    return f"fits {cv} boosting models (one per fold)"


def training_plan(
    spec: SensorSpec, settings: Settings, probe: FitProbe | None = None
) -> str:
    """The Train page's sentence on what training does, from the library's
    plan for ``settings`` (``probe``: the fit's first steps, counting the
    states of Alg. 2's subsets)."""
    strategies = _planned_strategies(spec, settings, probe)
    cv = int(estimator_params(settings)["cv"])
    if strategies:
        words = [STRATEGY_WORDS[name].format(n=n) for name, n in strategies.items()]
        built = ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + words[-1]
        keep = (
            ", keeps the simplest whose policies do within one standard error "
            "as well as the best on a held-out quarter of the training rows"
            if len(strategies) > 1
            else ""
        )
        return (
            f"Training {_sparse_bank_words(settings, cv)} on random sensor "
            f"subsets, which serve any subset; builds {built} on them{keep}; "
            "then learns a policy per state: buy one more sensor, or stop"
        )
    t, include_all = _asked_subsets(settings)
    counted = probe is not None and (t is None or probe.n_subsets is not None)
    if counted:
        n_states = probe.n_states
    elif t is None:
        n_states = 2**spec.n_sensors
    else:
        n_states = dag_states_at_most(spec.n_sensors, t, include_all=include_all)
    at_most = "" if counted or t is None else "at most "
    selecting = ""
    if t is not None:
        chosen = f"{probe.n_subsets} chosen, at most {t}" if counted else f"at most {t}"
        selecting = f"selects sensor subsets (Alg. 2, seconds: {chosen}), then "
    return (
        f"Training {selecting}fits {_bank_words(settings, n_states, at_most)}, "
        "then learns a policy per state"
    )


def model_words(model: object) -> str | None:
    """What a fitted many-sensor model kept, in words: its strategy, states
    and the held-out losses behind the choice; None for other models."""
    strategy = getattr(model, "strategy_", None)
    if strategy not in STRATEGY_WORDS:
        return None
    n_states = model.sensor_dag_.n_states  # type: ignore[attr-defined]
    text = f"Kept {KEPT_WORDS[strategy]} of one-sensor additions ({n_states} states)"
    choice = model.strategy_choice_  # type: ignore[attr-defined]
    if choice.kept_between is not None:  # a curve's or budget search's step
        low, high = choice.kept_between
        return (
            text + f", as the fitted cost scales {low:.3g} and {high:.3g} on "
            "either side did (not compared again)."
        )
    if not choice.scores:  # one strategy built: nothing compared
        return text + "."
    losses = ", ".join(
        f"{name} {rows[0]['loss']:.3g}" for name, rows in choice.scores.items() if rows
    )
    if choice.kept_incumbent:  # a retrain at a new cost: a close call
        return (
            text + f": its policies' loss (errors + cost scale x cost) on held-out "
            f"training rows ({losses}) was within one standard error of the "
            "lowest, so the retrained model's strategy stayed."
        )
    return (
        text + f": its policies' loss (errors + cost scale x cost) on held-out "
        f"training rows ({losses}); the simplest (chain, then routed) within "
        "one standard error of the lowest is kept."
    )


def sensors_words(dataset: Dataset, spec: SensorSpec) -> str:
    """How the sensors in use group the data's columns, in a few words."""
    if dataset.kind == "demo" and spec.groups == dataset.spec.groups:
        return "the demo's own"
    how = describe_grouping(spec, dataset.features)
    if how is None:
        return "as set on the Sensors page"
    return how + (", suggested" if spec.groups == dataset.spec.groups else "")
