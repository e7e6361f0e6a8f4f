"""The progress callback of the long-running functions (defined once)."""

from __future__ import annotations

from collections.abc import Callable

#: ``progress(stage, done, total)``: called by ``fit``, ``fit_bank``,
#: ``select_subsets``, ``tradeoff_curve`` and ``fit_for_budget`` after each
#: step of a stage (``"subsets"``, ``"bank"``, ``"policies"``, ``"sweep"``,
#: ``"budget"``). Raising from it stops the work.
Progress = Callable[[str, int, int], None]
