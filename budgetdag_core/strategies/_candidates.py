"""The candidates of a many-sensor fit: one bank bound to each strategy's DAG.

A many-sensor fit fits one any-subset bank (its fold models) and grows each
strategy's DAG on it; each DAG is bound to a copy of the bank (its states'
columns and temperatures, sharing the fold models). The simplest candidate
is grown with the bank; the others wait (:class:`PendingBank`) until a fit
keeps them: the choice among them grows each again on its own fit rows
anyway, and the DAG on every row of one that is not kept was work thrown
away. Which strategies were grown, and which one a fit kept, is this
module's and the estimator's business, not the bank's: a bank knows the DAG
it is bound to (``bank.sparse_growth_``), never its siblings nor the choice
among them.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ._memo import LossMemo

#: Most bytes of held-out growths' probabilities a fitted model keeps for a
#: refit (:meth:`StrategyBanks.strip_held_out`): asking the bank for them
#: again was most of a refit's time.
HELD_OUT_BYTES = 64 * 2**20


#: Whether a pickled :class:`StrategyBanks` keeps its held-out growths
#: (:func:`held_out_pickled`).
_SEND_HELD_OUT: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "send_held_out", default=False
)


@contextlib.contextmanager
def held_out_pickled() -> Iterator[None]:
    """Within: a pickled :class:`StrategyBanks` keeps its held-out growths
    (their DAGs, rows and, as :meth:`StrategyBanks.strip_held_out` left
    them, probabilities), for a copy that fits again at another cost scale
    in another process (the app's workers): growing them again took most of
    such a fit. Outside (a saved model), they are a cache left out."""
    token = _SEND_HELD_OUT.set(True)
    try:
        yield
    finally:
        _SEND_HELD_OUT.reset(token)


#: Where a pickled :class:`StrategyBanks` puts its held-out growths instead
#: of in its own pickle (:func:`held_out_apart`), and where an unpickled one
#: says it waits for them (:func:`held_out_slots`).
_HELD_OUT_APART: contextvars.ContextVar[list[dict] | None] = contextvars.ContextVar(
    "held_out_apart", default=None
)
_HELD_OUT_SLOTS: contextvars.ContextVar[dict[int, StrategyBanks] | None] = (
    contextvars.ContextVar("held_out_slots", default=None)
)


@contextlib.contextmanager
def held_out_apart() -> Iterator[list[dict[tuple[str, str], Any]]]:
    """Within: a pickled :class:`StrategyBanks` leaves its held-out growths
    out of its own pickle and appends them to the list this yields, its
    pickle naming their place in it. Pickle that list afterwards and send
    it after the rest; on the other side :func:`held_out_slots` and
    :func:`restore_held_out` put the growths back. The app's worker returns
    a fitted model this way: the growths were most of its bytes, and the
    page can show the model before they arrive."""
    apart: list[dict[tuple[str, str], Any]] = []
    token = _HELD_OUT_APART.set(apart)
    try:
        yield apart
    finally:
        _HELD_OUT_APART.reset(token)


@contextlib.contextmanager
def held_out_slots() -> Iterator[dict[int, StrategyBanks]]:
    """Within: an unpickled :class:`StrategyBanks` whose held-out growths
    were pickled apart (:func:`held_out_apart`) enters the dict this yields,
    under their place in that list (:func:`restore_held_out`)."""
    slots: dict[int, StrategyBanks] = {}
    token = _HELD_OUT_SLOTS.set(slots)
    try:
        yield slots
    finally:
        _HELD_OUT_SLOTS.reset(token)


def restore_held_out(
    slots: Mapping[int, StrategyBanks], apart: list[dict[tuple[str, str], Any]]
) -> None:
    """Give each :class:`StrategyBanks` of ``slots`` (:func:`held_out_slots`)
    its held-out growths from ``apart`` (the list :func:`held_out_apart`
    yielded, unpickled). A growth it has grown meanwhile stays."""
    for at, banks in slots.items():
        if at < len(apart):
            banks.add_held_out(apart[at])


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


@runtime_checkable
class PendingBank(Protocol):
    """A candidate not grown yet: its fold models' ``bank`` (what its
    growths on the choice's fit rows score with) and :meth:`grow`."""

    bank: Any

    def grow(self, loss_memo: LossMemo) -> Any | None:
        """Its DAG grown on every training row and a copy of :attr:`bank`
        bound to it, or None where the strategy finds nothing to grow."""
        ...


class StrategyBanks(Mapping[str, Any]):
    """What a many-sensor bank fit built: a bank bound to each strategy's DAG.

    A read-only mapping from candidate key (:func:`strategy_key`:
    ``"chain"``, ``"routed"``, ``"grown"``, ``"routed@masked_mlp"`` for a
    rival bank kind's) to a bank bound to that strategy's DAG; the banks
    share their fold models. ``fit_bank`` returns one beyond
    ``MAX_FULL_DAG_SENSORS`` sensors, and a fit given one (``fit(X, y,
    bank=...)``) chooses among its DAGs at its own cost scale; a fitted
    model keeps it as ``strategy_banks_`` and its chosen bank as ``bank_``.

    A candidate given as a :class:`PendingBank` is grown when first asked
    for (``banks[key]``, :meth:`items`, :meth:`values`), once; where its
    strategy then finds nothing to grow on every row, it leaves the mapping
    (``banks[key]`` raises ``KeyError``). ``key in banks``, ``len`` and
    iteration grow nothing.

    Parameters
    ----------
    banks : mapping of str to bank or PendingBank
        In the order of preference (the first is the simplest, the choice's
        default: a bank, not pending).

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
        if isinstance(next(iter(self._banks.values())), PendingBank):
            raise ValueError("The simplest candidate must be grown, not pending.")
        self._init_held_out(loss_memo)

    def _init_held_out(self, loss_memo: LossMemo | None = None) -> None:
        self._held_out: dict[tuple[str, str], Any] = {}
        self._held_out_lock = threading.RLock()
        self._keeping = 0
        #: The row losses the candidates' growths asked (``strategies.LossMemo``):
        #: their growths on the choice's fit rows ask the same blocks.
        self.loss_memo = LossMemo() if loss_memo is None else loss_memo

    def __getstate__(self) -> dict[str, Any]:
        # The held-out growths are a cache of this fit's choices: not saved,
        # but sent along to another process (held_out_pickled).
        state: dict[str, Any] = {"_banks": self._banks}
        apart = _HELD_OUT_APART.get()
        if apart is not None or _SEND_HELD_OUT.get():
            with self._held_out_lock:
                held = dict(self._held_out)
            if apart is not None:
                state["held_out_at"] = len(apart)
                apart.append(held)
            else:
                state["held_out"] = held
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._banks = state["_banks"]
        self._init_held_out()
        self._held_out.update(state.get("held_out", {}))
        slots = _HELD_OUT_SLOTS.get()
        if slots is not None and "held_out_at" in state:
            slots[state["held_out_at"]] = self

    def add_held_out(self, held: Mapping[tuple[str, str], Any]) -> None:
        """Take ``held``'s held-out growths (another copy's, e.g. a worker
        process's), keeping those grown here already."""
        with self._held_out_lock:
            for token, growth in held.items():
                self._held_out.setdefault(token, growth)

    def is_grown(self, key: str) -> bool:
        """Whether candidate ``key`` is grown (not a :class:`PendingBank`)."""
        return not isinstance(self._banks[key], PendingBank)

    def fold_bank(self, key: str) -> Any:
        """The bank whose fold models candidate ``key``'s strategy grows on:
        its bank, or a pending one's (growing nothing)."""
        one = self._banks[key]
        return one.bank if isinstance(one, PendingBank) else one

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
        """Shrink the held-out growths to what a later fit on these
        candidates (a refit at another cost scale) is likely to reuse,
        keeping their DAGs and rows (what took long to find): their derived
        tables go; their probabilities stay while all kept come to at most
        :data:`HELD_OUT_BYTES`, in the order they were grown (a choice
        judges the first parts first), and a later fit asks the bank again
        for the others'. A fitted model keeps its candidates, and the
        tables of four splits' DAGs came to several times its own DAG's.
        The :attr:`loss_memo` is emptied too. Not while
        :meth:`keeping_held_out`."""
        with self._held_out_lock:
            if self._keeping:
                return
            self.loss_memo.clear()
            kept = 0
            for growth in self._held_out.values():
                if growth is None:
                    continue
                growth.forget_derived()
                size = growth.table_bytes
                if kept + size > HELD_OUT_BYTES:
                    growth.forget_probabilities()
                else:
                    kept += size

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
        one = self._banks[key]
        if not isinstance(one, PendingBank):
            return one
        with self._held_out_lock:  # grown once: threads of a sweep wait
            one = self._banks.get(key)
            if isinstance(one, PendingBank):
                one = one.grow(self.loss_memo)
                if one is None:
                    del self._banks[key]
                else:
                    self._banks[key] = one
        if one is None:
            raise KeyError(f"{key!r}: its strategy found nothing to grow.")
        return one

    def __contains__(self, key: object) -> bool:
        return key in self._banks

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._banks))

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        """Every candidate and its bank, the pending ones grown (those that
        found nothing to grow left out)."""
        out = []
        for key in self:
            with contextlib.suppress(KeyError):
                out.append((key, self[key]))
        return out

    def values(self) -> list[Any]:  # type: ignore[override]
        """Every candidate's bank, as :meth:`items`."""
        return [one for _, one in self.items()]

    def grown(self) -> dict[str, Any]:
        """The candidates grown so far and their banks (growing nothing)."""
        return {
            key: one
            for key, one in list(self._banks.items())
            if not isinstance(one, PendingBank)
        }

    def __len__(self) -> int:
        return len(self._banks)

    def __repr__(self) -> str:
        return f"StrategyBanks({list(self._banks)})"

    @property
    def default(self) -> Any:
        """The first candidate's bank (the simplest strategy's, grown)."""
        return next(iter(self._banks.values()))

    def key_of(self, bank: Any) -> str | None:
        """The key of ``bank`` (this very object) among the candidates."""
        return next((k for k, one in self.grown().items() if one is bank), None)

    def only(self, key: str) -> StrategyBanks:
        """The candidate ``key`` alone (a refit that keeps a fit's choice)."""
        return StrategyBanks({key: self[key]})

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
