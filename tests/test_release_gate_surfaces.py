"""The release gate (risk and coverage floor together) through every surface of a certified target.

``select --target risk=L,min_coverage=W`` on the README's table (digits, "your" logistic
regression), ``apply`` of its model, ``validate``, ``model.json`` format_version 4 and
:class:`rejectopt.SelectiveClassifier`'s ``min_coverage``. The gate's statistics are
checked in ``test_certify_gate.py`` and by the simulation of ``test_cli.py``; here, that each
surface carries the gate and states its one theorem.
"""

import copy
import json
import re

import pandas as pd
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from rejectopt import SelectiveClassifier, cli
from rejectopt._certify import JOINT_METHOD
from rejectopt.exceptions import InfeasibleTargetError
from rejectopt.model import gate_statement, read_model, validate_model

GATE = "risk=10,min_coverage=0.5"


@pytest.fixture(scope="module")
def readme_tables(tmp_path_factory):
    """The README's select example: 1,000 labelled rows for select, the rest for apply."""
    folder = tmp_path_factory.mktemp("readme")
    X, y = load_digits(return_X_y=True, as_frame=True)
    clf = LogisticRegression(max_iter=2000).fit(X[:300], y[:300])
    table = X.assign(y=y, y_pred=clf.predict(X))
    table[300:1300].to_csv(folder / "val.csv", index=False)
    table[1300:].drop(columns="y").to_csv(folder / "new.csv", index=False)
    return folder


def _run(argv, capsys):
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def gate_selection(readme_tables):
    """``select --target risk=10,min_coverage=0.5 --confidence 0.9 --C 1`` on val.csv."""
    out = readme_tables / "sel"
    argv = ["select", "--data", str(readme_tables / "val.csv"), "--target", GATE]
    status = cli.main([*argv, "--confidence", "0.9", "--C", "1", "--out", str(out), "-q"])
    assert status == 0
    return out


def test_select_writes_the_gate_to_model_and_report(gate_selection):
    model = json.loads((gate_selection / "model.json").read_text())
    report = json.loads((gate_selection / "report.json").read_text())
    target = {"kind": "risk", "value": 10, "confidence": 0.9, "min_coverage": 0.5}
    assert model["format_version"] == 4 and model["target"] == report["target"] == target
    certificate = model["certificate"]
    assert certificate == report["certificate"]
    assert (certificate["method"], certificate["risk_bound"], certificate["coverage_bound"]) == (
        JOINT_METHOD,
        10.0,
        0.5,
    )
    assert certificate["n_calibration"] == report["rows"]["calibration"] == 300
    assert report["audit"]["method"] == JOINT_METHOD and "gate granted" in report["audit"]["reason"]
    markdown = (gate_selection / "report.md").read_text()
    # ONE sentence at ONE level: the gate theorem, not two statements each alone
    sentence = gate_statement(certificate, "%")
    assert sentence == (
        "With probability at least 0.9 over the draw of the 300 calibration rows, the population's "
        "selective risk is at most 10 % and its coverage at least 0.5, together (the release gate: "
        "a union bound)."
    )
    assert sentence in markdown and "Separately" not in markdown
    assert markdown.count("With probability at least") == 1
    assert "Target: **risk = 10** with coverage >= 0.5 certified at confidence 0.9" in markdown


def test_the_printed_line_states_both_bounds_at_once(readme_tables, tmp_path, capsys):
    """The confidence inside the target or from --confidence: the same target, the same files."""
    data = str(readme_tables / "val.csv")
    lines = {}
    for name, extra in (
        ("inside", ["--target", f"{GATE},confidence=0.9"]),
        ("option", ["--target", GATE, "--confidence", "0.9"]),
    ):
        status, out, err = _run(
            ["select", "--data", data, *extra, "--C", "1", "--out", str(tmp_path / name), "-q"],
            capsys,
        )
        assert status == 0, err
        lines[name] = out.splitlines()[-1]
    assert lines["inside"] == lines["option"]
    assert lines["option"].endswith(
        "; certified for the population with probability >= 0.9: risk <= 10 % and coverage >= 0.5 "
        "(both at once)"
    )
    assert (tmp_path / "inside" / "model.json").read_bytes() == (
        tmp_path / "option" / "model.json"
    ).read_bytes()


def test_apply_decides_with_the_gate_model(gate_selection, readme_tables, tmp_path, capsys):
    out = tmp_path / "decisions.csv"
    argv = ["apply", "--model", str(gate_selection / "model.json")]
    status, _, err = _run(
        [*argv, "--data", str(readme_tables / "new.csv"), "--out", str(out)], capsys
    )
    assert status == 0, err
    model, score, selection = read_model(gate_selection / "model.json")
    assert selection.method == JOINT_METHOD and selection.coverage_bound == 0.5
    decisions = pd.read_csv(out)
    # a certified selection is deterministic: accepted exactly below its threshold (or all, at inf)
    expected = decisions["uncertainty"] < selection.threshold
    assert (decisions["accept"].astype(bool) == expected).all()
    assert 0 < decisions["accept"].mean() <= 1


def test_validate_counts_both_conditions_of_the_gate(readme_tables, tmp_path, capsys):
    data = str(readme_tables / "val.csv")
    status, out, err = _run(
        ["validate", "--data", data, "--target", GATE, "--confidence", "0.9", "--C", "1"]
        + ["--repeats", "20", "--out", str(tmp_path / "check"), "-q"],
        capsys,
    )
    assert status == 0, err
    draws = pd.read_csv(tmp_path / "check" / "repeats.csv")
    certified = draws[(draws["method"] == "certified") & ~draws["infeasible"]]
    risk = certified["population_risk"] > 10 * (1 + 1e-12)
    floor = certified["population_coverage"] < 0.5 * (1 - 1e-12)
    assert (certified["violated"] == (risk | floor)).all()  # a violation is either condition missed
    assert (
        f"certified: by condition: selective risk > 10 % in {int(risk.sum())}, coverage < 0.5 in "
        f"{int(floor.sum())} of 20 draws (the gate is violated when either fails)"
    ) in out
    assert "--target risk=10,min_coverage=0.5,confidence=0.9: 20 draws" in out


#: Hostile floors: (target, options after it, message); each is refused by select and validate.
HOSTILE = [
    (
        "risk=10,min_coverage=1",
        ["--confidence", "0.9"],
        "--target risk=10,min_coverage=1: min_coverage=1 leaves the full set only, whose risk "
        "is the target with no floor: give --target risk=10",
    ),
    (
        "coverage=0.8,min_coverage=0.5",
        ["--confidence", "0.9"],
        "--target coverage=0.8,min_coverage=0.5: min_coverage is the coverage floor of a "
        "certified risk target",
    ),
    (
        "risk=10,min_coverage=nan",
        ["--confidence", "0.9"],
        "min_coverage must lie in (0, 1), got nan",
    ),
    ("risk=10,min_coverage=0", ["--confidence", "0.9"], "min_coverage must lie in (0, 1), got 0"),
    (
        "risk=10,min_coverage=x",
        ["--confidence", "0.9"],
        "--target min_coverage: 'x' is not a number",
    ),
    (
        "risk=10,min_coverage=0.5,confidence=0.9",
        ["--confidence", "0.8"],
        "gives confidence 0.9 and --confidence 0.8: give it once",
    ),
]


@pytest.mark.parametrize(
    "command, target, extra, message",
    [(command, *case) for command in ("select", "validate") for case in HOSTILE]
    + [
        # select alone: validate's --confidence is required, so argparse names it first
        (
            "select",
            "risk=10,min_coverage=0.5",
            [],
            "--target risk=10,min_coverage=0.5: a coverage floor (min_coverage) is certified "
            "together with the risk, at a confidence: give --confidence C",
        )
    ],
)
def test_a_hostile_floor_is_refused_before_reading(
    tmp_path, capsys, command, target, extra, message
):
    """Refused at the options (the data file does not even exist): exit 2, the message, no output."""
    out = tmp_path / "out"
    argv = [command, "--data", str(tmp_path / "missing.csv"), "--target", target, *extra]
    status, _, err = _run([*argv, "--out", str(out)], capsys)
    assert status == 2 and message in err, err
    assert not out.exists()


def test_an_infeasible_gate_says_which_part_failed(readme_tables, tmp_path, capsys):
    status, _, err = _run(
        [
            "select",
            "--data",
            str(readme_tables / "val.csv"),
            "--target",
            "risk=10,min_coverage=0.99",
        ]
        + ["--confidence", "0.9", "--C", "1", "--out", str(tmp_path / "sel"), "-q"],
        capsys,
    )
    assert status == 2 and "cannot meet --target risk=10,min_coverage=0.99,confidence=0.9" in err
    # the risk's run, started just below the floor's cut, fails at once: the message says so
    assert "from the cut just below the cut that certifies coverage >= 0.99" in err
    assert "is not rejected at its first cut" in err


# --------------------------------------------------------------------------------------------
# model.json format_version 4: the floor checked field by field
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gate_model(gate_selection):
    return json.loads((gate_selection / "model.json").read_text())


def _edited(model, target=None, certificate=None, **fields):
    edited = copy.deepcopy(model)
    edited["target"].update(target or {})
    edited["certificate"].update(certificate or {})
    edited.update(fields)
    return edited


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            {"target": {"min_coverage": "0.5"}},
            "target.min_coverage must be a number in (0, 1), got '0.5'",
        ),
        (
            {"target": {"min_coverage": True}},
            "target.min_coverage must be a number in (0, 1), got True",
        ),
        (
            {"target": {"min_coverage": float("nan")}},
            "target: min_coverage must lie in (0, 1), got nan",
        ),
        ({"target": {"min_coverage": 1}}, "target min_coverage=1 leaves the full set only"),
        ({"target": {"min_coverage": -0.5}}, "target: min_coverage must lie in (0, 1), got -0.5"),
        (
            {"target": {"min_coverage": 0.6}},
            "certificate.coverage_bound is 0.5 but the target's min_coverage is 0.6",
        ),
        (
            {"certificate": {"method": "ltt"}},
            "certificate.method is 'ltt' but a certified risk target is certified by "
            "'ltt+order-statistic'",
        ),
        (
            {"target": {"kind": "coverage", "value": 0.5}},
            "target min_coverage is the floor of a certified risk target",
        ),
        ({"format_version": 3}, "target.min_coverage is not a field of a format_version 3 model"),
    ],
)
def test_a_malformed_floor_is_refused_naming_its_field(gate_model, edit, message):
    assert validate_model(gate_model)[1].method == JOINT_METHOD  # the file as select wrote it
    edited = _edited(gate_model, **edit)
    edited = json.loads(json.dumps(edited))  # through JSON, as read_model reads it (NaN included)
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        validate_model(edited)


def test_a_floor_without_confidence_or_a_gate_method_without_floor_is_refused(gate_model):
    no_confidence = _edited(gate_model, certificate=None)
    del no_confidence["target"]["confidence"]
    # a certificate with no confidence in the target is refused first: the floor needs the level
    with pytest.raises(ValueError, match=r"^target must be an object .* then min_coverage\)"):
        validate_model(no_confidence)
    no_floor = copy.deepcopy(gate_model)
    del no_floor["target"]["min_coverage"]
    with pytest.raises(ValueError, match="^certificate.method is 'ltt\\+order-statistic' but"):
        validate_model(no_floor)


# --------------------------------------------------------------------------------------------
# SelectiveClassifier(min_coverage=...)
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:1200], y[:1200]


def test_the_estimator_fits_the_gate_and_states_its_theorem(digits):
    X, y = digits
    model = SelectiveClassifier(
        LogisticRegression(max_iter=2000),
        target="risk",
        value=5,
        confidence=0.9,
        min_coverage=0.5,
        C_grid=(1.0,),
    ).fit(X, y)
    selection = model.selection_
    assert (selection.method, selection.risk_bound, selection.coverage_bound) == (
        JOINT_METHOD,
        5.0,
        0.5,
    )
    assert selection.audit is not None and selection.audit.method == JOINT_METHOD
    assert model.report_["guarantee"] == gate_statement(selection.certificate, "%")
    assert model.report_["guarantee"].startswith(
        f"With probability at least 0.9 over the draw of the {selection.n_calibration} calibration"
    )
    # the same selection decides as apply decides
    assert model.get_params()["min_coverage"] == 0.5
    plain = SelectiveClassifier(
        LogisticRegression(max_iter=2000), target="risk", value=5, confidence=0.9, C_grid=(1.0,)
    ).fit(X, y)
    assert "guarantee" not in plain.report_  # no floor: the statements of select's report
    assert plain.selection_.method == "ltt"


@pytest.mark.parametrize(
    "params, message",
    [
        (
            {"target": "coverage", "value": 0.8, "confidence": 0.9, "min_coverage": 0.5},
            "min_coverage=0.5 is the coverage floor of a certified risk target (a release gate), "
            "not of target='coverage' with confidence=0.9",
        ),
        (
            {"target": "risk", "value": 5, "min_coverage": 0.5},
            "not of target='risk' with confidence=None",
        ),
        (
            {"target": "risk", "value": 5, "confidence": 0.9, "min_coverage": 1},
            "min_coverage=1 leaves the full set only, whose risk is the target with no floor: drop "
            "min_coverage",
        ),
        (
            {"target": "risk", "value": 5, "confidence": 0.9, "min_coverage": float("nan")},
            "min_coverage must lie in (0, 1), got nan",
        ),
        (
            {"target": "risk", "value": 5, "confidence": 0.9, "min_coverage": "0.5"},
            "min_coverage must be a number (a coverage floor in (0, 1), or None), got '0.5'",
        ),
    ],
)
def test_the_estimator_refuses_a_floor_it_cannot_certify(digits, params, message):
    X, y = digits
    model = SelectiveClassifier(LogisticRegression(), **params)
    with pytest.raises(ValueError) as caught:
        model.fit(X[:300], y[:300])
    assert message in str(caught.value)
    assert not isinstance(caught.value, InfeasibleTargetError)
    assert not hasattr(model, "estimator_")  # refused before anything is fitted
