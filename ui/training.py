"""Train a model for the app, reusing the classifier bank when possible (no Streamlit).

The bank (one classifier per sensor subset, with out-of-fold predictions) is the
slow part and does not depend on costs or on the policy learner. A run remembers
the settings its bank was fitted with (:func:`bank_key`); the next run with the
same data, sensors, classifier, folds and seed passes that bank to ``fit`` and
only relearns the policies.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from threadpoolctl import threadpool_limits

import budgetdag_core
from budgetdag_core import (
    BudgetDAGClassifier,
    BudgetDAGRegressor,
    Dataset,
    Progress,
    SensorSpec,
)
from budgetdag_core.bank import SPARSE_BANK_KINDS, resolve_bank_kind
from budgetdag_core.estimator import fitted_plan
from budgetdag_core.tradeoff import AUTO_SCALE_TRIALS
from budgetdag_core.validation import env_setting, positive_int

#: What the app trains: classes or a number (``Dataset.task``), in words.
TASKS = {
    "classification": "Classification: predict a class",
    "regression": "Regression: predict a number",
}

CLASSIFIERS = {
    "logistic": "Logistic regression (fastest)",
    "hist_gradient_boosting": "Gradient boosting (most accurate; default)",
    "random_forest": "Random forest (robust, slower)",
    "masked_boosting": "Masked boosting (one model, many sensors)",
    "auto": "The library's default for these sensors",
}
LEARNERS = {
    "filter_tree": "Filter tree (default)",
    "cost_regression": "Cost regression",
}
SUBSET_REWARDS = {
    "soft": "Soft (default)",
    "correct": "Correct (the paper)",
}
#: The regressor banks the app offers (``BudgetDAGRegressor(regressor=...)``).
REGRESSORS = {
    "ridge": "Ridge regression (fastest; default)",
    "boosting": "Gradient boosting (nonlinear targets, slower)",
}
#: The regressor of a classifier choice, when the task changes under the form.
REGRESSOR_OF = {"hist_gradient_boosting": "boosting", "masked_boosting": "boosting"}
#: The regressor the app starts a regression with: a ridge regression per
#: state fitted diabetes in 2 s where boosting took 11 to 16 s, and predicted
#: it better (test MSE 3 200 against 3 760 with all sensors).
DEFAULT_REGRESSOR = "ridge"
MAX_APP_SUBSETS = 8
"""Most subsets the app offers: 2^8 = 256 states, what the DAG figure can draw."""


#: Choices served by a core bank kind with its own tuned model (no template);
#: "auto" leaves the kind to the library (``bank_kind="auto"``).
CORE_BANKS = {
    "hist_gradient_boosting": "hgb",
    "masked_boosting": "masked",
    "auto": "auto",
}


def bank_kind_of(name: str) -> str:
    """The core bank kind for a :data:`CLASSIFIERS` key."""
    # "hgb": an early-stopped booster per subset; "masked": one NaN-aware
    # booster for every state; "auto": what the library picks.
    return CORE_BANKS.get(name, "per_subset")


def classifiers_for(sparse: bool) -> dict[str, str]:
    """The :data:`CLASSIFIERS` a fit accepts: a fit that builds DAGs of
    one-sensor additions (``sparse``) needs an any-subset bank of the
    library's own model (no classifier template, a sparse bank kind)."""
    if not sparse:
        return dict(CLASSIFIERS)
    return {
        name: words
        for name, words in CLASSIFIERS.items()
        if name in CORE_BANKS and bank_kind_of(name) in SPARSE_BANK_KINDS
    }


def make_classifier(name: str, random_state: int | None) -> Any:
    """The bank's classifier template for a :data:`CLASSIFIERS` key (None: default)."""
    if name == "logistic" or name in CORE_BANKS:
        return None  # the core's logistic regression, or the bank kind's booster
    if name == "random_forest":
        return RandomForestClassifier(
            n_estimators=100, min_samples_leaf=2, random_state=random_state
        )
    raise ValueError(f"Unknown classifier {name!r}; choose from {sorted(CLASSIFIERS)}.")


def _scale_label(model: Any) -> str:
    """The fitted cost scale, and "(auto)" where the library chose it."""
    scale = f"{model.cost_scale_:g}"
    return f"{scale} (auto)" if model.cost_scale == "auto" else scale


def budget_targeting_available() -> bool:
    """Whether the core offers ``fit_for_budget`` (target an average cost)."""
    return hasattr(budgetdag_core, "fit_for_budget")


def task_of(model: Any) -> str:
    """``"regression"`` for a :class:`BudgetDAGRegressor`, else
    ``"classification"``: the one test of what a model predicts."""
    return "regression" if isinstance(model, BudgetDAGRegressor) else "classification"


def params_task(params: Mapping[str, Any]) -> str:
    """The task of estimator parameters (a regressor's have ``regressor``)."""
    return "regression" if "regressor" in params else "classification"


@dataclass(frozen=True)
class Scoring:
    """How the app says a model's test results: which metric of
    ``model.evaluate`` it reports and in which words.

    A classifier's error rate (a percentage), or a regressor's mean squared
    or absolute error (``loss``), in the target's units.
    """

    task: str = "classification"
    key: str = "error"
    name: str = "error"
    long: str = "error rate"

    @property
    def regression(self) -> bool:
        return self.task == "regression"

    def fmt(self, value: float | None) -> str:
        """``12.5%`` for an error rate, ``3.2e+03`` style for a loss."""
        if value is None or value != value:
            return "n/a"
        return f"{value:.1%}" if not self.regression else f"{value:,.4g}"

    @property
    def stop_words(self) -> str:
        """What a stop gives: a class or a number."""
        return "predict a number" if self.regression else "classify"


def scoring_of(model: Any) -> Scoring:
    """The :class:`Scoring` of a model (its task and, for a regressor, its loss)."""
    if task_of(model) == "classification":
        return Scoring()
    if getattr(model, "loss", "squared") == "absolute":
        return Scoring("regression", "mae", "MAE", "mean absolute error")
    return Scoring("regression", "mse", "MSE", "mean squared error")


#: The estimator parameters that select sensor subsets (Alg. 2).
SUBSET_PARAMS = ("n_subsets", "include_all", "subset_budget", "subset_reward")


@dataclass(frozen=True)
class TrainSettings:
    """What the Train page asks for. ``target_budget`` replaces ``cost_scale``.

    The form's values only: a trained or loaded model's own parameters
    (``model.get_params()``, see :func:`model_params`) are the source of truth
    for everything the app shows or re-runs; :meth:`of_model` is a read-only
    view of them in the form's terms, for labels.
    """

    cost_scale: float | str = "auto"
    classifier: str = "hist_gradient_boosting"
    policy_learner: str = "filter_tree"
    policy_degree: int = 1
    cv: int = 5
    random_state: int | None = 0
    target_budget: float | None = None
    n_subsets: int | None = None  # None: the full DAG over all sensors
    include_all: bool = True
    subset_budget: float | None = None
    subset_reward: str = "soft"
    #: The data's task (``Dataset.task``): a regression trains a
    #: :class:`BudgetDAGRegressor` with the :data:`REGRESSORS` bank
    #: ``classifier`` names.
    task: str = "classification"

    def subset_params(self) -> dict[str, Any]:
        """The estimator's sensor-subset parameters (Alg. 2); none without it."""
        if self.n_subsets is None:
            return {}
        params = {
            "n_subsets": int(self.n_subsets),
            "include_all": bool(self.include_all),
            "subset_budget": self.subset_budget,
            "subset_reward": self.subset_reward,
        }
        if self.task == "regression":  # a regressor's reward is its loss drop
            del params["subset_reward"]
        return params

    def params(self) -> dict[str, Any]:
        """The estimator parameters the form asks for (``sensors`` aside)."""
        cost_scale = (
            self.cost_scale if self.cost_scale == "auto" else float(self.cost_scale)
        )
        if self.task == "regression":
            return {
                "cost_scale": cost_scale,
                "regressor": regressor_name(self.classifier),
                "policy_learner": self.policy_learner,
                "policy_degree": self.policy_degree,
                "cv": self.cv,
                "random_state": self.random_state,
                **self.subset_params(),
            }
        return {
            "cost_scale": cost_scale,
            "classifier": make_classifier(self.classifier, self.random_state),
            "bank_kind": bank_kind_of(self.classifier),
            "policy_learner": self.policy_learner,
            "policy_degree": self.policy_degree,
            "cv": self.cv,
            "random_state": self.random_state,
            **self.subset_params(),
        }

    @classmethod
    def of_model(cls, model: BudgetDAGClassifier) -> TrainSettings:
        """The model's parameters in the form's terms (a view, for labels).

        ``classifier`` and ``policy_learner`` are ``"custom"`` when the model
        uses an object the form does not offer; ``target_budget`` is the target
        of a model fitted by ``fit_for_budget``.
        """
        params = model_params(model)
        learner = params["policy_learner"]
        report = getattr(model, "budget_report_", None)
        subsets = params.get("n_subsets") is not None
        return cls(
            task=task_of(model),
            cost_scale=model.cost_scale
            if model.cost_scale == "auto"
            else float(model.cost_scale),
            classifier=classifier_name(params),
            policy_learner=learner if isinstance(learner, str) else "custom",
            policy_degree=int(params["policy_degree"]),
            cv=int(params["cv"]),
            random_state=params["random_state"],
            target_budget=None if report is None else float(report.target_avg_cost),
            n_subsets=params.get("n_subsets"),
            include_all=bool(params.get("include_all")) if subsets else True,
            subset_budget=params.get("subset_budget"),
            subset_reward=params.get("subset_reward", "soft"),
        )


#: What the app trains from: the Train form, or a model's own parameters
#: (:func:`model_params`, for re-runs of a trained or loaded model).
Settings = TrainSettings | Mapping[str, Any]


def regressor_name(name: str) -> str:
    """The :data:`REGRESSORS` key of a form choice (a classifier's name while
    the form still shows one: its regressor, else the default)."""
    if name in REGRESSORS:
        return name
    return REGRESSOR_OF.get(name, DEFAULT_REGRESSOR)


def classifier_name(params: Mapping[str, Any]) -> str:
    """The :data:`CLASSIFIERS` key of estimator parameters, or ``"custom"``.

    ``params["bank_kind"]`` must be resolved (not ``"auto"``), as
    :func:`model_params` returns it. A regressor's: its :data:`REGRESSORS`
    key (None, the library's default, is boosting).
    """
    if params_task(params) == "regression":
        regressor = params["regressor"]
        if regressor is None:
            return "boosting"
        return regressor if isinstance(regressor, str) else "custom"
    by_kind = {kind: name for name, kind in CORE_BANKS.items()}
    if params["bank_kind"] in by_kind:
        return by_kind[params["bank_kind"]]
    classifier = params["classifier"]
    if classifier is None:
        return "logistic"
    if type(classifier) is RandomForestClassifier:
        return "random_forest"
    return "custom"


def describe_model(model: BudgetDAGClassifier) -> str:
    """The model's settings in words: cost scale, bank, policy learner, folds.

    Read from the model's own parameters, so a loaded model is described as
    it was fitted (its real bank, a custom classifier by its class name).
    """
    params = model_params(model)
    name = classifier_name(params)
    choices = {**CLASSIFIERS, **REGRESSORS}
    bank = (
        choices[name]
        if name in choices
        else f"{type(params.get('classifier', params.get('regressor'))).__name__} bank"
    )
    learner = params["policy_learner"]
    learner = (
        LEARNERS.get(learner, learner)
        if isinstance(learner, str)
        else type(learner).__name__
    )
    seed = params["random_state"]
    features = params.get("policy_features", "the prediction")
    task = "" if task_of(model) == "classification" else "Regression · "
    return (
        f"{task}Cost scale {_scale_label(model)} · {bank} · {learner}, degree "
        f"{params['policy_degree']} · policy features {features} · "
        f"{params['cv']} folds · seed {'none' if seed is None else seed}"
    )


def model_params(model: BudgetDAGClassifier) -> dict[str, Any]:
    """The fitted model's estimator parameters, without ``sensors``.

    The one source of truth for what a page re-runs (sweeps, budget fits) or
    shows. ``bank_kind="auto"`` is resolved to the kind the model's bank has,
    so a re-run builds the same kind of bank.
    """
    params = model.get_params(deep=False)
    del params["sensors"]
    if "bank_kind" in params and not model.fit_plan(model.spec_).strategies():
        # A sparse DAG's bank kind stays as asked: its "auto" is no per-state
        # kind, and a re-run must build the same strategies' bank.
        params["bank_kind"] = resolve_bank_kind(
            params["bank_kind"], params["classifier"], model.dag_.number_of_nodes()
        )
    return params


#: Environment variable capping the threads of the app's fits and sweeps.
N_JOBS_VARIABLE = "BUDGETDAG_N_JOBS"
#: Environment variable: how many fits or sweeps the server runs at once.
WORKERS_VARIABLE = "BUDGETDAG_WORKERS"
#: Threads at most by default: a bank has 5 folds, and more threads than that
#: mostly wait.
MAX_DEFAULT_JOBS = 8


def _setting(variable: str, default: int) -> int:
    """The positive integer in the environment ``variable``, else ``default``
    (with a warning for the server log when the variable holds something else).
    """
    return env_setting(variable, positive_int, default, "a positive integer")


def app_workers() -> int:
    """Worker processes for the app's long work (:mod:`ui.jobs`).

    ``BUDGETDAG_WORKERS`` when it is a positive integer, else half the cores
    (at least one): more jobs wait in a queue, so that many users at once
    slow each other down rather than the server.
    """
    return _setting(WORKERS_VARIABLE, max(1, (os.cpu_count() or 1) // 2))


def app_n_jobs() -> int:
    """Threads for each of the app's fits, sweeps and budget searches.

    ``BUDGETDAG_N_JOBS`` when it is a positive integer, else the cores shared
    among the :func:`app_workers` (up to ``MAX_DEFAULT_JOBS``). Results do not
    depend on it: the library's fits are equal for any ``n_jobs``.
    """
    cores = (os.cpu_count() or 1) // app_workers()
    return _setting(N_JOBS_VARIABLE, max(1, min(cores, MAX_DEFAULT_JOBS)))


def settings_params(settings: Settings) -> Mapping[str, Any]:
    """The parameters of ``settings``: the Train page's
    :class:`TrainSettings` in the estimator's terms, or a model's own
    (:func:`model_params`) as they are."""
    return settings.params() if isinstance(settings, TrainSettings) else settings


def estimator_params(settings: Settings) -> dict[str, Any]:
    """The estimator parameters of ``settings`` except the cost scale (the
    model, the budget search and the trade-off sweep each set their own),
    with the app's threads (:func:`app_n_jobs`).

    ``settings`` is the Train page's :class:`TrainSettings` or a model's
    parameters (:func:`model_params`).
    """
    params = settings_params(settings)
    kept = {k: v for k, v in params.items() if k not in ("cost_scale", "sensors")}
    return {**kept, "n_jobs": app_n_jobs()}


@dataclass
class TrainedRun:
    """A model with the results the app shows for it.

    The model is the one source of truth for its settings: :attr:`params` and
    :attr:`settings` are derived from it.
    """

    model: BudgetDAGClassifier | BudgetDAGRegressor
    dataset_token: str
    source: str  # "trained" or "loaded from <file>"
    bank_key: tuple | None = None
    metrics: dict[str, float] | None = None
    states: pd.DataFrame | None = None
    #: From pressing Train to the result (set when the job's result is
    #: applied; the worker's own time until then), and of it in the queue.
    seconds: float | None = None
    waited: float | None = None
    bank_reused: bool = False
    note: str = ""
    #: When it was trained or loaded (seconds since the epoch): a restored
    #: session names the model it brings back by it.
    trained_at: float | None = None
    #: A bank with out-of-fold predictions refitted for the Teaching page's
    #: replay, when the model's own has none (:mod:`ui.teaching`).
    replay_bank: Any = None
    cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def spec(self) -> SensorSpec:
        return self.model.spec_

    @property
    def params(self) -> dict[str, Any]:
        """The model's estimator parameters (:func:`model_params`)."""
        return model_params(self.model)

    @property
    def settings(self) -> TrainSettings:
        """The model's parameters in the Train form's terms (for labels)."""
        return TrainSettings.of_model(self.model)

    @property
    def task(self) -> str:
        """``"classification"`` or ``"regression"`` (:func:`task_of`)."""
        return task_of(self.model)

    @property
    def scoring(self) -> Scoring:
        """How the pages say this model's results (:func:`scoring_of`)."""
        return scoring_of(self.model)

    @property
    def error(self) -> float | None:
        """The test metric the pages report (:attr:`scoring`), if evaluated."""
        return None if self.metrics is None else self.metrics[self.scoring.key]

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per run (downloads, flows): reruns reuse it."""
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]


def is_regression(settings: Settings) -> bool:
    """Whether ``settings`` (form or parameters) train a regressor."""
    if isinstance(settings, TrainSettings):
        return settings.task == "regression"
    return params_task(settings) == "regression"


def estimate_params(settings: Settings) -> dict[str, Any]:
    """:func:`estimator_params` in a classifier's terms, for the fit-time
    estimates and plans (written for the classifier's banks): a ridge
    regression per state as a logistic regression's, boosting as the
    boosted bank's (a regressor per state costs about a two-class
    classifier; the pages say "about")."""
    params = estimator_params(settings)
    if not is_regression(settings):
        return params
    kind = {"boosting": "hgb", None: "auto"}.get(params["regressor"], "per_subset")
    # The classifier's own parameters only (not loss, subset_scorer, ...).
    known = BudgetDAGClassifier().get_params(deep=False)
    kept = {k: v for k, v in params.items() if k in known or k == "n_jobs"}
    return {**kept, "classifier": None, "bank_kind": kind}


def uses_subsets(settings: Settings) -> bool:
    """Whether ``settings`` select sensor subsets (Alg. 2) before the bank."""
    return estimator_params(settings).get("n_subsets") is not None


def searches_scale(settings: Settings) -> bool:
    """Whether ``settings`` choose the cost scale on the training rows
    (``cost_scale="auto"``: policies at several scales on one bank)."""
    params = settings_params(settings)
    return params.get("cost_scale", "auto") == "auto"


def bank_key(dataset: Dataset, spec: SensorSpec, settings: Settings) -> tuple:
    """Everything the bank depends on (the sensor subsets set its states)."""
    params = estimator_params(settings)
    subsets = (
        tuple((name, params.get(name)) for name in SUBSET_PARAMS)
        if params.get("n_subsets") is not None
        else ()
    )
    return (
        dataset.token,
        spec.to_json(),
        params.get("bank_kind", "regressor"),
        repr(params.get("classifier", params.get("regressor"))),
        params["cv"],
        params["random_state"],
        subsets,
    )


def reusable_bank(
    previous: TrainedRun | None,
    dataset: Dataset,
    spec: SensorSpec,
    settings: Settings,
) -> Any:
    """The previous run's bank if it was fitted with the same data and
    settings (many sensors: every candidate DAG of its fit), and can teach
    new policies (a bank loaded from a file is slim: without its
    out-of-fold outputs it cannot)."""
    if previous is None or previous.bank_key != bank_key(dataset, spec, settings):
        return None
    return fitted_plan(previous.model).reusable_bank(previous.model)


class ProgressReporter:
    """Turn the core's ``progress(stage, done, total)`` into one bar's fraction.

    The fit takes the bar up to ``1 - evaluate_share - result_share``, the
    test-set evaluation after it (stage ``"evaluate"``) ``evaluate_share``;
    the last ``result_share`` is left for the result's way to the page (the
    bar stays short of its end until the page shows the result). Within the
    fit, with sensor subsets their selection (stage ``"subsets"``) takes
    ``subset_share`` first. The bank takes ``bank_share`` (0 when the bank is
    reused); a fit that builds DAGs of one-sensor additions (``sparse``)
    shares the bar as :data:`SPARSE_SHARES` says (the bank's kind, its
    folds, the DAGs, the choice among them; a reused bank keeps the choice's
    share of what is left), and the policies take the rest. Updates are
    passed on at most every ``min_step`` of the bar (and always at the end
    of a stage, and when the stage changes, so that its words show when it
    starts) so big DAGs do not flood the browser; the bar never moves back
    (a close strategy call counts its choice again).
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
        sparse: bool = False,
        evaluate_share: float = 0.0,
        result_share: float = 0.0,
        scale_search: bool = False,
    ) -> None:
        self.sink = sink
        self.end = 1.0 - min(max(result_share, 0.0), 0.5)
        self.fit_share = self.end - min(max(evaluate_share, 0.0), 0.9 * self.end)
        self.subset_share = subset_share if subsets else 0.0
        shares = {"bank": bank_share}
        if sparse:
            shares = dict(SPARSE_SHARES)
        if bank_reused:  # the choice (sparse) and the policies only
            choice = shares.get("choice", 0.0)
            left = choice + 1 - sum(shares.values())
            shares = {"choice": choice / left} if choice else {}
        if scale_search:
            # The first scale's nodes: one of the search's policy fits, as the
            # estimates count them; the other trials the rest.
            left = 1 - sum(shares.values())
            shares["policies"] = left / AUTO_SCALE_TRIALS
            shares["cost scale"] = left - shares["policies"]
        rest = 1 - self.subset_share
        self.shares = {stage: share * rest for stage, share in shares.items()}
        self.min_step = min_step
        self.last = -1.0
        self.stage: str | None = None  # the stage of the last words passed on

    def _fit_fraction(self, stage: str, part: float) -> float:
        """The share of the fit done at ``part`` of ``stage``."""
        if stage == "subsets":
            return self.subset_share * part
        start = self.subset_share
        for name, share in self.shares.items():  # in the fit's order
            if stage == name:
                return start + share * part
            start += share
        return start + (1 - start) * part

    def __call__(self, stage: str, done: int, total: int) -> None:
        part = done / max(total, 1)
        if stage in STAGE_WORDS and stage not in self.shares:
            # inside another stage's share: words only
            if done == 0 or done == total:
                self.stage = stage
                self.sink(min(max(self.last, 0.0), 1.0), STAGE_WORDS[stage])
            return
        if stage == "evaluate":
            fraction = self.fit_share + (self.end - self.fit_share) * part
        else:
            fraction = self.fit_share * self._fit_fraction(stage, part)
        text = {
            "subsets": "Selecting sensor subsets (Alg. 2): greedy step "
            f"{done} of at most {total}",
            "bank": f"Fitting the classifier bank: {done} of {total} fits",
            "bank kind": STAGE_WORDS["bank kind"],
            "choice": f"{STAGE_WORDS['choice']}: step {done} of {total}",
            "strategies": "Building the DAGs of one-sensor additions: "
            f"{done} of {total} built",
            "evaluate": "Evaluating on the test set: the policy and the fixed "
            "sensor subsets"
            if done < total
            else "Evaluated on the test set: returning the result",
            "budget": f"Searching the cost scale for the budget: step {done} of "
            f"at most {total}",
            "sweep": f"Learning the policies of cost scale {done} of {total}",
            "cost scale": "Choosing the cost scale on the training rows: "
            f"policies at {done} scale(s) of at most {total}"
            if done < total
            else "Chose the cost scale on the training rows",
        }.get(stage, f"Learning node policies: {done} of {total} nodes")
        # Never back: a stage counted again (a rival bank kind's folds, a
        # close strategy call's other parts) holds the bar where it is.
        fraction = max(fraction, self.last)
        changed = stage != self.stage
        if fraction - self.last >= self.min_step or done == total or changed:
            self.last, self.stage = fraction, stage
            self.sink(min(max(fraction, 0.0), 1.0), text)


#: Stages the library reports inside another's share of the bar (the bar
#: stays, the words change): the ``"auto"`` bank's choice of kind before its
#: folds, the grown DAG's states while the strategies are built, the choice
#: among the strategies before the policies.
STAGE_WORDS = {
    "bank kind": "Choosing the bank's model on validation rows",
    "grown": "Growing the DAG of one-sensor additions",
    "choice": "Comparing the DAGs' policies on validation rows",
}


#: How a fit that builds DAGs of one-sensor additions shares the bar, in the
#: order of its stages (the policies: the rest). Measured with two threads
#: (wall seconds of each stage; digits, dna_400 and CUBE-NM, whose fits
#: compare two strategies): the bank's kind and the choice (with the kept
#: DAG grown after it) about a third each, the bank's folds a seventh, the
#: chain grown with the bank a twelfth (the other DAGs wait until kept), the
#: policies a seventh.
SPARSE_SHARES = {"bank kind": 0.3, "bank": 0.15, "strategies": 0.08, "choice": 0.33}


def make_model(
    spec: SensorSpec, settings: Settings
) -> BudgetDAGClassifier | BudgetDAGRegressor:
    """An unfitted model of ``settings`` (form or parameters) on ``spec``: a
    regressor for a regression's settings (:func:`params_task`)."""
    params = settings_params(settings)
    if params_task(params) == "regression":
        return BudgetDAGRegressor(
            spec, cost_scale=params["cost_scale"], **estimator_params(params)
        )
    return BudgetDAGClassifier(
        spec, cost_scale=params["cost_scale"], **estimator_params(params)
    )


#: A DAG of one-sensor additions with more states than this (a grown DAG:
#: up to 1 000) is evaluated at the policy's own states only: every state
#: took 20 s on digits' test set, and its states are no subsets a person
#: would fix.
MAX_EVALUATED_STATES = 128


def evaluated_states(model: BudgetDAGClassifier, X: pd.DataFrame) -> list[int] | None:
    """The states :func:`evaluate` scores on ``X`` (None: every state): of a
    large DAG of one-sensor additions, none, all sensors and where the
    policy stops."""
    n_states = model.sensor_dag_.n_states
    if n_states <= MAX_EVALUATED_STATES or not model.fit_plan(model.spec_).strategies():
        return None
    stops = model.trace(X)["stop_state"].astype(int)
    return sorted({0, n_states - 1, *stops.tolist()})


def evaluate(
    model: BudgetDAGClassifier, dataset: Dataset
) -> tuple[dict[str, float], pd.DataFrame]:
    """Test-set metrics of the policy and of the fixed sensor subsets
    (:func:`evaluated_states`)."""
    X, y = dataset.X("test", model.spec_), dataset.y("test")
    chosen = evaluated_states(model, X)
    return with_error(
        model, model.evaluate(X, y), model.evaluate_states(X, y, states=chosen)
    )


def with_error(
    model: Any, metrics: dict[str, float], states: pd.DataFrame
) -> tuple[dict[str, float], pd.DataFrame]:
    """``metrics`` and ``states`` with an ``"error"`` entry and column: a
    classifier's error rate, a regressor's :attr:`Scoring.key` (MSE or MAE).

    The app's tables and figures read ``"error"`` whatever the task (the
    one place that maps a regressor's metric to it); :func:`scoring_of`
    says how to word and format it.
    """
    key = scoring_of(model).key
    if key != "error":
        metrics = {**metrics, "error": metrics[key]}
        states = states.assign(error=states[key])
    return metrics, states


def train(
    dataset: Dataset,
    spec: SensorSpec,
    settings: Settings,
    previous: TrainedRun | None = None,
    progress: Progress | None = None,
    *,
    target_budget: float | None = None,
) -> TrainedRun:
    """Fit a model (reusing ``previous``'s bank when it fits) and evaluate it.

    ``settings`` is the Train form or a model's parameters (a re-run of that
    model, e.g. fitted for a budget). With a target budget (``target_budget``,
    else the form's) the cost scale is searched by ``fit_for_budget``.
    Raises ``ValueError`` from the core for data or settings it cannot use.
    """
    if target_budget is None and isinstance(settings, TrainSettings):
        target_budget = settings.target_budget
    if target_budget is not None and is_regression(settings):
        raise ValueError(
            "A target average cost is searched for classification only: train "
            "a regression with a cost scale (the Trade-off page shows the cost "
            "of each)."
        )
    X, y = dataset.X("train", spec), dataset.y("train")
    start = time.perf_counter()
    note, key = "", bank_key(dataset, spec, settings)
    # The bank's matrices are small: BLAS threads gain little and, on a shared
    # machine (or with several app users), contend badly enough to make a fit
    # several times slower.
    with threadpool_limits(limits=1):
        if target_budget is not None:
            bank = None  # the search fits its own bank on part of the rows
            model, note = _fit_for_budget(
                X, y, spec, estimator_params(settings), target_budget, progress
            )
            key = None
        else:
            bank = reusable_bank(previous, dataset, spec, settings)
            model = make_model(spec, settings)
            if bank is not None and rescaled_only(previous.model, model):
                # A what-if at another cost: the model's own refit, whose
                # choice among many-sensor candidates keeps its strategy on
                # a close call (instead of judging every training row).
                model = previous.model.refit_policies(
                    X, y, model.cost_scale, progress=progress
                )
            else:
                model = model.fit(X, y, bank=bank, progress=progress)
    if progress is not None:
        progress("evaluate", 0, 1)
    metrics, states = evaluate(model, dataset)
    if progress is not None:
        progress("evaluate", 1, 1)
    seconds = time.perf_counter() - start
    return TrainedRun(
        model,
        dataset.token,
        "trained",
        bank_key=key,
        metrics=metrics,
        states=states,
        seconds=seconds,
        bank_reused=bank is not None,
        note=note,
        trained_at=time.time(),
    )


def rescaled_only(fitted: Any, new: Any) -> bool:
    """Whether the unfitted ``new`` is ``fitted`` at another numeric cost
    scale, every other parameter the same, on many-sensor candidates
    (``strategy_banks_``): a ``refit_policies`` of it."""
    if type(fitted) is not type(new) or not getattr(fitted, "strategy_banks_", None):
        return False
    old, wanted = fitted.get_params(deep=False), new.get_params(deep=False)
    if isinstance(wanted.get("cost_scale"), str) or old.keys() != wanted.keys():
        return False
    return all(
        repr(old[name]) == repr(wanted[name]) for name in old if name != "cost_scale"
    )


def _fit_for_budget(
    X: pd.DataFrame,
    y: pd.Series,
    spec: SensorSpec,
    params: dict[str, Any],
    target_budget: float,
    progress: Progress | None,
) -> tuple[BudgetDAGClassifier, str]:
    """The core's ``fit_for_budget``: the cost scale that spends the target.

    Returns the model and a sentence on what was found.
    """
    model = budgetdag_core.fit_for_budget(
        X, y, spec, target_budget, progress=progress, **params
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
    return model, note


def run_from_model(
    model: BudgetDAGClassifier, dataset: Dataset, source: str
) -> TrainedRun:
    """Wrap a loaded model; evaluate it when the data has its feature columns."""
    missing = [c for c in model.spec_.columns if c not in dataset.test.columns]
    run = TrainedRun(model, dataset.token, source, trained_at=time.time())
    if task_of(model) != dataset.task:
        run.note = (
            f"This policy is a {task_of(model)} and the current data a "
            f"{dataset.task}: load data of its kind to evaluate it."
        )
        return run
    if missing or dataset.label not in dataset.test.columns:
        shown = ", ".join(repr(c) for c in missing[:5])
        run.note = (
            f"The current data lacks column(s) {shown} that this model uses: load "
            "matching data to evaluate it."
        )
        return run
    run.metrics, run.states = evaluate(model, dataset)
    return run
