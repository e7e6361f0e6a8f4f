"""Train a model for the app, reusing the classifier bank when possible (no Streamlit).

The bank (one classifier per sensor subset, with out-of-fold predictions) is the
slow part and does not depend on costs or on the policy learner. A run remembers
the settings its bank was fitted with (:func:`bank_key`); the next run with the
same data, sensors, classifier, folds and seed passes that bank to ``fit`` and
only relearns the policies.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from threadpoolctl import threadpool_limits

import budgetdag_core
from budgetdag_core import BudgetDAGClassifier, SensorSpec

from .data import Dataset

CLASSIFIERS = {
    "logistic": "Logistic regression (fastest)",
    "hist_gradient_boosting": "Gradient boosting (most accurate; default)",
    "random_forest": "Random forest (robust, slower)",
    "masked_boosting": "Masked boosting (one model, many sensors)",
}
LEARNERS = {
    "filter_tree": "Filter tree (default)",
    "cost_regression": "Cost regression",
}
SUBSET_REWARDS = {
    "soft": "Soft (default)",
    "correct": "Correct (the paper)",
}
MAX_APP_SUBSETS = 8
"""Most subsets the app offers: 2^8 = 256 states, what the DAG figure can draw."""


#: Choices served by a core bank kind with its own tuned model (no template).
CORE_BANKS = {"hist_gradient_boosting": "hgb", "masked_boosting": "masked"}


def bank_kind_of(name: str) -> str:
    """The core bank kind for a :data:`CLASSIFIERS` key."""
    # "hgb": the library's default bank, an early-stopped booster per subset;
    # "masked": one NaN-aware booster for every state.
    return CORE_BANKS.get(name, "per_subset")


def make_classifier(name: str, random_state: int | None) -> Any:
    """The bank's classifier template for a :data:`CLASSIFIERS` key (None: default)."""
    if name == "logistic" or name in CORE_BANKS:
        return None  # the core's logistic regression, or the bank kind's booster
    if name == "random_forest":
        return RandomForestClassifier(
            n_estimators=100, min_samples_leaf=2, random_state=random_state
        )
    raise ValueError(f"Unknown classifier {name!r}; choose from {sorted(CLASSIFIERS)}.")


def budget_targeting_available() -> bool:
    """Whether the core offers ``fit_for_budget`` (target an average cost)."""
    return hasattr(budgetdag_core, "fit_for_budget")


@dataclass(frozen=True)
class TrainSettings:
    """What the Train page asks for. ``target_budget`` replaces ``cost_scale``."""

    cost_scale: float = 1.0
    classifier: str = "hist_gradient_boosting"
    policy_learner: str = "filter_tree"
    policy_degree: int = 2
    cv: int = 5
    random_state: int = 0
    target_budget: float | None = None
    n_subsets: int | None = None  # None: the full DAG over all sensors
    include_all: bool = True
    subset_budget: float | None = None
    subset_reward: str = "soft"

    def subset_params(self) -> dict[str, Any]:
        """The estimator's sensor-subset parameters (Alg. 2); none without it."""
        if self.n_subsets is None:
            return {}
        return {
            "n_subsets": int(self.n_subsets),
            "include_all": bool(self.include_all),
            "subset_budget": self.subset_budget,
            "subset_reward": self.subset_reward,
        }


@dataclass
class TrainedRun:
    """A model with the results the app shows for it."""

    model: BudgetDAGClassifier
    dataset_token: str
    source: str  # "trained" or "loaded from <file>"
    settings: TrainSettings | None = None
    bank_key: tuple | None = None
    metrics: dict[str, float] | None = None
    states: pd.DataFrame | None = None
    seconds: float | None = None
    bank_reused: bool = False
    note: str = ""
    cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def spec(self) -> SensorSpec:
        return self.model.spec_

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per run (downloads, flows): reruns reuse it."""
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]


def bank_key(dataset: Dataset, spec: SensorSpec, settings: TrainSettings) -> tuple:
    """Everything the bank depends on (the sensor subsets set its states)."""
    return (
        dataset.token,
        spec.to_json(),
        settings.classifier,
        settings.cv,
        settings.random_state,
        tuple(sorted(settings.subset_params().items())),
    )


def reusable_bank(
    previous: TrainedRun | None,
    dataset: Dataset,
    spec: SensorSpec,
    settings: TrainSettings,
) -> Any:
    """The previous run's bank if it was fitted with the same data and settings."""
    if previous is None or previous.bank_key != bank_key(dataset, spec, settings):
        return None
    bank = getattr(previous.model, "bank_", None)
    # A bank loaded from a file is slim: without out-of-fold predictions it
    # cannot teach new policies.
    return bank if hasattr(bank, "oof_proba_") else None


class ProgressReporter:
    """Turn the core's ``progress(stage, done, total)`` into one bar's fraction.

    With sensor subsets their selection (stage ``"subsets"``) takes
    ``subset_share`` first. The bank takes ``bank_share`` of the bar (0 when the
    bank is reused), the policies the rest. Updates are passed on at most every
    ``min_step`` of the bar (and always at the end of a stage) so big DAGs do not
    flood the browser.
    """

    def __init__(
        self,
        sink: Callable[[float, str], None],
        *,
        bank_reused: bool,
        bank_share: float = 0.8,
        min_step: float = 0.005,
        subsets: bool = False,
        subset_share: float = 0.05,
    ) -> None:
        self.sink = sink
        self.subset_share = subset_share if subsets else 0.0
        self.bank_share = 0.0 if bank_reused else bank_share * (1 - self.subset_share)
        self.min_step = min_step
        self.last = -1.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        part = done / max(total, 1)
        start = self.subset_share
        if stage == "subsets":
            fraction = self.subset_share * part
            text = (
                "Selecting sensor subsets (Alg. 2): greedy step "
                f"{done} of at most {total}"
            )
        elif stage == "bank":
            fraction = start + self.bank_share * part
            text = f"Fitting the classifier bank: {done} of {total} fits"
        else:
            start += self.bank_share
            fraction = start + (1 - start) * part
            text = {
                "budget": f"Searching the cost scale for the budget: step {done} of "
                f"at most {total}",
                "sweep": f"Learning the policies of cost scale {done} of {total}",
            }.get(stage, f"Learning node policies: {done} of {total} nodes")
        if fraction - self.last >= self.min_step or done == total:
            self.last = fraction
            self.sink(min(max(fraction, 0.0), 1.0), text)


def estimator_params(settings: TrainSettings) -> dict[str, Any]:
    """The estimator parameters of the settings, except the cost scale (the
    model, the budget search and the trade-off sweep each set their own)."""
    return {
        "classifier": make_classifier(settings.classifier, settings.random_state),
        "bank_kind": bank_kind_of(settings.classifier),
        "policy_learner": settings.policy_learner,
        "policy_degree": settings.policy_degree,
        "cv": settings.cv,
        "random_state": settings.random_state,
        **settings.subset_params(),
    }


def make_model(spec: SensorSpec, settings: TrainSettings) -> BudgetDAGClassifier:
    return BudgetDAGClassifier(
        spec, cost_scale=settings.cost_scale, **estimator_params(settings)
    )


def evaluate(
    model: BudgetDAGClassifier, dataset: Dataset
) -> tuple[dict[str, float], pd.DataFrame]:
    """Test-set metrics of the policy and of every fixed sensor subset."""
    X, y = dataset.X("test", model.spec_), dataset.y("test")
    return model.evaluate(X, y), model.evaluate_states(X, y)


def train(
    dataset: Dataset,
    spec: SensorSpec,
    settings: TrainSettings,
    previous: TrainedRun | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> TrainedRun:
    """Fit a model (reusing ``previous``'s bank when it fits) and evaluate it.

    Raises ``ValueError`` from the core for data or settings it cannot use.
    """
    X, y = dataset.X("train", spec), dataset.y("train")
    start = time.perf_counter()
    note, key = "", bank_key(dataset, spec, settings)
    # The bank's matrices are small: BLAS threads gain little and, on a shared
    # machine (or with several app users), contend badly. Landsat under load:
    # 103 s wall / 42 s CPU with default BLAS threads, 15 s / 7 s with one.
    with threadpool_limits(limits=1):
        if settings.target_budget is not None:
            bank = None  # the search fits its own bank on part of the rows
            model, note, settings = _fit_for_budget(X, y, spec, settings, progress)
            key = None
        else:
            bank = reusable_bank(previous, dataset, spec, settings)
            model = make_model(spec, settings).fit(X, y, bank=bank, progress=progress)
    seconds = time.perf_counter() - start
    metrics, states = evaluate(model, dataset)
    return TrainedRun(
        model,
        dataset.token,
        "trained",
        settings=settings,
        bank_key=key,
        metrics=metrics,
        states=states,
        seconds=seconds,
        bank_reused=bank is not None,
        note=note,
    )


def _fit_for_budget(
    X: pd.DataFrame,
    y: pd.Series,
    spec: SensorSpec,
    settings: TrainSettings,
    progress: Callable[[str, int, int], None] | None,
) -> tuple[BudgetDAGClassifier, str, TrainSettings]:
    """The core's ``fit_for_budget``: the cost scale that spends the target.

    Returns the model, a sentence on what was found, and the settings with the
    chosen cost scale.
    """
    model = budgetdag_core.fit_for_budget(
        X,
        y,
        spec,
        settings.target_budget,
        progress=progress,
        **estimator_params(settings),
    )
    report = model.budget_report_
    note = (
        f"Target average cost {report.target_avg_cost:g}: cost scale "
        f"{report.cost_scale:.3g} chosen on {report.n_validation} held-out training "
        f"rows, where it spends {report.validation_avg_cost:.3g} on average"
        + (
            "."
            if report.met
            else " (the closest the policy gets without going over the target)."
        )
        + f" The model was fitted on the other {report.n_train} training rows."
    )
    return model, note, replace(settings, cost_scale=float(report.cost_scale))


def run_from_model(
    model: BudgetDAGClassifier, dataset: Dataset, source: str
) -> TrainedRun:
    """Wrap a loaded model; evaluate it when the data has its feature columns."""
    missing = [c for c in model.spec_.columns if c not in dataset.test.columns]
    run = TrainedRun(model, dataset.token, source)
    if missing or dataset.label not in dataset.test.columns:
        shown = ", ".join(repr(c) for c in missing[:5])
        run.note = (
            f"The current data lacks column(s) {shown} that this model uses: load "
            "matching data to evaluate it."
        )
        return run
    run.metrics, run.states = evaluate(model, dataset)
    params = model.get_params()
    run.settings = TrainSettings(
        cost_scale=float(params["cost_scale"]),
        policy_learner=params["policy_learner"]
        if isinstance(params["policy_learner"], str)
        else "custom",
        policy_degree=int(params["policy_degree"]),
        cv=int(params["cv"]),
        random_state=params["random_state"],
        classifier="custom" if params["classifier"] is not None else "logistic",
        n_subsets=params.get("n_subsets"),
        include_all=bool(params.get("include_all", True)),
        subset_budget=params.get("subset_budget"),
        subset_reward=params.get("subset_reward", "soft"),
    )
    return run


def comparison_table(run: TrainedRun) -> pd.DataFrame:
    """The policy against the no-sensor and all-sensor baselines (test set)."""
    if run.metrics is None or run.states is None:
        raise ValueError("This model has no test results.")
    m, states = run.metrics, run.states
    none, full = states.iloc[0], states.iloc[-1]
    # Over sensor subsets without the all-sensor one, the largest state is the
    # union of the subsets, which may leave sensors out.
    everything = (
        "All sensors"
        if int(full["n_sensors"]) == run.spec.n_sensors
        else f"All selected subsets ({int(full['n_sensors'])} sensors)"
    )
    rows = [
        ("BudgetDAG policy", m["error"], m["avg_cost"], m["avg_sensors"]),
        (everything, full["error"], full["avg_cost"], full["n_sensors"]),
        ("No sensor (class priors)", none["error"], none["avg_cost"], 0),
    ]
    table = pd.DataFrame(
        rows, columns=["model", "test error", "avg cost", "avg sensors"]
    )
    all_cost = float(full["avg_cost"])
    table["cost vs all sensors"] = (
        table["avg cost"] / all_cost if all_cost > 0 else float("nan")
    )
    return table.set_index("model")
