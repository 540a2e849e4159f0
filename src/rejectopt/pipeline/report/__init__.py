"""Internal: the pipeline's rendering of the paper's tables, figures, comparison with the
published numbers and the run's provenance; not part of the public API (see
:mod:`rejectopt.pipeline.experiments` for the experiment contract).

Everything is computed from one tidy table, ``results/summary.csv`` (columns
:data:`rejectopt.pipeline.experiments.paper.SUMMARY_COLUMNS`); stored numbers are raw, formatting
happens only here. The tables' numbers (what a table holds, means, ranks, tests) are the
experiments'; their labels are read off the registries (:mod:`rejectopt.classifiers`,
:mod:`rejectopt.scores`, :mod:`rejectopt.metrics`). One module per concept: ``_specs`` (labels),
``_render`` (tables as Markdown and LaTeX), ``_figures``, ``_rankings`` (ranks under every metric), ``_comparison``
(the paper's numbers), ``_provenance`` (timing, environment), and one module per further
experiment (``ood``, ``double_hinge``, ``landmarks``); the CLI's figures are in ``rejectopt.cli._figures``.
"""

from ._comparison import comparison_markdown, paper_comparison
from ._figures import (
    CD_ALPHA,
    cd_diagram,
    cd_figure,
    improvement_figure,
    mean_rc_curve,
    message_figure,
    rc_curves_figure,
    rc_figure,
)
from ._format import format_number
from ._provenance import environment_markdown, report_config_error, report_requested, timing_table
from ._rankings import metric_rankings, rankings_markdown
from ._render import read_summary, render_table
from ._specs import classifier_label, label, metric_label

__all__ = [
    "CD_ALPHA",
    "cd_diagram",
    "cd_figure",
    "classifier_label",
    "comparison_markdown",
    "environment_markdown",
    "format_number",
    "improvement_figure",
    "label",
    "mean_rc_curve",
    "message_figure",
    "metric_label",
    "metric_rankings",
    "paper_comparison",
    "rankings_markdown",
    "rc_curves_figure",
    "rc_figure",
    "read_summary",
    "render_table",
    "report_config_error",
    "report_requested",
    "timing_table",
]


def __dir__():
    """The names of ``__all__``, not the private submodules and helpers the imports above add."""
    return list(__all__)
