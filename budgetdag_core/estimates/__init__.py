"""How long a fit will take, estimated before fitting.

:func:`estimate_fit_seconds` models a default fit's seconds from the data's
size; :func:`probe_fit` runs a fit's first steps (the subset selection, the
masked bank's first fold) and times them, and
:func:`estimate_fit_seconds_for` turns an estimator's parameters and data,
with a probe when given, into one estimate. The app shows it on its Train
page. The constants are measured on the project's 2-core benchmark machine:
expect a factor of two either way.

This is their public home; they are defined in ``budgetdag_core.tradeoff``,
which still holds them for code written before this module existed.
"""

from ..tradeoff import (
    FitProbe,
    estimate_fit_seconds,
    estimate_fit_seconds_for,
    probe_fit,
    strategy_states,
)

__all__ = [
    "FitProbe",
    "estimate_fit_seconds",
    "estimate_fit_seconds_for",
    "probe_fit",
    "strategy_states",
]
