"""Row losses at blocks of sensor subsets, kept across one fit's growths.

The chain's and the routed DAG's searches rank sensors by each scored row's
loss at its out-of-fold outputs under a block of candidate subsets (``held``
plus each sensor not held). The choice among strategies grows each DAG
again on its fit rows (:func:`~budgetdag_core.strategies.choose_strategy`),
and those searches ask the same blocks for rows the first growth scored: a
:class:`LossMemo` answers them from its tables, asking the bank only for the
rows it lacks, with the same block (a row's outputs depend on its own
values and the block, never on the other rows asked with it: what every
``RowTable`` of probabilities relies on). A memo belongs to one fit's
candidates (``StrategyBanks.loss_memo``): the same rows of the same
training data, the same fold models.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ._growth import RowLoss, RowTable

#: Most bytes of losses one memo keeps (then it answers without keeping
#: more): about 250 blocks of 64 subsets of 2 000 scored rows each (a
#: digits bank fit kept 67 MB).
MEMO_BYTES = 256 * 2**20


class KeptLoss:
    """A :data:`~budgetdag_core.strategies.RowLoss` whose losses at blocks
    of subsets are kept in ``memo`` under ``key`` (what names the loss; the
    training data are those of the memo's fit, which a fit handed the
    candidates checks against their bank; :func:`block_losses` consults
    it)."""

    def __init__(self, row_loss: RowLoss, memo: LossMemo, key: Any) -> None:
        self.row_loss, self.memo, self.key = row_loss, memo, key

    def __call__(self, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
        return self.row_loss(rows, values)


class LossMemo:
    """Tables of per-row losses at blocks of subsets (rows x subsets), one
    per loss, bank and block; at most ``max_bytes`` of them (then blocks not
    kept yet are computed and not kept). Thread-safe; not pickled (a
    process that receives one starts empty).

    Examples
    --------
    >>> memo = LossMemo()
    >>> memo.n_bytes
    0
    """

    def __init__(self, max_bytes: int = MEMO_BYTES) -> None:
        self.max_bytes = int(max_bytes)
        self._init()

    def _init(self) -> None:
        self._tables: dict[tuple, RowTable] = {}
        self._banks: dict[int, Any] = {}  # id -> fold models (kept alive)
        self._lock = threading.Lock()
        self.n_bytes = 0

    def __getstate__(self) -> dict[str, Any]:
        return {"max_bytes": self.max_bytes}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.max_bytes = int(state["max_bytes"])
        self._init()

    def kept(self, row_loss: RowLoss, key: Any) -> KeptLoss:
        """``row_loss`` with its block losses kept here under ``key``."""
        return KeptLoss(row_loss, self, key)

    def clear(self) -> None:
        """Forget every table (the fit is over)."""
        with self._lock:
            self._tables.clear()
            self._banks.clear()
            self.n_bytes = 0

    def losses(
        self,
        bank: Any,
        X: np.ndarray,
        rows: np.ndarray,
        trial: np.ndarray,
        loss: KeptLoss,
    ) -> np.ndarray:
        """``loss(rows, bank.oof_at(X, rows, trial))`` (rows x subsets), the
        rows this memo holds for the block ``trial`` from its table."""
        models = getattr(bank, "fold_models_", bank)
        token = (loss.key, id(models), trial.shape, trial.tobytes())
        with self._lock:
            table = self._tables.get(token)
        if table is not None:
            known, missing, _ = table.lookup(rows)
            if known is not None:
                return known
        else:
            missing = np.unique(rows)
        values = loss(missing, bank.oof_at(X, missing, trial))
        with self._lock:
            table = self._tables.get(token)
            if table is None and self.n_bytes + values.nbytes <= self.max_bytes:
                table = self._tables[token] = RowTable.like(values)
                self._banks[id(models)] = models
            if table is not None:  # (a kept block takes its new rows: bounded)
                table.add(missing, values)
                self.n_bytes += values.nbytes
        if table is None:  # not kept: the rows asked, from the values computed
            return values[np.searchsorted(missing, rows)]
        return table.get(rows)


def block_losses(
    bank: Any,
    X: np.ndarray,
    rows: np.ndarray,
    trial: np.ndarray,
    row_loss: RowLoss | Callable[..., np.ndarray],
) -> np.ndarray:
    """Each of ``rows``' ``row_loss`` at its out-of-fold outputs under each
    subset of the block ``trial`` (bool, subsets x sensors): rows x subsets,
    from ``row_loss``'s memo where it is a :class:`KeptLoss`."""
    if isinstance(row_loss, KeptLoss):
        return row_loss.memo.losses(bank, X, rows, np.asarray(trial, bool), row_loss)
    return row_loss(rows, bank.oof_at(X, rows, trial))


__all__ = ["MEMO_BYTES", "KeptLoss", "LossMemo", "block_losses"]
