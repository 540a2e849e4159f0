"""Sphinx configuration of rejectopt's documentation site.

Build it with ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (the ``docs``
extra; with the ``deep`` extra the deep-network example runs too). The API reference is generated
from the ``__all__`` of the public modules (``API_MODULES``), so a name added to the library
appears here without editing this folder, and numpydoc's validation refuses (with ``-W``) a public
function or class whose docstring lacks Parameters, Returns or an Examples block.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import shutil
from pathlib import Path

from sphinx.pycode import ModuleAnalyzer

import rejectopt

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

# Figures are drawn without a display.
os.environ.setdefault("MPLBACKEND", "Agg")

project = "rejectopt"
author = "the rejectopt developers"
copyright = "2026, the rejectopt developers"
release = rejectopt.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 bundled (the PyPI package sphinx-mathjax-offline, the docs extra): the site's maths
    # renders without internet, from _static/mathjax/tex-chtml.js, instead of from a CDN.
    "sphinx-mathjax-offline",
    "sphinx.ext.doctest",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "api/generated/*.examples", "sg_execution_times.rst"]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
# numpydoc renames each docstring's References ([1] -> [R<hash>-1]); a module docstring that lists
# references its functions cite then warns that the renamed citation is unreferenced, although
# the reference list is what the page is meant to show.
suppress_warnings = ["ref.citation"]

html_theme = "pydata_sphinx_theme"
html_title = "rejectopt"
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": False,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = ["_static"]
# Long shell commands wrap instead of hiding behind a horizontal scrollbar (getting started).
html_css_files = ["rejectopt.css"]

# --- API reference -----------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# Every public function and class: documented parameters (PR01), a Returns section (RT01 for
# functions) and an Examples block (EX01); GL08: a public object without a docstring. Methods
# are documented on their class's page but validated only through their class.
numpydoc_validation_checks = {"GL08", "PR01", "RT01", "EX01"}
numpydoc_validation_exclude = {
    r"\.[A-Z]\w*\.\w+$",  # methods and attributes of a class
}

#: The public API: the modules of the reference, in the order of the package's layers (top first).
#: The union of their ``__all__`` is every public name; the library's (all but the experiment
#: contract, rejectopt.pipeline.experiments) are at most 150 (tests/test_house.py). The
#: pipeline's own modules (the built-in experiments, the results tables, report, config,
#: resources, cli) are internal and stay out of the reference.
API_MODULES = [
    "rejectopt.estimator",
    "rejectopt.logits",
    "rejectopt.model",
    "rejectopt.fitting",
    "rejectopt.targets",
    "rejectopt.scores",
    "rejectopt.classifiers",
    "rejectopt.datasets",
    "rejectopt.landmarks",
    "rejectopt.metrics",
    "rejectopt.selective",
    "rejectopt.ood",
    "rejectopt.splits",
    "rejectopt.stats",
    "rejectopt.exceptions",
    "rejectopt.pipeline.experiments",
]


def _data_doc(module_name: str, member: str) -> list[str]:
    """The ``#:`` comment of a public constant, read in the module that assigns it.

    autodoc reads only the source of the module a page names, so a constant a package re-exports
    would show its type's docstring; and numpydoc would validate a constant like a function.
    The assigning module is found among the package's own modules: the one whose ``#:`` comment
    names the member and whose attribute is the very object.
    """
    module = importlib.import_module(module_name)
    value = getattr(module, member)
    candidates = [module_name] + [
        info.name for info in pkgutil.walk_packages(rejectopt.__path__, "rejectopt.")
    ]
    for candidate in candidates:
        docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
        if ("", member) in docs and getattr(
            importlib.import_module(candidate), member, None
        ) is value:
            return list(docs["", member])
    raise RuntimeError(
        f"{module_name}.{member}: a public constant without a #: comment where it is assigned"
    )


def _api_pages() -> None:
    """Write ``api/<module>.rst`` for every public module, listing its ``__all__``.

    The folder is generated (git-ignored) and rewritten from scratch, so the pages of a module or
    name that left the public API do not linger as orphans, which ``-W`` would refuse.
    """
    api = DOCS / "api"
    shutil.rmtree(api, ignore_errors=True)
    api.mkdir()
    index = ["API reference", "=============", "", ".. toctree::", "   :maxdepth: 1", ""]
    for name in API_MODULES:
        module = importlib.import_module(name)
        index.append(f"   {name}")
        title = f"``{name}``"
        lines = [title, "=" * len(title), "", f".. automodule:: {name}", "   :no-members:", ""]
        kinds = {"Classes": [], "Functions": [], "Data": []}
        for member in module.__all__:
            obj = getattr(module, member)
            if isinstance(obj, type):
                kinds["Classes"].append(member)
            elif callable(obj):
                kinds["Functions"].append(member)
            else:
                kinds["Data"].append(member)
        for kind, members in kinds.items():
            if not members:
                continue
            lines += [kind, "-" * len(kind), "", f".. currentmodule:: {name}", ""]
            if kind == "Data":
                for member in members:
                    lines += [f".. data:: {member}", ""]
                    lines += [f"   {line}" if line else "" for line in _data_doc(name, member)] + [
                        ""
                    ]
                continue
            template = "class.rst" if kind == "Classes" else "function.rst"
            lines += [
                ".. autosummary::",
                "   :toctree: generated/",
                f"   :template: {template}",
                "",
            ]
            lines += [f"   {member}" for member in members] + [""]
        (api / f"{name}.rst").write_text("\n".join(lines))
    (api / "index.rst").write_text("\n".join(index) + "\n")


_api_pages()
templates_path = ["_templates"]


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out the methods a class inherits from scikit-learn (``get_params``,
    ``set_score_request``, ...): scikit-learn documents them, and their docstrings refer to its
    own glossary, which this site does not have."""
    owner = getattr(obj, "__qualname__", "")
    module = getattr(obj, "__module__", "") or ""
    if what == "class" and "." in owner and module.startswith("sklearn."):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)


# --- Example gallery ---------------------------------------------------------------------------
# The deep-network example trains with PyTorch, which only the `deep` extra installs (and on Linux
# PyPI's torch is the CUDA build, gigabytes of it): without torch its page shows the code but not
# its output, so the site builds from the `docs` extra alone (getting_started.md, "This site").
try:
    HAS_TORCH = importlib.util.find_spec("torch") is not None
except (ImportError, ValueError):  # a broken or blocked installation counts as missing
    HAS_TORCH = False

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    # Examples matching this run at the build; the others are rendered without running.
    "filename_pattern": r"/plot_" if HAS_TORCH else r"/plot_(?!deep_network\.py)",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    # A script that raises fails the build (with -W and by sphinx-gallery itself).
    "abort_on_example_error": True,
    "image_scrapers": ("matplotlib",),
    "show_memory": False,
    "min_reported_time": 1,
}
