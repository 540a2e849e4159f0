"""Internal: certified selection, a selective risk or coverage guaranteed with probability 1 - delta.

:class:`~rejectopt.targets.Target` with a ``confidence`` fits here; the plug-in targets
(:mod:`rejectopt.selective`) meet their value on the calibration rows only. Every guarantee
is *marginal over the calibration sample* of ``n`` i.i.d. (exchangeable) rows: with probability
at least ``confidence = 1 - delta`` the drawn sample gives a selection function whose
population quantity meets the target. The user guide's "Guarantees" page carries the proofs;
the statements:

* **risk, method "ltt"** (Learn-then-Test, Angelopoulos et al. 2021, fixed-sequence testing):
  the hypotheses are the nested cuts ``{s <= t}`` / ``{s < t}`` ordered from the most
  confident; ``H_t``: the population selective risk of the cut exceeds the target. Each is
  tested with the exact binomial tail (losses in {0, B}: Clopper-Pearson's p-value) or, for any
  loss in [0, B], the Hoeffding-Bentkus p-value (Bates et al. 2021, Prop. 3) or the
  variance-adaptive betting p-value (Waudby-Smith & Ramdas 2023; Ville's inequality,
  :func:`._tails._betting_pvalue`), all valid conditionally on the number of accepted rows;
  ``tail="auto"`` lets the start rows choose between the last two. Fixed-sequence testing must start at a cut
  chosen without the rows it tests: a seeded random ``start_fraction`` of the rows picks the
  start (:func:`_ltt_start`), the others test every cut from there upwards at level
  ``delta * (1 - w)``; the selection is the largest cut of the unbroken run of rejections. The
  full set alone is tested too, at ``delta * w``, ``w`` the start rows' predicted chance that it
  certifies (:func:`_ltt_full_share`); a union bound over the two tests. Where the start rows
  start the sequence at the full set, the two tests are one hypothesis, tested once at delta.
  With fewer than
  ``MIN_START_ROWS`` start rows (``n < 190``) the full set alone is tested, on every row. The
  family-wise error is at most delta (the first cut after the start whose risk exceeds the
  target is a fixed cut, and the run can pass it only by rejecting it).
* **risk, method "sgr"** (Geifman & El-Yaniv 2017): :func:`rejectopt.selective.fit_geifman_el_yaniv`,
  binary search with a union bound over its ``ceil(log2 n)`` steps; 0/B losses only.
* **coverage** (order statistics): the cut at the ``k``-th smallest score, ``k`` the smallest
  count with ``P(Binomial(n, w) >= k) <= delta``, has population coverage >= ``w`` with
  probability >= ``1 - delta``: ``F(s_(k)) < w`` needs ``k`` scores below ``F^-1(w)``.
* **release gate** (:func:`fit_certified_gate`, risk <= ``a`` and coverage >= ``w``
  together): the coverage cut at ``delta JOINT_COVERAGE_SHARE``, then fixed-sequence risk
  tests on every row from the cut just below it, at ``delta (1 - JOINT_COVERAGE_SHARE)``;
  granted when the run passes the coverage cut. Given the counts of rows below the cuts where
  the risk crosses ``a``, the cut a violation needs rejected holds independent rows of mean at
  least ``a`` (the Guarantees page's proof), so a union bound gives both at ``1 - delta``.
* **per group** (:func:`fit_certified_groups`): given the group column, each group's rows are
  an i.i.d. sample of its group's population, so a fit on them alone certifies that group;
  simultaneously at ``(1 - delta)^(1 / G)`` each, the groups' fits being independent given the
  labels. A group its rows cannot certify takes the pooled threshold, certified for the pooled
  population only.
* **tpr-fpr** (OOD): the TPR cut is the coverage cut of the ID rows at delta / 2; the FPR of that
  cut (fixed given the ID rows, the OOD rows independent) is bounded by Clopper-Pearson at
  delta / 2; a union bound gives both.

Certified selections are deterministic (``accept_prob`` 0 or 1): the randomised boundary of
eq. 25 needs the randomisation of the calibration rows to be part of the tested cut, and the
deterministic cuts already reach the certified maximum up to one tie group.

Every certified risk or coverage fit keeps its audit trail (:class:`AuditTrail`, the
selection's ``audit``): the cuts tested in order, their p-values and levels, and why the
procedure stopped, its last rejected cut the selection.

A certified target is checked here too: :func:`certification_table` lists each threshold's
pointwise bound and p-value, :func:`validate_target` measures how often the target fails when the
user's own rows are the population. :mod:`rejectopt.targets` exports both (the reference documents
them there), and the fits of the three certified kinds.
"""

# The private names are re-exported (``X as X``) for the tests and the benchmarks, which read the
# tails and the steps of Learn-then-Test from ``rejectopt._certify`` as they did before the split.
from ._audit import AUDIT_COLUMNS, AuditTrail
from ._fits import (
    FULL_SHARE_MIN,
    MIN_START_ROWS,
    START_FRACTION,
    fit_certified_coverage,
    fit_certified_risk,
)
from ._fits import _ltt_full_share as _ltt_full_share
from ._fits import _ltt_rows as _ltt_rows
from ._fits import _ltt_start as _ltt_start
from ._fits import _prefix_sums as _prefix_sums
from ._groups import GroupCertificate, GroupSelection, fit_certified_groups
from ._joint import JOINT_COVERAGE_SHARE, fit_certified_gate, gate_statement
from ._ood import fit_certified_tpr_fpr
from ._selection import (
    CERTIFICATE_KEYS,
    CERTIFICATE_KEYS_V2,
    JOINT_METHOD,
    RISK_METHODS,
    ZERO_ONE_BOUND,
    CertifiedSelection,
    certified_from_dict,
)
from ._tails import _binomial_pvalue as _binomial_pvalue
from ._tails import _coverage_lower_bound as _coverage_lower_bound
from ._tails import _coverage_rank as _coverage_rank
from ._tails import _hoeffding_bentkus_pvalue as _hoeffding_bentkus_pvalue
from ._tails import _risk_pvalue as _risk_pvalue
from ._tails import _risk_upper_bound as _risk_upper_bound
from ._validate import TargetValidity, certification_table, validate_target
from ._validate import _evaluate as _evaluate
from ._validate import _population_sums as _population_sums

__all__ = [
    "AUDIT_COLUMNS",
    "CERTIFICATE_KEYS",
    "CERTIFICATE_KEYS_V2",
    "FULL_SHARE_MIN",
    "JOINT_COVERAGE_SHARE",
    "JOINT_METHOD",
    "MIN_START_ROWS",
    "RISK_METHODS",
    "START_FRACTION",
    "ZERO_ONE_BOUND",
    "AuditTrail",
    "CertifiedSelection",
    "GroupCertificate",
    "GroupSelection",
    "TargetValidity",
    "certification_table",
    "certified_from_dict",
    "fit_certified_coverage",
    "fit_certified_gate",
    "fit_certified_groups",
    "fit_certified_risk",
    "fit_certified_tpr_fpr",
    "gate_statement",
    "validate_target",
]


def __dir__():
    """The names of ``__all__``, not the submodules and helpers the imports above add."""
    return list(__all__)
