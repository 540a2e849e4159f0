"""The paper's tables, figures, comparison with the published numbers, and the run's provenance.

Everything is computed from one tidy table, ``results/summary.csv`` (columns
:data:`rejectopt.experiment.SUMMARY_COLUMNS`); stored numbers are raw, formatting
happens only here. Tables and their columns are read off the registries
(:mod:`rejectopt.classifiers`, :mod:`rejectopt.scores`) and the run's config
(:func:`table_specs`). One module per concept: ``_specs`` (what a table holds),
``_tables`` (numbers, ranks, rendering), ``_figures``, ``_comparison`` (paper),
``_provenance`` (timing, environment).
"""

from ._comparison import comparison_markdown, paper_comparison
from ._figures import CD_ALPHA, cd_diagram, cd_figure, improvement_figure, mean_rc_curve, message_figure, rc_curves_figure, rc_figure
from ._provenance import environment_markdown, timing_table
from ._rankings import metric_rankings, rankings_markdown
from ._specs import TableSpec, classifier_label, label, landmarks_spec, metric_label, table_specs
from ._tables import (
    TableStatistics,
    aurc_table,
    format_number,
    read_summary,
    relative_improvement,
    render_table,
    table_statistics,
)

__all__ = [
    "CD_ALPHA",
    "cd_diagram",
    "TableSpec",
    "TableStatistics",
    "aurc_table",
    "cd_figure",
    "classifier_label",
    "comparison_markdown",
    "environment_markdown",
    "format_number",
    "improvement_figure",
    "label",
    "landmarks_spec",
    "mean_rc_curve",
    "message_figure",
    "metric_label",
    "metric_rankings",
    "paper_comparison",
    "rankings_markdown",
    "rc_curves_figure",
    "rc_figure",
    "read_summary",
    "relative_improvement",
    "render_table",
    "table_specs",
    "table_statistics",
    "timing_table",
]
