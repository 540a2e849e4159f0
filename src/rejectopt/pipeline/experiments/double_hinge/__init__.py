"""Internal: the pipeline's double-hinge experiment; not part of the public API (see
:mod:`rejectopt.pipeline.experiments` for the experiment contract).

SVM with a reject option (double hinge) against post-hoc rejection, on binary datasets.

Grandvalet et al. [1] on the pipeline's splits: per rejection cost ``d`` (errors cost 1,
``0 < d < 1/2``) five selective classifiers are fitted on one split and scored on Tst by the cost
risk ``(errors + d x rejections) / n`` (Chow's cost-based model, Problem 1 of [2];
:func:`rejectopt.metrics._confusion.selective_outcome`), coverage and selective risk. Splits:
``results/data/{dataset}/splits.npz``; breast cancer's by :func:`breast_cancer_split`.

* ``double_hinge_rbf`` -- the main row, the seed's model: :class:`~rejectopt.classifiers.DoubleHingeSVM`
  with kernel ``exp(-gamma ||x - x'||^2)`` on Trn1 features standardised by Trn1; ``gamma``
  (``rbf_gamma_grid``, in units of ``1 / n_features``: scikit-learn's ``"scale"`` on standardised
  features) and ``C`` (``rbf_C_grid``) chosen per ``d`` on Val1 by cost risk
  (``rejectopt.classifiers._double_hinge.fit_double_hinge``; ties: smaller ``gamma``, then ``C``);
  rejects iff ``f- < f(x) < f+``. The exact kernel costs ``O(n^3)`` time, ``O(n^2)`` memory
  (marketing's Trn1: 13,564 rows), so problem (10) of [1] is solved exactly on the span of a
  rank-``rbf_rank`` Nyström approximation (landmarks uniform from Trn1, seeded by the split, shared
  by every ``gamma``, ``C``, ``d``); its distance to the exact kernel:
  ``benchmarks/bench_double_hinge_nystroem.py`` (docs/guide/double_hinge.md).
* ``double_hinge`` -- the linear kernel, ``C`` on ``C_grid``. Kept because its bias is known: even
  with linear log-odds (1-D N(-1, 1) / N(+1, 1), equal priors) it is not Chow's rule, the loss
  being tangent to the logistic loss only at ``f-`` and ``f+``, which a line cannot both meet.
  Reject interval vs Chow's: +-0.426 / +-0.424 at ``d = 0.3``, +-0.735 / +-0.693 at 0.2,
  +-1.449 / +-1.099 at 0.1 (excess cost 0.0037 over Bayes' 0.0701); at ``d = 0.05`` slope 0,
  rejecting everything (Chow: +-1.472). So at small ``d`` it measures the model's bias as much as
  the data (``tests/test_double_hinge.py`` integrates these numbers).
* ``lr_sele`` -- LR on Trn1 (``C`` by Val1 error), SELE on Trn2 (``C`` by Val2 AuRC,
  :func:`rejectopt.pipeline.experiments._learners.fit_classifier_then_score`), then
  :func:`rejectopt.selective.fit_cost_based` with ``reject_cost = 100 d`` (losses
  ``100 [y != h(x)]``) on **Val2**, where SELE's ``C`` was chosen.
* ``svm_threshold`` -- naive baseline: the plain linear SVM
  (:class:`~rejectopt.classifiers.BinaryHingeSVM`) on Trn1, ``C`` by Val1 error on the *same* grid
  and scaling as the double-hinge SVM, rejecting iff ``|f(x)|`` is below the threshold minimising
  the cost risk on **Val2** (``rejectopt.selective.fit_margin_threshold``; as ``lr_sele``, so both
  post-hoc rules see the same data).
* ``lr_chow`` -- Chow's rule on LR's posterior: reject iff ``max_y p(y|x) < 1 - d``
  (``rejectopt.selective.chow_reject``); nothing tuned.

Seeds: ``derive_seed(seed, dataset, "double_hinge", split, part)``, ``part`` in ``lr``,
``sele``, ``svm``, ``nystroem``; the solvers are deterministic.

C grids: LR uses ``C_classifier`` (weight ``C`` on the summed loss, as everywhere); the linear SVMs
share ``C_grid`` read with ``c_scaling`` (``"mean"``: ``C / n_trn1`` on the summed loss, i.e. per
example; ``"sum"``: ``C``). On standardised features the summed reading of {1, ..., 1000} is
almost hard-margin on larger datasets (on marketing every ``C`` gives the same model), while
``/ n_trn1`` spans under- to weakly regularised (:class:`~rejectopt.classifiers.DoubleHingeSVM`).
The RBF model needs larger ``C`` (``rbf_C_grid``, same reading): ``|f| <= ||f||`` in the RKHS, so
logits beyond Chow's ``f+ = log((1-d)/d)`` cost ``||f||^2 / 2`` against a loss summed over
``n_trn1``; on marketing at ``d = 0.2`` every ``C <= 100`` predicted the majority class, rejecting
nothing (Val1 cost risk 11.7 %, 6.4 % at ``C = 10^5``).

The protocol against the paper's
--------------------------------
As in Section 5.2 of [2]: splits and ratios, LR (``C_classifier``, Val1 error), SELE on LR's Trn2
losses (``C_score``, Val2 AuRC), Tst only for reported numbers, risks in percent. It differs in
that the paper reports a score's AuRC (the whole RC curve), whereas here each method is one
selective classifier per ``d``: a post-hoc rule needs a threshold, fitted on Val2 (Trn2 / Val2 stay
the post-hoc stage's), and the number is the Tst cost risk. The SVMs are not the paper's methods;
they are selected on Trn1 / Val1 like its classifiers. Breast cancer is not a paper dataset: its
splits are made in the job (the config's default ratios and seed).

LR is read from the staged files of ``rules/classifiers.smk`` (``results/classifiers/{dataset}/lr/``;
same splits, grid, deterministic solver) where the dataset is one of the run's, not retrained.
Predictions are equal; posteriors may differ in their last bits (the staged rule predicts every
example at once), which matters only for a maximum posterior within those bits of ``1 - d``: on
phishing and marketing (5 splits) every result file stayed byte-identical. Breast cancer trains LR
in the job. SELE is always learned in the job: the staged score file keeps Tst uncertainties only,
while the selection function is fitted on Val2, with this experiment's seed.

Contract (:mod:`rejectopt.pipeline.experiments`): :data:`NAME`, :func:`settings`, :func:`run_split`,
:func:`aggregate` (:func:`double_hinge_table`, :func:`cost_risk_ranks`, :func:`wilcoxon_tests` of
:data:`REFERENCE` against each method). Rendering is :mod:`rejectopt.pipeline.report.double_hinge`'s.

References
----------
.. [1] Y. Grandvalet, A. Rakotomamonjy, J. Keshet, S. Canu. Support Vector Machines with a
   Reject Option. NIPS 21, 2008.
.. [2] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option Classifiers.
   JMLR 24(11):1-49, 2023.
"""

from __future__ import annotations

from ._setup import (
    BREAST_CANCER,
    DEFAULTS,
    DOUBLE_HINGE_METHODS,
    METHODS,
    NAME,
    REFERENCE,
    SPLIT_COLUMNS,
    STAGED_LR,
    TIMING_COLUMNS,
    breast_cancer_split,
    covered_datasets,
    settings,
)
from ._split import DoubleHingeSplitResult, run_dataset_files, run_rule, run_split
from ._tables import (
    RankResult,
    aggregate,
    cost_risk_ranks,
    double_hinge_table,
    table_file,
    table_order,
    wilcoxon_tests,
)

__all__ = [
    "NAME",
    "BREAST_CANCER",
    "DEFAULTS",
    "METHODS",
    "REFERENCE",
    "DOUBLE_HINGE_METHODS",
    "SPLIT_COLUMNS",
    "STAGED_LR",
    "TIMING_COLUMNS",
    "DoubleHingeSplitResult",
    "RankResult",
    "settings",
    "covered_datasets",
    "breast_cancer_split",
    "run_split",
    "run_dataset_files",
    "run_rule",
    "aggregate",
    "table_file",
    "table_order",
    "double_hinge_table",
    "cost_risk_ranks",
    "wilcoxon_tests",
]


def __dir__():
    """The names of ``__all__``, not the private submodules the imports above add."""
    return list(__all__)
