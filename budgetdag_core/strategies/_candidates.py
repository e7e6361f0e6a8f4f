"""The candidates of a many-sensor fit: one bank bound to each strategy's DAG.

A many-sensor fit fits one any-subset bank (its fold models) and grows each
strategy's DAG on it; each DAG is bound to a copy of the bank (its states'
columns and temperatures, sharing the fold models). Which strategies were
grown, and which one a fit kept, is this module's and the estimator's
business, not the bank's: a bank knows the DAG it is bound to
(``bank.sparse_growth_``), never its siblings nor the choice among them.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from ._memo import LossMemo


def strategy_key(strategy: str, kind: str | None = None) -> str:
    """The key of a strategy's bank among a fit's candidates
    (:class:`StrategyBanks`, a :class:`StrategyChoice`'s scores): the
    strategy's name, with ``"@kind"`` for the banks of a rival bank kind
    (:meth:`~budgetdag_core.bank.AutoMaskedBank.fit_rival`).

    Examples
    --------
    >>> strategy_key("routed"), strategy_key("routed", "masked_mlp")
    ('routed', 'routed@masked_mlp')
    """
    return strategy if kind is None else f"{strategy}@{kind}"


def strategy_name(key: str) -> str:
    """The strategy of a candidate's key (:func:`strategy_key` inverted).

    Examples
    --------
    >>> strategy_name("routed@masked_mlp"), strategy_name("chain")
    ('routed', 'chain')
    """
    return key.split("@", 1)[0]


class StrategyBanks(Mapping[str, Any]):
    """What a many-sensor bank fit built: a bank bound to each strategy's DAG.

    A read-only mapping from candidate key (:func:`strategy_key`:
    ``"chain"``, ``"routed"``, ``"grown"``, ``"routed@masked_mlp"`` for a
    rival bank kind's) to a bank bound to that strategy's DAG; the banks
    share their fold models. ``fit_bank`` returns one beyond
    ``MAX_FULL_DAG_SENSORS`` sensors, and a fit given one (``fit(X, y,
    bank=...)``) chooses among its DAGs at its own cost scale; a fitted
    model keeps it as ``strategy_banks_`` and its chosen bank as ``bank_``.

    Parameters
    ----------
    banks : mapping of str to bank
        In the order of preference (the first is the simplest, the choice's
        default).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> chain, routed = SimpleNamespace(), SimpleNamespace()
    >>> banks = StrategyBanks({"chain": chain, "routed": routed})
    >>> list(banks), banks.key_of(routed), banks.default is chain
    (['chain', 'routed'], 'routed', True)
    >>> list(banks.only("routed"))
    ['routed']
    """

    def __init__(
        self, banks: Mapping[str, Any], loss_memo: LossMemo | None = None
    ) -> None:
        if not banks:
            raise ValueError("A many-sensor bank fit built no strategy's DAG.")
        self._banks = dict(banks)
        self._init_held_out(loss_memo)

    def _init_held_out(self, loss_memo: LossMemo | None = None) -> None:
        self._held_out: dict[tuple[str, str], Any] = {}
        self._held_out_lock = threading.RLock()
        self._keeping = 0
        #: The row losses the candidates' growths asked (``strategies.LossMemo``):
        #: their growths on the choice's fit rows ask the same blocks.
        self.loss_memo = LossMemo() if loss_memo is None else loss_memo

    def __getstate__(self) -> dict[str, Any]:
        # The held-out growths are a cache of this fit's choices: not saved.
        return {"_banks": self._banks}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._banks = state["_banks"]
        self._init_held_out()

    def held_out_growth(
        self, key: str, fit_rows: np.ndarray, grow: Callable[[], Any]
    ) -> Any:
        """``grow()``: candidate ``key``'s DAG grown again on ``fit_rows``
        alone (``strategies.choose_strategy`` judges it on the other rows),
        grown once per candidate and rows: every point of a sweep judges
        the same parts. Growths run one at a time (threads of a sweep wait
        for the one that grows it)."""
        rows = np.ascontiguousarray(fit_rows, dtype=np.intp)
        token = (key, hashlib.sha256(rows.tobytes()).hexdigest())
        with self._held_out_lock:
            if token not in self._held_out:
                self._held_out[token] = grow()
            return self._held_out[token]

    def strip_held_out(self) -> None:
        """Forget the held-out growths' probabilities, keeping their DAGs
        and rows (what took long to find): a fitted model keeps its
        candidates, and the probabilities of four splits' DAGs came to
        several times its own DAG's. A later fit on these candidates asks
        the bank for them again. The :attr:`loss_memo` is emptied too. Not
        while :meth:`keeping_held_out`."""
        with self._held_out_lock:
            if self._keeping:
                return
            self.loss_memo.clear()
            for growth in self._held_out.values():
                if growth is not None:
                    growth.forget_probabilities()

    @contextlib.contextmanager
    def keeping_held_out(self) -> Iterator[None]:
        """Within: :meth:`strip_held_out` does nothing (a sweep's points
        share the held-out probabilities); on leaving, it strips them."""
        with self._held_out_lock:
            self._keeping += 1
        try:
            yield
        finally:
            with self._held_out_lock:
                self._keeping -= 1
            self.strip_held_out()

    def __getitem__(self, key: str) -> Any:
        return self._banks[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._banks)

    def __len__(self) -> int:
        return len(self._banks)

    def __repr__(self) -> str:
        return f"StrategyBanks({list(self._banks)})"

    @property
    def default(self) -> Any:
        """The first candidate's bank (the simplest strategy's)."""
        return next(iter(self._banks.values()))

    def key_of(self, bank: Any) -> str | None:
        """The key of ``bank`` (this very object) among the candidates."""
        return next((k for k, one in self._banks.items() if one is bank), None)

    def only(self, key: str) -> StrategyBanks:
        """The candidate ``key`` alone (a refit that keeps a fit's choice)."""
        return StrategyBanks({key: self._banks[key]})

    @classmethod
    def of(cls, bank: Any) -> StrategyBanks:
        """``bank`` itself where it is a :class:`StrategyBanks`; a bank bound
        to one strategy's DAG (a fitted model's ``bank_``), as the one
        candidate of the strategy its growth names (a bank without its
        growth, a slim saved one's, is refused by the fit's bank check)."""
        if isinstance(bank, cls):
            return bank
        growth = getattr(bank, "sparse_growth_", None)
        return cls({"grown" if growth is None else growth.strategy: bank})
