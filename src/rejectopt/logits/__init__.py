"""A deep network's outputs as input: baselines from its logits, SELE / REG / TCP on its embeddings.

From a network's exported logits (n x K), optional penultimate-layer embeddings (n x d) and
labels, :func:`fit_logits` computes the usual confidence baselines and learns the paper's scores
(SELE, REG, TCP; one linear score per predicted class, eq. 37 of [1]) on the embeddings, else the
logits, with the paper's fit / validate / calibrate / evaluate row split (Section 5.1).

The network predicts ``argmax_y f_y(x)`` (first largest logit at a tie); its posterior is the
softmax. Every baseline is an *uncertainty* (larger = reject first):

========== ================================================= ======================================
name       uncertainty                                       reference
========== ================================================= ======================================
mcp        ``1 - max_y p(y|x)`` (MSP / MCP)                  Hendrycks & Gimpel 2017 [2]
entropy    ``-sum_y p(y|x) log p(y|x)`` (nats)               predictive entropy
energy     ``-T log sum_y exp(f_y(x) / T)``                  Liu et al. 2020 [3], eq. (1)
doctor     ``1 - sum_y p(y|x)^2`` (DOCTOR's ``1 - g(x)``)    Granese et al. 2021 [4], Section 3
max_logit  ``-max_y f_y(x)``                                 Hendrycks et al. 2022 [5]
margin     ``-(p_(1) - p_(2))``, the two largest posteriors  margin sampling, Scheffer et al. [6]
========== ================================================= ======================================

Post-hoc scores with a parameter tuned on held-out rows: MaxLogit-pNorm and MSP-pNorm
(:func:`maxlogit_pnorm`, :func:`msp_pnorm`, p and T of least AuRC by :func:`fit_pnorm`; Cattelan
& Silva 2024 [7]) and temperature-scaled MSP (:func:`fit_temperature`, T of least NLL; Guo et al.
2017 [8]). For many classes, ``sele_shared`` / ``reg_shared`` learn one weight vector for all
classes on class-agnostic features of the logits (:mod:`rejectopt.scores`).

``mcp`` and ``max_logit`` are :func:`rejectopt.scores.mcp` of the softmax and
:func:`rejectopt.scores.svm_margin` of the logits: one home per formula. DOCTOR's black-box
``D_alpha`` rejects when ``1 - g(x) > gamma g(x)``; ``1 - g(x)`` orders rows as that ratio does
(same AuRC and RC curve) and stays bounded. DOCTOR's temperature and input perturbation are left
out: the route sees outputs, not inputs.

References
----------
.. [1] V. Franc, D. Prusa, V. Voracek. Optimal Strategies for Reject Option Classifiers.
   JMLR 24(11):1-49, 2023.
.. [2] D. Hendrycks, K. Gimpel. A Baseline for Detecting Misclassified and Out-of-Distribution
   Examples in Neural Networks. ICLR 2017.
.. [3] W. Liu, X. Wang, J. Owens, Y. Li. Energy-based Out-of-distribution Detection. NeurIPS 2020.
.. [4] F. Granese, M. Romanelli, D. Gorla, C. Palamidessi, P. Piantanida. DOCTOR: A Simple Method
   for Detecting Misclassification Errors. NeurIPS 2021.
.. [5] D. Hendrycks, S. Basart, M. Mazeika, et al. Scaling Out-of-Distribution Detection for
   Real-World Settings. ICML 2022.
.. [6] T. Scheffer, C. Decomain, S. Wrobel. Active Hidden Markov Models for Information
   Extraction. IDA 2001.
.. [7] L. F. P. Cattelan, D. Silva. How to Fix a Broken Confidence Estimator: Evaluating Post-hoc
   Methods for Selective Classification with Deep Neural Networks. UAI 2024.
.. [8] C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger. On Calibration of Modern Neural Networks.
   ICML 2017.
"""

# Re-exported beside __all__ (``X as X``): the grids and the post-hoc names, and the error that
# check_network_outputs raises, which users import from here.
from ..exceptions import NetworkOutputError as NetworkOutputError
from ._baselines import (
    BASELINES,
    baseline_uncertainties,
    doctor,
    energy,
    entropy,
    fit_pnorm,
    fit_temperature,
    margin,
    max_logit,
    maxlogit_pnorm,
    msp,
    msp_pnorm,
)
from ._baselines import P_GRID as P_GRID
from ._baselines import POST_HOC as POST_HOC
from ._baselines import TEMPERATURE_GRID as TEMPERATURE_GRID
from ._fit import LogitsFit, fit_logits
from ._outputs import check_network_outputs, predictions, softmax

__all__ = [
    "BASELINES",
    "LogitsFit",
    "baseline_uncertainties",
    "check_network_outputs",
    "doctor",
    "energy",
    "entropy",
    "fit_logits",
    "fit_pnorm",
    "fit_temperature",
    "margin",
    "max_logit",
    "maxlogit_pnorm",
    "msp",
    "msp_pnorm",
    "predictions",
    "softmax",
]


def __dir__():
    """The names of ``__all__``, not the submodules and helpers the imports above add."""
    return list(__all__)
