"""rejectopt: learning uncertainty scores for classifiers with a reject option.

Reproduces Franc, Prusa & Voracek, "Optimal Strategies for Reject Option
Classifiers", JMLR 24(11), 2023.
"""

__version__ = "0.1.0"
