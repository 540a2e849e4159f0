"""Internal: checks of ``model.json``'s own fields: ``versions``, ``n_logits`` and ``groups``.

``groups`` (``format_version`` 5) holds a certified threshold per group: a model selected
with per-group certificates (``select --group-column``) applies to each new row its group's
threshold, not the single one in ``selection``: the file records the group column's
name and each group's label and selection function, so that ``apply`` reads the column and
decides each row as its group's certificate was fitted. Only such a model is written in
format 5; every other model keeps its older version, readable by the releases that read it.
"""

from __future__ import annotations

import numbers
import reprlib
from typing import Any

from ._checks import check_open_unit
from .selective import SelectionFunction

__all__ = ["GROUP_KEYS", "check_extras", "check_groups", "group_key", "groups_entry"]

#: The fields of ``groups`` (the entry) and of each of its ``groups`` (one per group).
GROUP_KEYS = ("column", "simultaneous", "confidence", "group_confidence", "groups")
_ONE_GROUP_KEYS = ("label", "n_rows", "fallback", "selection")


def check_extras(model: Any) -> None:
    """``versions`` (package versions, text) and ``n_logits`` (a network's logits width)."""
    versions = model["versions"]
    if not isinstance(versions, dict) or not all(isinstance(v, str) for v in versions.values()):
        raise ValueError("versions must be an object of strings")
    n_logits = model.get("n_logits")
    if n_logits is not None and (
        isinstance(n_logits, bool) or not isinstance(n_logits, int) or n_logits < 2
    ):
        raise ValueError(
            f"n_logits must be null or an integer >= 2 (the width of a network's logits), got "
            f"{reprlib.repr(n_logits)}"
        )


def groups_entry(column: str, selection: Any) -> dict[str, Any]:
    """``model.json``'s ``groups`` for a :class:`~rejectopt.targets.GroupSelection`."""
    return {
        "column": column,
        "simultaneous": bool(selection.simultaneous),
        "confidence": float(selection.confidence),
        "group_confidence": float(selection.group_confidence),
        "groups": [
            {
                "label": group.label,
                "n_rows": int(group.n_rows),
                "fallback": bool(group.fallback),
                "selection": SelectionFunction(group.threshold, group.accept_prob).to_dict(),
            }
            for group in selection.groups
        ],
    }


def _label_kind(label: Any) -> str | None:
    """A JSON label's kind; None for a value that is no label (null, list, object)."""
    if isinstance(label, bool):
        return "bool"
    if isinstance(label, numbers.Integral):
        return "integer"
    if isinstance(label, float):
        return "real" if label == label else None
    return "text" if isinstance(label, str) else None


def _check_fields(value: Any, keys: tuple[str, ...], name: str) -> None:
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be an object, got {type(value).__name__}")
    missing = [k for k in keys if k not in value]
    unknown = sorted(str(k) for k in value if k not in keys)
    if missing or unknown:
        raise ValueError(
            f"{name}: "
            + "; ".join(
                ([f"missing field(s) {missing}"] if missing else [])
                + ([f"unknown field(s) {unknown}"] if unknown else [])
            )
        )


def check_groups(entry: Any) -> dict[Any, SelectionFunction]:
    """Check ``model.json``'s ``groups``; returns each label's selection function.

    Raises
    ------
    ValueError
        Naming the first bad field: a missing or unknown field, an empty column name, a label
        that is no JSON scalar, of another kind than the others, or given twice, a malformed
        selection.
    """
    _check_fields(entry, GROUP_KEYS, "groups")
    if not isinstance(entry["column"], str) or not entry["column"].strip():
        raise ValueError(
            f"groups.column must be a column name, got {reprlib.repr(entry['column'])}"
        )
    if not isinstance(entry["simultaneous"], bool):
        raise ValueError("groups.simultaneous must be true or false")
    for field in ("confidence", "group_confidence"):
        if isinstance(entry[field], bool):
            raise ValueError(f"groups.{field} must be a number in (0, 1)")
        check_open_unit(entry[field], f"groups.{field}")
    groups = entry["groups"]
    if not isinstance(groups, list) or not groups:
        raise ValueError("groups.groups must be a non-empty list, one object per group")
    selections: dict[Any, SelectionFunction] = {}
    kinds = set()
    for i, group in enumerate(groups):
        name = f"groups.groups[{i}]"
        _check_fields(group, _ONE_GROUP_KEYS, name)
        kind = _label_kind(group["label"])
        if kind is None:
            raise ValueError(
                f"{name}.label must be text or a number, got {reprlib.repr(group['label'])}"
            )
        kinds.add(kind)
        key = (kind, group["label"])
        if key in selections:
            raise ValueError(f"{name}.label {group['label']!r} is given twice")
        n_rows = group["n_rows"]
        if isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 1:
            raise ValueError(f"{name}.n_rows must be an integer >= 1, got {reprlib.repr(n_rows)}")
        if not isinstance(group["fallback"], bool):
            raise ValueError(f"{name}.fallback must be true or false")
        selections[key] = SelectionFunction.from_dict(group["selection"], name=f"{name}.selection")
    if len(kinds) > 1:
        raise ValueError(f"groups.groups mixes label kinds {sorted(kinds)}: one kind per column")
    return selections


def group_key(label: Any) -> tuple[str | None, Any]:
    """The key of ``label`` in :func:`check_groups`' result (1 and "1" are two groups)."""
    return (_label_kind(label), label)
