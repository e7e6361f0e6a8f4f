"""Shareable links: the demo, sensors and training settings in the URL.

A teacher sets up a demo (dataset, sensor spec, parameters), copies the address
bar, and whoever opens the link gets the same set-up. Only bundled demos can be
shared this way: an uploaded table is not in the URL.

:func:`encode` and :func:`decode` are pure (query parameters <-> values);
:func:`apply_once` and :func:`sync` move them between ``st.query_params`` and
the session state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

from budgetdag_core import SensorSpec
from budgetdag_core.datasets import DEMOS
from ui.spec_table import spec_to_table

from . import state
from .training import (
    CLASSIFIERS,
    LEARNERS,
    MAX_APP_SUBSETS,
    REGRESSORS,
    SUBSET_REWARDS,
)

# Query parameter -> (widget key, parser). Parsers raise ValueError.


def _choice(options: Mapping[str, Any]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(f"{text!r} is not one of {sorted(options)}")
        return text

    return parse


def _number(kind: type, low: float, high: float | None = None) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a {kind.__name__}") from None
        if not (value >= low and (high is None or value <= high)):
            bound = f"{low} to {high}" if high is not None else f"at least {low}"
            raise ValueError(f"{text!r} is outside {bound}")
        return value

    return parse


def _flag(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise ValueError(f"{text!r} is not true or false")


SETTINGS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "cost_scale": (state.W_COST_SCALE, _number(float, 0.0)),
    # A regression demo's bank is one of the REGRESSORS.
    "classifier": (state.W_CLASSIFIER, _choice({**CLASSIFIERS, **REGRESSORS})),
    "learner": (state.W_LEARNER, _choice(LEARNERS)),
    "degree": (state.W_DEGREE, _number(int, 1, 3)),
    "cv": (state.W_CV, _number(int, 2, 10)),
    "seed": (state.W_SEED, _number(int, 0)),
    # Sensor subsets (Alg. 2), named as the estimator's parameters.
    "subsets": (state.W_SUBSETS_ON, _flag),
    "n_subsets": (state.W_N_SUBSETS, _number(int, 1, MAX_APP_SUBSETS)),
    "include_all": (state.W_SUBSET_ALL, _flag),
    "subset_budget": (state.W_SUBSET_BUDGET, _number(float, 0.5)),
    "subset_reward": (state.W_SUBSET_REWARD, _choice(SUBSET_REWARDS)),
}
ALWAYS = ("cost_scale",)  # written even when equal to the app's default
KEYS = ("demo", "spec", *SETTINGS, "step")


def encode(
    demo: str | None,
    spec: SensorSpec | None,
    default_spec: SensorSpec | None,
    values: Mapping[str, Any],
    step: int | None = None,
) -> dict[str, str]:
    """Query parameters for a demo set-up (empty when the data is not a demo).

    ``values`` maps widget keys to their values; settings equal to the app's
    defaults are left out (except the cost scale), as is a spec equal to the
    demo's own. The cost scale is left out too when ``values`` sets the
    trade-off mode to ``"auto"`` (a link without one trains with ``"auto"``,
    the app's default; one with a scale trains with that scale).
    """
    if demo is None:
        return {}
    params = {"demo": demo}
    if spec is not None and (
        default_spec is None or spec.to_dict() != default_spec.to_dict()
    ):
        params["spec"] = json.dumps(
            {"groups": dict(spec.groups), "costs": dict(spec.costs)},
            separators=(",", ":"),
        )
    for name, (key, _) in SETTINGS.items():
        if key not in values:
            continue
        value = values[key]
        if value is None:  # an optional setting left empty
            continue
        if name == "cost_scale" and values.get(state.W_COST_MODE) == "auto":
            continue  # not used: the link opens in the default "auto" mode
        if name in ALWAYS or value != state.DEFAULTS.get(key):
            params[name] = f"{value:g}" if isinstance(value, float) else str(value)
    if step is not None:
        params["step"] = str(int(step))
    return params


def decode(params: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Values from query parameters, and a message per parameter not usable.

    Returns a dict with ``demo`` (str), ``spec`` (SensorSpec), ``step`` (int)
    and widget keys -> values, each only when present and valid.
    """
    out: dict[str, Any] = {}
    problems: list[str] = []
    if "demo" in params:
        if params["demo"] in DEMOS:
            out["demo"] = params["demo"]
        else:
            problems.append(
                f"demo={params['demo']!r} is not a bundled demo ({', '.join(DEMOS)})"
            )
    if "spec" in params:
        try:
            out["spec"] = SensorSpec.from_json(params["spec"])
        except ValueError as exc:
            problems.append(f"spec is not a sensor spec ({exc})")
    for name, (key, parse) in SETTINGS.items():
        if name in params:
            try:
                out[key] = parse(params[name])
            except ValueError as exc:
                problems.append(f"{name}: {exc}")
    if "step" in params:
        try:
            out["step"] = _number(int, 0)(params["step"])
        except ValueError as exc:
            problems.append(f"step: {exc}")
    return out, problems


# ------------------------------------------------------------- session side
def apply_once(load_demo: Callable[[str], Any]) -> None:
    """On a session's first run, take the set-up from the URL.

    ``load_demo`` maps a demo name to a :class:`budgetdag_core.Dataset`. Values that
    cannot be used are named in a notice; the rest still applies.
    """
    ss = st.session_state
    if ss.get(state.LINK_READ):
        return
    ss[state.LINK_READ] = True
    params = {k: st.query_params[k] for k in KEYS if k in st.query_params}
    if not params:
        return
    values, problems = decode(params)
    if "demo" in values:
        ss[state.W_DEMO] = values["demo"]
        ss[state.W_SOURCE] = "demo"
        # The visit's first data: its settings without a "New data" notice.
        state.set_dataset(load_demo(values["demo"]), first=True)
    dataset = state.get_dataset()
    if "spec" in values and dataset is not None:
        missing = [c for c in values["spec"].columns if c not in dataset.features]
        if missing:
            problems.append(f"spec: the data has no column(s) {missing[:5]}")
        else:
            state.set_spec_table(spec_to_table(values["spec"]))
            # Its costs' suggestions, quietly: the link's own settings follow.
            state.follow_suggestions(values["spec"], first=True)
    for key in (k for k, _ in SETTINGS.values()):
        if key in values:
            ss[key] = values[key]
    if state.W_COST_SCALE in values:  # the link's scale, not the "auto" default
        ss[state.W_COST_MODE] = "scale"
    if "step" in values:
        ss[state.TEACH_STEP] = values["step"]
    if problems:
        state.notice(
            "Some settings in the link were not used: " + "; ".join(problems) + ".",
            "error",
        )


def current(step: int | None = None) -> dict[str, str]:
    """The query parameters for the session's current set-up."""
    ss = st.session_state
    dataset = state.get_dataset()
    if dataset is None or dataset.kind != "demo":
        return {}
    check = state.spec_check()
    spec = check.spec if check is not None and check.ok else None
    keys = [key for key, _ in SETTINGS.values()] + [state.W_COST_MODE]
    values = {key: ss[key] for key in keys if key in ss}
    return encode(dataset.name, spec, dataset.spec, values, step)


def sync(step: int | None = None) -> None:
    """Write :func:`current` into the URL (only the keys that changed)."""
    wanted = current(step)
    qp = st.query_params
    for key in KEYS:
        if key in wanted and qp.get(key) != wanted[key]:
            qp[key] = wanted[key]
        elif key not in wanted and key in qp:
            del qp[key]
