"""Sphinx configuration of the BudgetDAG documentation.

Build it from the repository root (the CI runs the same command)::

    pip install -e ".[docs]"
    sphinx-build -W -n --keep-going -b html docs docs/_build/html

The examples gallery (``docs/examples/``) runs at build time and draws its
figures; the API reference is generated from ``budgetdag_core.__all__`` and
the ``__all__`` of the subpackages it lists (``docs/api/``).
"""

from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))  # budgetdag_core from this checkout

# The gallery's examples are small: one BLAS/OpenMP thread per worker keeps a
# shared machine's build from oversubscribing its cores (set before numpy loads).
os.environ.setdefault("OMP_NUM_THREADS", "1")

from sphinx_gallery.sorting import ExplicitOrder  # noqa: E402

import budgetdag_core  # noqa: E402

project = "BudgetDAG"
author = "BudgetDAG developers"
copyright = "BudgetDAG developers"
release = budgetdag_core.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",  # security.md and development.md (CONTRIBUTING.md)
    "plotly_scraper",  # docs/_ext: the gallery's plotly figures
    "cli_reference",  # docs/_ext: the CLI reference from the argparse parser
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    "examples",  # the gallery sources; sphinx-gallery writes auto_examples/
    "_intersphinx",  # the inventories and their README
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
]
root_doc = "index"

# The documented subpackages: the modules the root's __all__ lists.
PUBLIC_MODULES = [budgetdag_core] + [
    module
    for module in (getattr(budgetdag_core, name) for name in budgetdag_core.__all__)
    if inspect.ismodule(module)
]
#: The public API's types (classes and ``Progress``), by name: their module.
#: A name the root exports is the root's (``TradeoffResult``).
_PUBLIC_TYPES: dict[str, str] = {}
for _module in PUBLIC_MODULES:
    for _name in _module.__all__:
        if _name[:1].isupper() and not _name.isupper():  # not DEMOS, BANK_KINDS
            _PUBLIC_TYPES.setdefault(_name, _module.__name__)

# API reference: one page per public name (see api.rst and _templates/).
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
# Types in Parameters/Returns link to their pages; only the names aliased
# here are linked ("all" others stay plain text: "of", "shape", "optional").
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
numpydoc_xref_aliases = {
    "DataFrame": "pandas.DataFrame",
    "Series": "pandas.Series",
    "ndarray": "numpy.ndarray",
    "Generator": "numpy.random.Generator",
    "BaseEstimator": "sklearn.base.BaseEstimator",
    "Path": "pathlib.Path",
    "Mapping": "collections.abc.Mapping",
    "Sequence": "collections.abc.Sequence",
    "callable": "collections.abc.Callable",
    **{name: f"{module}.{name}" for name, module in _PUBLIC_TYPES.items()},
}

# Cross-references to Python, numpy, pandas and scikit-learn resolve offline
# from inventories kept in docs/_intersphinx/ (see its README.md: where each
# comes from); the links point to each project's online documentation.
_INVENTORIES = DOCS / "_intersphinx"
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", str(_INVENTORIES / "python.inv")),
    "numpy": ("https://numpy.org/doc/stable", str(_INVENTORIES / "numpy.inv")),
    "pandas": (
        "https://pandas.pydata.org/pandas-docs/stable",
        str(_INVENTORIES / "pandas.inv"),
    ),
    "sklearn": ("https://scikit-learn.org/stable", str(_INVENTORIES / "sklearn.inv")),
}

# Every cross-reference must resolve (the CI builds with -n): a broken one is
# an error, not plain text.
nitpicky = True

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "image_scrapers": ("plotly_scraper.scrape",),
    "reset_modules": (),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": ExplicitOrder(
        [
            "plot_landsat_tradeoff.py",
            "plot_whatif_one_example.py",
            "plot_regression_loss_table.py",
            "plot_deploy_saved_policy.py",
            "plot_own_csv_and_spec.py",
            "plot_many_sensors.py",
            "plot_fit_for_budget.py",
            "plot_deploy_with_delay.py",
            "plot_dask_sweep.py",
        ]
    ),
    "abort_on_example_error": True,
    "show_memory": False,
    "min_reported_time": 1,
    "capture_repr": ("_repr_html_", "__repr__"),
    "ignore_repr_types": r"plotly\.graph_objs|matplotlib",
    # "Examples using X" on each API page (see _templates/autosummary).
    "doc_module": ("budgetdag_core",),
    # A subpackage's name is linked to its page there, not to the root, which
    # still resolves a moved name (with a DeprecationWarning).
    "prefer_full_module": {rf"^{module.__name__}\." for module in PUBLIC_MODULES[1:]},
    "backreferences_dir": "api/backreferences",
}

html_theme = "pydata_sphinx_theme"
html_title = f"BudgetDAG {release}"
html_static_path = ["_static"]
html_css_files = ["budgetdag.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}
html_show_sourcelink = False


def _defining_module(member) -> str:
    """The module that defines a class member (a builtin method has only its
    class's: ``tuple.count.__objclass__``)."""
    module = getattr(member, "__module__", None)
    if module is None and hasattr(member, "__objclass__"):
        module = member.__objclass__.__module__
    if module is None and isinstance(member, property) and member.fget is not None:
        module = member.fget.__module__
    return module or ""


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out the members a class inherits from scikit-learn or Python's
    builtins (``get_params``, ``score``, a named tuple's ``count``, ...): the
    class pages list BudgetDAG's own API, inherited members included (the
    estimators' ``trace``, ``evaluate``, ... live on their shared base);
    :func:`_link_sklearn_methods` links to scikit-learn's. The generated
    ``set_*_request`` methods are scikit-learn's metadata routing."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    if what == "class":
        module = _defining_module(obj)
        if module == "builtins" or module.split(".")[0] == "sklearn":
            return True
    return None


#: scikit-learn methods a class page links to instead of repeating them.
_SKLEARN_METHODS = (
    ("get_params", "sklearn.base.BaseEstimator.get_params"),
    ("set_params", "sklearn.base.BaseEstimator.set_params"),
    ("score", "sklearn.base.ClassifierMixin.score"),
    ("score", "sklearn.base.RegressorMixin.score"),
)


def _link_sklearn_methods(app, what, name, obj, options, lines):
    """End a scikit-learn estimator's class docstring with links to the
    methods it inherits from scikit-learn (left off its page)."""
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

    if what != "class" or not isinstance(obj, type):
        return
    if not issubclass(obj, BaseEstimator):
        return
    mixins = {"ClassifierMixin": ClassifierMixin, "RegressorMixin": RegressorMixin}
    links = []
    for method, target in _SKLEARN_METHODS:
        owner = target.split(".")[2]
        if owner in mixins and not issubclass(obj, mixins[owner]):
            continue
        links.append(f":meth:`~{target}`")
    lines += [
        "",
        ".. rubric:: scikit-learn's methods",
        "",
        "Inherited from scikit-learn: " + ", ".join(links) + ".",
    ]


def setup(app):
    app.connect("autodoc-process-docstring", _link_sklearn_methods)
    app.connect("autodoc-skip-member", _skip_foreign_members)
