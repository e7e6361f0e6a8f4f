"""Save and load fitted policies with the metadata needed to trust and use them."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import pickle
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sklearn

from .._bounded_io import atomic_write, read_regular_file, short_repr
from .._version import __version__
from ..validation import check_params, int_in
from ._compat import current_module, upgrade_model
from ._integrity import check_model_integrity
from ._skops_checks import MAX_UNPACKED_BYTES, check_loadable_size, check_skops_archive

#: Largest policy file read from a path (a random-forest bank on landsat: 30 MB).
MAX_POLICY_FILE_BYTES = 1 << 30

FORMAT_VERSION = 1
"""Format of the skops bundle (and of pickles written before the checksum)."""

PICKLE_FORMAT_VERSION = 2
"""Format of pickle files: the model pickled inside the bundle with its SHA-256,
so a damaged file is refused before the model is unpickled."""


class PolicyVersionWarning(UserWarning):
    """A policy file was written by other library versions than those loading it.

    Examples
    --------
    >>> import warnings
    >>> from budgetdag_core import PolicyVersionWarning
    >>> issubclass(PolicyVersionWarning, UserWarning)
    True
    >>> with warnings.catch_warnings():  # e.g. refuse files of other versions
    ...     warnings.simplefilter("error", PolicyVersionWarning)
    """


#: Fit-time attributes of a sparse DAG's bank (see :func:`policy_bundle`).
SPARSE_TRAINING_ATTRS = (
    "sparse_growth_",
    "fold_models_",
    "fold_columns_",
    "fold_priors_",
    "fold_means_",
    "fold_of_",
)
#: A bank's attributes that learn new policies but do not run this one: what
#: a slim save (:func:`policy_bundle`) leaves out.
TRAINING_ONLY_ATTRS = ("oof_proba_", "oof_pred_", *SPARSE_TRAINING_ATTRS)


def policy_bundle(
    model: Any, *, slim: bool = True, skops: bool = False
) -> dict[str, Any]:
    """The model with its metadata, as :func:`save_policy` and the skops
    format store it.

    With ``slim`` the bank's out-of-fold training predictions are left out: they
    are needed to learn new policies, not to run this one. ``skops``: the
    bundle is for the skops format.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)
    # A sparse DAG's bank also keeps its growth (the training rows and what
    # the bank said of them) and its fold models, to learn policies for other
    # cost scales; a bank serving its folds keeps those as its model too.
    # skops stores plain types only: never the growth. The other strategies'
    # banks (``strategy_banks_``) learn policies only: a slim or skops save
    # leaves them out.
    bank = model.bank_
    heavy: list[str] = []
    if slim:
        heavy = [a for a in TRAINING_ONLY_ATTRS if hasattr(bank, a)]
    elif skops and hasattr(bank, "sparse_growth_"):
        heavy = ["sparse_growth_"]
    candidates = getattr(model, "strategy_banks_", None) is not None
    if heavy or (candidates and (slim or skops)):
        model = copy.copy(model)
        model.strategy_banks_ = None
        model.bank_ = copy.copy(model.bank_)
        for attr in heavy:
            delattr(model.bank_, attr)
    classes = getattr(model, "classes_", None)
    return {
        "format_version": FORMAT_VERSION,
        "budgetdag_core_version": __version__,
        "sklearn_version": sklearn.__version__,
        "sensor_spec": model.spec_.to_dict(),
        "feature_columns": list(model.spec_.columns),
        "task": "classification" if classes is not None else "regression",
        "classes": None if classes is None else list(classes),
        "label": getattr(model, "label_name_", None),
        "model": model,
    }


def save_policy(model: Any, path: str | Path, *, slim: bool = True) -> Path:
    """Pickle a fitted model with format and library versions, spec and classes.

    Works for classifiers and regressors (``"classes"`` is ``None`` for a
    regressor, ``"task"`` says which).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> import tempfile
    >>> from pathlib import Path
    >>> from budgetdag_core import load_policy, save_policy
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = save_policy(model, Path(folder) / "toy.pkl")
    ...     loaded = load_policy(path)  # runs code from the file: trusted files only
    >>> bool((loaded.predict(demo.X_test) == model.predict(demo.X_test)).all())
    True
    """
    path = Path(path)
    data = dumps_policy(model, slim=slim)
    with atomic_write(path) as fh:  # a write cut short keeps the older file
        fh.write(data)
    return path


def dumps_policy(model: Any, *, slim: bool = True) -> bytes:
    """:func:`save_policy` to bytes (for downloads).

    The model is pickled on its own and stored in the bundle with its SHA-256
    (``model_pickle``, ``model_sha256``): a file damaged in transit is refused
    with a ``ValueError`` instead of being unpickled (corrupted pickles can
    crash the interpreter). This guards against accidents, not attackers: a
    pickle runs code, so load only files you trust.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> from budgetdag_core import dumps_policy, loads_policy
    >>> data = dumps_policy(model)  # bytes, e.g. for a download
    >>> loads_policy(data).cost_scale
    0.03
    """
    bundle = policy_bundle(model, slim=slim)
    inner = pickle.dumps(bundle.pop("model"), protocol=pickle.HIGHEST_PROTOCOL)
    if bundle["classes"] is not None:  # plain Python: no numpy outside the model
        bundle["classes"] = np.asarray(bundle["classes"]).tolist()
    bundle["format_version"] = PICKLE_FORMAT_VERSION
    bundle["model_pickle"] = inner
    bundle["model_sha256"] = hashlib.sha256(inner).hexdigest()
    return pickle.dumps(bundle, protocol=pickle.HIGHEST_PROTOCOL)


def _open_pickle_bundle(bundle: Any) -> Any:
    """A format-2 pickle bundle with its model checked and unpickled."""
    if not isinstance(bundle, dict) or "model_pickle" not in bundle:
        return bundle  # format 1 (the model inline) or not a bundle
    inner = bundle["model_pickle"]
    digest = bundle.get("model_sha256")
    if not isinstance(inner, bytes) or hashlib.sha256(inner).hexdigest() != digest:
        raise ValueError(
            "This policy file is damaged: its model does not match the checksum "
            "stored with it. Download or copy the file again."
        )
    opened = {k: v for k, v in bundle.items() if k not in ("model_pickle",)}
    opened["model"] = _unpickle(inner)
    return opened


def _check_bundle(bundle: Any, formats: tuple[int, ...] = (FORMAT_VERSION,)) -> Any:
    if not isinstance(bundle, dict) or "model" not in bundle:
        raise ValueError("This file is not a BudgetDAG policy (no model bundle).")
    if bundle.get("format_version") not in formats:
        raise ValueError(
            f"Policy file format {short_repr(bundle.get('format_version'))} is not "
            f"supported (this library reads format {' and '.join(map(str, formats))})."
        )
    found = {
        "budgetdag_core": (bundle.get("budgetdag_core_version"), __version__),
        "scikit-learn": (bundle.get("sklearn_version"), sklearn.__version__),
    }
    for lib, (saved, now) in found.items():
        if saved != now:
            warnings.warn(
                f"Policy saved with {lib} {saved}, loaded with {now}: predictions "
                "may differ.",
                PolicyVersionWarning,
                stacklevel=3,
            )
    model = bundle["model"]
    upgrade_model(model)
    check_model_integrity(model)
    try:
        _check_metadata(bundle, model)
    except ValueError:
        raise
    except Exception as exc:
        raise ValueError(
            f"Invalid model file: unreadable metadata ({type(exc).__name__}: {exc})."
        ) from exc
    model.metadata_ = {k: v for k, v in bundle.items() if k != "model"}
    return model


def _check_metadata(bundle: dict[str, Any], model: Any) -> None:
    """The bundle's spec, columns and classes describe the model it holds."""
    classes = getattr(model, "classes_", None)
    expected = {
        "feature_columns": list(model.spec_.columns),
        "classes": None if classes is None else list(classes),
    }
    for key, value in expected.items():
        if key in bundle and bundle[key] != value:
            raise ValueError(
                f"Invalid model file: the bundle's {short_repr(key)} differ from the "
                "model's."
            )
    if "sensor_spec" in bundle and bundle["sensor_spec"] != model.spec_.to_dict():
        raise ValueError(
            "Invalid model file: the bundle's 'sensor_spec' differs from the model's."
        )


def load_policy(path: str | Path) -> Any:
    """Load a model written by :func:`save_policy`.

    Unpickling runs code from the file: load only files you trust. Warns
    (``PolicyVersionWarning``) when library versions differ from the saved ones.
    The model is then checked structurally (``check_model_integrity``): a file
    whose arrays are inconsistent raises ``ValueError`` naming what is wrong.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> import tempfile
    >>> from pathlib import Path
    >>> from budgetdag_core import load_policy, save_policy
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     loaded = load_policy(save_policy(model, Path(folder) / "toy.pkl"))
    >>> loaded.metadata_["classes"], loaded.spec_ == model.spec_
    ([0, 1], True)
    """
    data = read_regular_file(path, MAX_POLICY_FILE_BYTES, "policy file")
    try:
        return loads_policy(data)
    except ValueError as exc:
        raise ValueError(f"The file {str(path)!r}: {exc}") from None


def loads_policy(data: bytes) -> Any:
    """:func:`load_policy` from bytes. Same trust caveat.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> from budgetdag_core import dumps_policy, loads_policy
    >>> loaded = loads_policy(dumps_policy(model))
    >>> bool((loaded.predict(demo.X_test) == model.predict(demo.X_test)).all())
    True
    >>> loads_policy(dumps_policy(model)[:-10])  # damaged in transit
    Traceback (most recent call last):
    ...
    ValueError: ...
    """
    bundle = _open_pickle_bundle(_unpickle(data))
    return _check_bundle(bundle, (FORMAT_VERSION, PICKLE_FORMAT_VERSION))


class _Unpickler(pickle.Unpickler):
    """Finds classes that older versions kept in modules that have moved."""

    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(current_module(module), name)


def _unpickle(data: bytes) -> Any:
    """``pickle.loads``; a damaged file raises ``ValueError`` saying so."""
    try:
        return _Unpickler(io.BytesIO(data)).load()
    except Exception as exc:  # truncated, corrupted, or classes that are gone
        raise ValueError(
            "This file is not a readable policy pickle (truncated or corrupt: "
            f"{type(exc).__name__}: {exc})."
        ) from None


# ------------------------------------------------------------------ skops
# Types a policy file may hold beyond what skops trusts by default (plain
# containers, numpy arrays and most scikit-learn estimators): our own classes,
# the networkx graph of the DAG, and the scikit-learn internals of the tree
# ensembles the app offers for the bank. Anything else in a file is refused.
# Files written before a module moved are read under today's module names
# (``_compat.MOVED_MODULES``), so only today's names are listed.
SKOPS_TRUSTED_TYPES: tuple[str, ...] = (
    "budgetdag_core.bank._auto.AutoMaskedBank",
    "budgetdag_core.bank._dedicated.DedicatedMaskedBank",
    "budgetdag_core.bank._encoded.MaskEncodedClassifier",
    "budgetdag_core.bank._lgbm_trees.LightGBMRegressionTrees",
    "budgetdag_core.bank._lgbm_trees.LightGBMTrees",
    "budgetdag_core.bank._masked.MaskedBank",
    "budgetdag_core.bank._per_state.ClassifierBank",
    "budgetdag_core.bank._per_state.RegressorBank",
    "budgetdag_core.bank._sparse.SparseMaskedBank",
    "budgetdag_core.bank._sparse_regressor.MaskEncodedRegressor",
    "budgetdag_core.bank._sparse_regressor.SparseRegressorBank",
    "budgetdag_core.dag.SensorDAG",
    "budgetdag_core.estimator._classifier.BudgetDAGClassifier",
    "budgetdag_core.estimator._regressor.BudgetDAGRegressor",
    "budgetdag_core.graph_reduce.ConstantAction",
    "budgetdag_core.graph_reduce.NodePolicy",
    "budgetdag_core.reductions._base.PolicyFeatures",
    "budgetdag_core.reductions._cost_regression.CostRegression",
    "budgetdag_core.reductions._filter_tree.FilterTree",
    "budgetdag_core.reductions._filter_tree._Node",
    "budgetdag_core.sensors.SensorSpec",
    "budgetdag_core.strategies._growth.SparseSensorDAG",
    "networkx.classes.digraph.DiGraph",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.tree._tree.Tree",
)


def dumps_policy_skops(model: Any, *, slim: bool = True) -> bytes:
    """The bundle of :func:`save_policy` in the skops format, as bytes.

    skops files are read without running code from the file: loading them
    (:func:`loads_policy_skops`) only rebuilds objects of known types.

    Parameters
    ----------
    model : fitted BudgetDAGClassifier or BudgetDAGRegressor
    slim : bool, default=True
        Leave out the bank's out-of-fold training predictions.

    Returns
    -------
    bytes

    Raises
    ------
    ValueError
        Where the file would be larger than :func:`loads_policy_skops` reads
        by default (a per-state booster on a full DAG of thousands of states:
        about 90 arrays a state); :func:`save_policy` writes any model.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> from budgetdag_core import dumps_policy_skops, loads_policy_skops
    >>> data = dumps_policy_skops(model)
    >>> data[:2]  # a zip archive
    b'PK'
    >>> loads_policy_skops(data).spec_ == model.spec_
    True
    """
    data = _skops_dumps(_skops_bundle(model, slim))
    check_loadable_size(data)
    return data


class _IndexedZip(zipfile.ZipFile):
    """A zip archive being written whose ``namelist()`` answers ``in`` at
    once: skops asks it before writing each array, and a list built each
    time makes the dump quadratic in the arrays (a per-state booster bank
    holds tens of thousands)."""

    def namelist(self) -> Any:
        return self.NameToInfo.keys()


def _skops_dumps(obj: Any) -> bytes:
    """``skops.io.dumps(obj)``, deflated (the schema is verbose JSON: about 20x
    smaller), written through :class:`_IndexedZip` as skops' own dump
    writes its archive; ``skops.io.dumps`` itself where skops' saving
    context is not where this expects it."""
    import skops
    import skops.io as sio

    try:
        from skops.io._utils import SaveContext, get_state
    except ImportError:  # another skops: its own (slower) dump
        return sio.dumps(obj, compression=zipfile.ZIP_DEFLATED)
    buffer = io.BytesIO()
    with _IndexedZip(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        context = SaveContext(zip_file=archive)
        state = get_state(obj, context)
        context.clear_memo()
        state["protocol"] = context.protocol
        state["_skops_version"] = skops.__version__
        archive.writestr("schema.json", json.dumps(state, indent=2))
    return buffer.getvalue()


# Fitted attributes that are dataclasses holding a ``history`` DataFrame: skops
# does not store pandas objects, so they travel as plain dicts and are rebuilt.
_PLAIN_ATTRS = {
    "budget_report_": ("..tradeoff._budget", "BudgetReport"),
    "subset_selection_": ("..strategies", "SubsetSelection"),
}


def _skops_bundle(model: Any, slim: bool) -> dict[str, Any]:
    """:func:`policy_bundle` with what skops cannot store made plain."""
    bundle = policy_bundle(model, slim=slim, skops=True)
    # A shallow copy to edit, so the caller's model is left alone.
    saved = bundle["model"] = copy.copy(bundle["model"])
    graph = getattr(saved, "dag_", None)
    if graph is not None and "edges" in vars(graph):
        # ``G.edges`` caches a view that refers back to the graph: skops would
        # recurse forever. A copy of the graph has no cached views.
        saved.dag_ = graph.copy()
    if getattr(saved.bank_, "subset_selection_", None) is not None:
        # The bank's copy of the model's subset selection travels once, as the
        # model's (restored onto the bank on load).
        saved.bank_ = copy.copy(saved.bank_)
        del saved.bank_.subset_selection_
    plain: dict[str, dict[str, Any]] = {}
    for attr in _PLAIN_ATTRS:
        value = getattr(saved, attr, None)
        if value is None:
            continue
        delattr(saved, attr)
        fields = dict(vars(value))
        fields["history"] = value.history.to_dict(orient="list")
        plain[attr] = fields
    if plain:
        bundle["plain_attributes"] = plain
    return bundle


def _restore_plain(bundle: dict[str, Any]) -> dict[str, Any]:
    import importlib

    for attr, fields in bundle.pop("plain_attributes", {}).items():
        if attr not in _PLAIN_ATTRS:
            raise ValueError(
                f"Unknown attribute {short_repr(attr)} in the policy file."
            )
        module, name = _PLAIN_ATTRS[attr]
        cls = getattr(importlib.import_module(module, __package__), name)
        value = cls(**{**fields, "history": pd.DataFrame(fields["history"])})
        setattr(bundle["model"], attr, value)
        if attr == "subset_selection_":
            bundle["model"].bank_.subset_selection_ = value
    return bundle


def save_policy_skops(model: Any, path: str | Path, *, slim: bool = True) -> Path:
    """Write :func:`dumps_policy_skops` to ``path`` (conventionally ``.skops``).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> import tempfile
    >>> from pathlib import Path
    >>> from budgetdag_core import load_policy_skops, save_policy_skops
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = save_policy_skops(model, Path(folder) / "toy.skops")
    ...     loaded = load_policy_skops(path)
    >>> bool((loaded.predict(demo.X_test) == model.predict(demo.X_test)).all())
    True
    """
    path = Path(path)
    data = dumps_policy_skops(model, slim=slim)
    with atomic_write(path) as fh:
        fh.write(data)
    return path


def _skops_types(data: bytes) -> list[str]:
    """The types of a skops file that skops does not trust by default."""
    import skops.io as sio

    try:
        return list(sio.get_untrusted_types(data=data))
    except Exception as exc:  # not a skops schema after all
        raise ValueError(
            f"This is not a skops file ({type(exc).__name__}: {exc})."
        ) from exc


def _skops_current_modules(data: bytes) -> bytes:
    """``data`` with the module names of moved classes brought up to date.

    skops names each object's module in the archive's ``schema.json``; a file
    written before a module moved names the old one. Returned unchanged when
    nothing moved, or when ``data`` is no readable archive (the checks that
    follow say what is wrong with it).
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            schema = json.loads(archive.read("schema.json"))
            moved = _current_schema_modules(schema)
            if not moved:
                return data
            out = io.BytesIO()
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as updated:
                for info in archive.infolist():
                    content = archive.read(info)
                    if info.filename == "schema.json":
                        content = json.dumps(schema).encode()
                    updated.writestr(info, content)
    except Exception:
        return data
    return out.getvalue()


def _current_schema_modules(schema: Any) -> bool:
    """Replace moved module names in a skops schema in place; whether any moved."""
    moved, todo = False, [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            module = node.get("__module__")
            if isinstance(module, str) and current_module(module) != module:
                node["__module__"] = current_module(module)
                moved = True
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return moved


def loads_policy_skops(
    data: bytes, *, max_unpacked_bytes: int = MAX_UNPACKED_BYTES
) -> Any:
    """Load a policy written by :func:`dumps_policy_skops` / :func:`save_policy_skops`.

    First the archive is checked with bounded work, before anything is
    inflated or audited: its member count, each member's size and compression
    ratio, the total unpacked size, each array's header, the schema's nesting
    and size, and shared object ids (which must repeat their content: no
    reference may stand for more than it holds, nor contain itself). Then only
    the types skops trusts by default and those in ``SKOPS_TRUSTED_TYPES``
    are rebuilt; a file naming any other type is refused with a ``ValueError``
    listing them, before anything is built. The rebuilt model is then checked
    structurally (its number of DAG units before the DAG is rebuilt, every
    boosting tree's child and feature indices, the DAG, state columns, node
    policies, classes, see ``check_model_integrity``) before it is returned.
    Every refusal is a ``ValueError`` saying what is wrong. Warns
    (``PolicyVersionWarning``) when library versions differ from the saved
    ones.

    Parameters
    ----------
    data : bytes
        The file's content.
    max_unpacked_bytes : int, default=512 MiB
        Refuse archives whose members unpack to more than this in total (a
        server can pass less: a default landsat policy unpacks to 16 MB).

    Returns
    -------
    BudgetDAGClassifier or BudgetDAGRegressor
        With the file's metadata in ``metadata_``.

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> from budgetdag_core import dumps_policy_skops, loads_policy_skops
    >>> loaded = loads_policy_skops(dumps_policy_skops(model))
    >>> bool((loaded.predict(demo.X_test) == model.predict(demo.X_test)).all())
    True
    """
    _check_unpacked_limit("loads_policy_skops", max_unpacked_bytes)
    import skops.io as sio

    check_skops_archive(bytes(data), max_unpacked_bytes)
    data = _skops_current_modules(data)
    found = _skops_types(data)
    refused = [t for t in found if t not in SKOPS_TRUSTED_TYPES]
    if refused:
        raise ValueError(
            "The skops file holds type(s) that a BudgetDAG policy does not use: "
            f"{refused[:10]}. It was not loaded."
        )
    try:
        bundle = sio.loads(data, trusted=found)
        if isinstance(bundle, dict) and "model" in bundle:
            bundle = _restore_plain(bundle)
    except ValueError:
        raise
    except Exception as exc:  # a damaged archive or schema
        raise ValueError(
            f"This skops file is damaged ({type(exc).__name__}: {exc})."
        ) from exc
    return _check_bundle(bundle)


def load_policy_skops(
    path: str | Path, *, max_unpacked_bytes: int = MAX_UNPACKED_BYTES
) -> Any:
    """:func:`loads_policy_skops` from a regular file (at most
    ``MAX_POLICY_FILE_BYTES``).

    Examples
    --------
    >>> from budgetdag_core import BudgetDAGClassifier, toy_dataset
    >>> demo = toy_dataset(200, 50)
    >>> model = BudgetDAGClassifier(demo.spec, cost_scale=0.03, cv=3, random_state=0)
    >>> model = model.fit(demo.X_train, demo.y_train)
    >>> import tempfile
    >>> from pathlib import Path
    >>> from budgetdag_core import load_policy_skops, save_policy_skops
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = save_policy_skops(model, Path(folder) / "toy.skops")
    ...     loaded = load_policy_skops(path)
    >>> session = loaded.start()  # ready to deploy, one sensor at a time
    >>> session.next_sensor()
    'precise'
    """
    _check_unpacked_limit("load_policy_skops", max_unpacked_bytes)
    data = read_regular_file(path, MAX_POLICY_FILE_BYTES, "policy file")
    return loads_policy_skops(data, max_unpacked_bytes=max_unpacked_bytes)


def _check_unpacked_limit(caller: str, max_unpacked_bytes: Any) -> None:
    """Refuse a ``max_unpacked_bytes`` that is not a positive int. (No upper
    bound of its own: each member is capped at ``MAX_MEMBER_BYTES`` and their
    number too, see ``check_skops_archive``.)"""
    check_params(
        caller,
        {"max_unpacked_bytes": [int_in(1)]},
        max_unpacked_bytes=max_unpacked_bytes,
    )
