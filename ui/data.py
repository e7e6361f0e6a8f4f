"""The data the app trains on: a bundled demo or a cleaned upload (no Streamlit).

Both are the library's :class:`~budgetdag_core.Dataset`; this module keeps the
session's side: the app's demo split, and an upload with its cleaning recipe.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from budgetdag_core import Dataset, load_demo
from budgetdag_core.tables import (
    Fix,
    Problem,
    RowNames,
    apply_fixes,
    combine_train_test,
    diagnose,
    one_hot_groups,
    split_train_test,
)
from ui.grouping import suggest_spec

DEMO_SPLIT = {"test_fraction": 0.25, "random_state": 0}
"""How the app splits the demos without a test file (``load_demo``'s defaults)."""


def demo_token(name: str) -> str:
    return f"demo:{name}"


def load_app_demo(name: str) -> Dataset:
    """A bundled demo with the app's split (:data:`DEMO_SPLIT`)."""
    return load_demo(name, **DEMO_SPLIT)


def demo_dataset(demo: Dataset) -> Dataset:
    """A demo from :func:`load_app_demo` as the app's data: named by its
    token, pickled (session store, worker processes) as its recipe."""
    return dataclasses.replace(
        demo,
        kind="demo",
        token=demo_token(demo.name),
        recipe={"name": demo.name, **DEMO_SPLIT},
    )


def _demo_from_name(name: str, split: dict[str, Any]) -> Dataset:
    """A demo in a session file written before the app used the library's
    ``Dataset`` (kept for a day): rebuilt from the package's files."""
    return demo_dataset(load_demo(name, **split))


@dataclass
class Upload:
    """Uploaded table(s), the cleaning recipe, and the cleaned result.

    With a second (test) file the two tables are stacked; ``is_train`` marks the
    rows of the first, so cleaning treats both alike and imputation learns its
    fill values from training rows only.
    """

    name: str
    raw: pd.DataFrame
    description: str
    file_id: str = ""
    test_name: str | None = None
    raw_test: pd.DataFrame | None = None
    test_file_id: str = ""
    fixes: list[Fix] = field(default_factory=list)
    work: pd.DataFrame = field(init=False)
    is_train: pd.Series | None = field(init=False, default=None)
    #: :meth:`findings` of :attr:`work`, by label and folds (the Data page
    #: asks on every rerun; the leak checks fit a small tree per column).
    _findings: dict[tuple[str, int], list[Problem]] = field(
        init=False, default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.rebuild()

    def __getstate__(self) -> dict[str, Any]:
        # The cleaned table is the recipe replayed: kept as raw tables + fixes.
        left = ("work", "is_train", "_findings")
        return {k: v for k, v in vars(self).items() if k not in left}

    def __setstate__(self, kept: dict[str, Any]) -> None:
        vars(self).update(kept)
        self.rebuild()

    def rebuild(self) -> None:
        """Replay :attr:`fixes` on the raw table(s); ``ValueError`` if one fails."""
        if self.raw_test is None:
            frame, is_train = self.raw, None
        else:
            frame, is_train = combine_train_test(
                self.raw, self.raw_test, name=self.test_name or "The test file"
            )
        self.work = apply_fixes(frame, self.fixes, fit_rows=is_train)
        self.is_train = is_train
        self._findings = {}

    def findings(
        self, label: str, cv: int, task: str = "classification"
    ) -> list[Problem]:
        """:func:`~budgetdag_core.tables.diagnose` of :attr:`work` with
        ``label`` for ``cv`` folds and ``task``, rows named as
        :attr:`row_names` says (no note on many columns: the Sensors page
        groups them, and the library's default trains any number). Kept until
        the next rebuild."""
        key = (label, cv, task)
        if key not in self._findings:
            self._findings[key] = diagnose(
                self.work,
                label,
                cv=cv,
                row_names=self.row_names,
                max_sensors=None,
                task=task,
            )
        return self._findings[key]

    def add_fix(self, fix: Fix) -> None:
        """Apply one more fix; on failure the recipe is left unchanged."""
        self.fixes.append(fix)
        try:
            self.rebuild()
        except Exception:
            self.fixes.pop()
            self.rebuild()
            raise

    def set_test(
        self, name: str | None, frame: pd.DataFrame | None, file_id: str = ""
    ) -> None:
        """Use a second file as the test set (None: back to a random split)."""
        old = (self.test_name, self.raw_test, self.test_file_id)
        self.test_name, self.raw_test, self.test_file_id = name, frame, file_id
        try:
            self.rebuild()
        except Exception:
            self.test_name, self.raw_test, self.test_file_id = old
            self.rebuild()
            raise

    def to_dataset(
        self,
        label: str,
        *,
        test_fraction: float = 0.25,
        random_state: int = 0,
        task: str = "classification",
    ) -> Dataset:
        """Split (or use the test file) and wrap as a :class:`Dataset` of
        ``task`` (a regression's split is not stratified)."""
        frame = self.work
        if self.is_train is None:
            train, test = split_train_test(
                frame,
                label,
                test_fraction=test_fraction,
                random_state=random_state,
                stratify=task == "classification",
            )
            how = f"random {test_fraction:.0%} test split (seed {random_state})"
        else:
            mask = self.is_train.reindex(frame.index, fill_value=False).to_numpy()
            train = frame[mask].reset_index(drop=True)
            test = frame[~mask].reset_index(drop=True)
            if len(train) == 0 or len(test) == 0:
                raise ValueError(
                    "After cleaning, the training or the test table has no rows left."
                )
            how = f"test set from {self.test_name}"
        features = [str(c) for c in frame.columns if c != label]
        return Dataset(
            self.name,
            train,
            test,
            label,
            suggest_spec(features, together=one_hot_groups(self.fixes, features)).spec,
            f"Uploaded table {self.name}: {how}.",
            kind="upload",
            task=task,
        )

    @property
    def row_names(self) -> RowNames | None:
        """How messages name rows of :attr:`work` (``diagnose``'s
        ``row_names``): None, the reader's file rows, for one file; with a
        test file stacked under the first, the row and the file."""
        if self.is_train is None:
            return None
        n_train = int(self.is_train.sum())

        def names(labels: list[Any]) -> list[str]:
            return [
                f"{i + 2} of {self.name}"
                if i < n_train
                else f"{i - n_train + 2} of {self.test_name}"
                for i in labels
            ]

        return names
