"""The progress callback of the long-running functions (defined once), and
the progress bar that ``verbose=`` and the command line draw with it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from tqdm import tqdm

#: ``progress(stage, done, total)``: called by ``fit``, ``fit_bank``,
#: ``select_subsets``, ``tradeoff_curve`` and ``fit_for_budget`` when a stage
#: starts (``done=0`` where the stage is long) and after each of its steps
#: (``"subsets"``, ``"bank kind"``, ``"bank"``, ``"strategies"``,
#: ``"choice"``, ``"policies"``, ``"cost scale"`` (``cost_scale="auto"``'s
#: trials after the first, of at most ``AUTO_MAX_TRIALS``), ``"sweep"``,
#: ``"budget"``; a stage may run again, e.g. ``"bank"`` for a rival bank
#: kind). Raising from it stops the work.
Progress = Callable[[str, int, int], None]


class ProgressBar:
    """One ``tqdm`` bar over every stage of a long call (a :data:`Progress`).

    The stages are not known in advance: each stage's steps are added to the
    bar's total when the stage starts (a stage reported again from a lower
    count, or another stage, starts a new part), the bar's text names the
    stage and its count, and :meth:`close` fills the bar (the call is done)
    and ends its line.

    Parameters
    ----------
    desc : str
        What runs (``"fit"``, ``"sweep"``).
    file : text stream, optional
        Where to draw (default: ``sys.stderr`` at construction).
    disable : bool, default=False
        Draw nothing (the callback still accepts calls).
    """

    def __init__(
        self, desc: str = "fit", file: TextIO | None = None, disable: bool = False
    ) -> None:
        self.desc = desc
        self._bar = tqdm(
            total=0,
            desc=desc,
            file=sys.stderr if file is None else file,
            disable=disable,
            leave=True,
            dynamic_ncols=True,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n}/{total} [{elapsed}]",
        )
        self._parts: list[list[int]] = []  # [done, total] of each part so far
        self._running: dict[str, int] = {}  # stage -> its part now
        self._drawn = 0.0  # when the bar was last drawn (time.monotonic)

    def __call__(self, stage: str, done: int, total: int) -> None:
        done, total = max(int(done), 0), max(int(total), 1)
        i = self._running.get(stage)
        # A stage reported again from a lower count (or another total) is a
        # new part: its last part is over (e.g. a rival bank's folds).
        new_part = i is None or done < self._parts[i][0] or total != self._parts[i][1]
        if new_part:
            if i is not None:
                self._parts[i][0] = self._parts[i][1]
            self._parts.append([0, total])
            i = self._running[stage] = len(self._parts) - 1
        self._parts[i][0] = min(done, total)
        self._bar.total = sum(t for _, t in self._parts)
        self._bar.n = sum(d for d, _ in self._parts)
        # Redraw at most 5 times a second (a stage's steps can be many and
        # fast), but always at a stage's start and end.
        now = time.monotonic()
        redraw = new_part or done >= total or now - self._drawn >= 0.2
        self._bar.set_description_str(
            f"{self.desc} ({stage} {done}/{total})", refresh=redraw
        )
        if redraw:
            self._drawn = now

    def close(self) -> None:
        """Fill the bar (the work is done) and end its line."""
        total = max(sum(t for _, t in self._parts), 1)
        self._bar.total = self._bar.n = total
        self._bar.set_description_str(self.desc, refresh=False)
        self._bar.close()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None:
            self.close()
        else:  # leave the bar where the work stopped
            self._bar.close()


def progress_for(
    verbose: int, progress: Progress | None, desc: str
) -> tuple[Progress | None, ProgressBar | None]:
    """The callback a call with ``verbose`` and ``progress`` reports to: the
    caller's own, else a :class:`ProgressBar` when ``verbose`` (returned
    second, for the caller to close), else None."""
    if progress is not None or not verbose:
        return progress, None
    bar = ProgressBar(desc)
    return bar, bar
