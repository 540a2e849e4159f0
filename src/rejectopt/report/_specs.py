"""Results tables as specifications read off the registries and the run's configuration."""

from __future__ import annotations

from dataclasses import dataclass

from ..classifiers import CLASSIFIERS, get_classifier
from ..scores import get_score

__all__ = ["TableSpec", "classifier_label", "label", "landmarks_spec", "metric_label", "table_specs"]


@dataclass(frozen=True)
class TableSpec:
    """One results table: a classifier, its baseline and the learned scores configured for it."""

    name: str
    task: str
    classifier: str
    methods: tuple[str, ...]
    title: str
    extension: bool = False

    @property
    def baseline(self) -> str:
        return self.methods[0]


def label(name: str) -> str:
    """Display label of a registered score (``sele`` -> ``SELE``); unknown names print as they are."""
    try:
        return get_score(name).label
    except ValueError:
        return name


def table_specs(scores: dict, classifiers=None) -> dict[str, TableSpec]:
    """One table per classifier: its registered baseline, then the scores of ``scores[classifier]``.

    Parameters
    ----------
    scores : dict
        The config's ``scores:`` mapping, classifier -> learned score names
        (the order of the table's columns).
    classifiers : iterable of str or None
        The classifiers to make tables for; None = every registered one.

    Returns
    -------
    dict
        Table name (the classifier's registered ``table``, e.g. ``table3a``) ->
        :class:`TableSpec`, in registry order.
    """
    wanted = set(CLASSIFIERS.names() if classifiers is None else classifiers)
    specs = {}
    for name, info in CLASSIFIERS.items():
        if name not in wanted:
            continue
        methods = (info.baseline, *scores.get(name, ()))
        specs[info.table] = TableSpec(info.table, info.task, name, methods, info.title, info.extension)
    return specs


def landmarks_spec(scores) -> TableSpec:
    """The landmark experiment (Section 5.2.3, Fig. 4): the face score, then ``scores``; no table rule."""
    return TableSpec("landmarks", "landmarks", "dlib", ("face_score", *[s for s in scores if s != "face_score"]),
                     "Section 5.2.3: DLIB landmarks on 300-W (Fig. 4)")


def metric_label(name: str) -> str:
    """Display label of a registered metric (``augrc`` -> ``AUGRC``)."""
    from ..metrics import METRICS

    return METRICS[name].label if name in METRICS else name


def classifier_label(name: str) -> str:
    try:
        return get_classifier(name).label
    except ValueError:
        return name
