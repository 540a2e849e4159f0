"""Tests of rejectopt.model: the guard, the guarded decisions and model.json, on known answers."""

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from rejectopt._features import (
    FEATURE_LIMIT,
    check_features,
    feature_bounds,
    out_of_range,
    out_of_range_message,
)
from rejectopt._selection_function import _row_uniforms
from rejectopt.model import (
    _MODEL_FORMAT,
    decide,
    model_dict,
    read_model,
    validate_model,
)
from rejectopt.scores import REG
from rejectopt.scores._base import PerClassLinearScore
from rejectopt.selective import SelectionFunction
from rejectopt.targets import CertifiedSelection, OODTarget, Target

#: A two-class, two-feature linear score written by hand: s = coef_c . (x - mean) / scale + intercept_c.
SCORE = {
    "kind": "sele",
    "C": 1.0,
    "n_classes": 2,
    "n_features": 2,
    "mean": [1.0, -2.0],
    "scale": [2.0, 0.5],
    "coef": [[1.0, -1.0], [0.5, 2.0]],
    "intercept": [0.0, 1.0],
    "unseen_class_score": 9.0,
    "class_seen": [True, True],
}


def _by_hand(X, classes):
    coef, intercept = np.array(SCORE["coef"]), np.array(SCORE["intercept"])
    Z = (X - np.array(SCORE["mean"])) / np.array(SCORE["scale"])
    return np.array([Z[i] @ coef[c] + intercept[c] for i, c in enumerate(classes)])


def test_out_of_range_flags_extremes_and_nan_and_names_the_first():
    X = np.array([[0.0, 1.0], [1e151, 0.0], [0.0, np.nan], [-2e150, 3.0], [5.0, 5.0]])
    rows, first = out_of_range(X)
    np.testing.assert_array_equal(rows, [False, True, True, True, False])
    assert first == (1, 0)
    assert out_of_range(np.array([[0.0, 1.0], [2.0, np.inf], [np.nan, 3.0]]))[1] == (
        1,
        1,
    )  # row-major order
    # per-column bounds
    rows, first = out_of_range(X[[0, 4]], np.array([-1.0, -1.0]), np.array([4.0, 6.0]))
    np.testing.assert_array_equal(rows, [False, True])
    assert first == (1, 0)
    rows, first = out_of_range(
        X[[0, 4]], 0.0, [5.0, 5.0]
    )  # scalar and list bounds, values on the bounds
    assert not rows.any() and first is None
    rows, first = out_of_range(np.zeros((0, 3)))
    assert not rows.any() and first is None


def test_out_of_range_message_says_why():
    assert out_of_range_message(float("nan"), "at row 1, column 0") == (
        "value NaN at row 1, column 0 is out of range: values must be finite numbers"
    )
    assert out_of_range_message(float("-inf"), "at row 1, column 0") == (
        "value -inf at row 1, column 0 is out of range: values must be finite numbers"
    )
    assert out_of_range_message(1e200, "in column 'f4' at row 7") == (
        "value 1e+200 in column 'f4' at row 7 is out of range: values must lie within +-1e+150 (beyond, "
        "standardising the features overflows float64)"
    )
    assert out_of_range_message(0.25, "at row 0, column 3", stated=False) == (
        "value 0.25 at row 0, column 3: standardised with the model's mean and scale it lies beyond +-1e+150"
    )


def test_feature_bounds_are_the_raw_and_the_standardised_limits():
    score = PerClassLinearScore.from_dict(SCORE)
    low, high = feature_bounds(score)
    # |x| <= L and |(x - mean) / scale| <= L: feature 0 (scale 2) is bounded by the raw limit, feature 1 (scale 0.5)
    # by the standardised one
    np.testing.assert_array_equal(low, [-FEATURE_LIMIT, -2.0 - 0.5 * FEATURE_LIMIT])
    np.testing.assert_array_equal(high, [FEATURE_LIMIT, -2.0 + 0.5 * FEATURE_LIMIT])
    assert feature_bounds(object()) == (-FEATURE_LIMIT, FEATURE_LIMIT)
    # a feature whose training values spread over 1e-6 gets a bound 1e6 times tighter
    narrow = REG(C=0).fit(np.array([[0.0], [1e-6]]), np.array([0, 0]), np.array([0.0, 1.0]))
    np.testing.assert_allclose(feature_bounds(narrow), ([-5e143], [5e143]))


def test_check_features_names_row_and_column():
    X = np.ones((5, 3))
    check_features(X)
    X[3, 1], X[4, 0] = -1e200, np.inf
    with pytest.raises(
        ValueError,
        match=r"X: value -1e\+200 at row 3, column 1 is out of range: values must lie "
        r"within \+-1e\+150 .*\(2 row\(s\) in all\)",
    ):
        check_features(X)
    X[1, 0] = np.nan
    with pytest.raises(
        ValueError,
        match=r"^X_train: value NaN at row 1, column 0 is out of range: values must be "
        r"finite numbers \(3 row\(s\) in all\)$",
    ):
        check_features(X, what="X_train")


def test_decide_known_answer_with_guarded_rows():
    score = PerClassLinearScore.from_dict(SCORE)
    X = np.array([[1.0, -2.0], [3.0, -1.0], [1e151, 0.0], [0.0, 1e150], [2.0, 0.0], [0.0, np.nan]])
    classes = np.array([0, 1, 0, 1, 1, 0])
    unseen = np.array([False, False, False, False, True, False])
    expected = _by_hand(X[:2], classes[:2])  # 0 and 0.5 * 1 + 2 * 2 + 1 = 5.5
    np.testing.assert_array_equal(expected, [0.0, 5.5])
    selection = SelectionFunction(threshold=5.5, accept_prob=0.25)
    out = decide(score, selection, X, classes, unseen=unseen, seed=7)
    np.testing.assert_array_equal(out.uncertainty, [0.0, 5.5, np.inf, np.inf, np.inf, np.inf])
    np.testing.assert_array_equal(out.acceptance_probability, [1.0, 0.25, 0, 0, 0, 0])
    np.testing.assert_array_equal(out.out_of_range, [False, False, True, True, False, True])
    np.testing.assert_array_equal(out.unseen, unseen)
    assert out.first_out_of_range == (2, 0)
    assert out.accept[0] and not out.accept[2:].any()
    # the tie at the threshold: sequential draws are the selection function's own, hash draws the row's
    sequential = selection.accept(out.uncertainty, random_state=7)
    assert out.accept[1] == sequential[1]
    hashed = decide(score, selection, X, classes, unseen=unseen, seed=7, tie_breaking="hash")
    assert hashed.accept[1] == (_row_uniforms(X[[1]], 7)[0] < 0.25)
    # a threshold of +inf accepts everything but the guarded rows
    everything = decide(
        score, SelectionFunction(threshold=np.inf, accept_prob=1.0), X, classes, unseen=unseen
    )
    np.testing.assert_array_equal(everything.accept, [True, True, False, False, False, False])
    with pytest.raises(ValueError, match="tie_breaking must be one of 'hash', 'sequential'"):
        decide(score, selection, X, classes, tie_breaking="random")


def test_row_uniforms_depend_on_the_row_alone():
    X = np.array([[0.0, 1.0], [-0.0, 1.0], [2.0, 3.0]])
    u = _row_uniforms(X, 3)
    assert u[0] == u[1] != u[2]
    assert _row_uniforms(X[[2, 0]], 3).tolist() == [u[2], u[0]]
    assert ((0 <= u) & (u < 1)).all() and _row_uniforms(X, 4)[0] != u[0]


def test_tie_breaking_has_one_home():
    """Both draws live in SelectionFunction.accept: sequential in row order, hash from each tied row's values."""
    selection = SelectionFunction(threshold=1.0, accept_prob=0.5)
    s = np.array([0.5, 1.0, 1.0, 2.0, 1.0])
    rows = np.arange(10.0).reshape(5, 2)
    sequential = selection.accept(s, random_state=4)
    np.testing.assert_array_equal(sequential[[1, 2, 4]], np.random.default_rng(4).random(3) < 0.5)
    hashed = selection.accept(s, random_state=4, tie_breaking="hash", rows=rows)
    np.testing.assert_array_equal(hashed[[1, 2, 4]], _row_uniforms(rows[[1, 2, 4]], 4) < 0.5)
    assert hashed[0] and not hashed[3]
    # a tied row's draw is its own: the same in any batch
    assert selection.accept(
        s[[4, 1]], random_state=4, tie_breaking="hash", rows=rows[[4, 1]]
    ).tolist() == [hashed[4], hashed[1]]
    assert SelectionFunction(1.0, 1.0).accept(s, tie_breaking="hash", rows=rows).tolist() == [
        1,
        1,
        1,
        0,
        1,
    ]
    assert (
        not SelectionFunction(1.0, 0.0)
        .accept(s, random_state=4, tie_breaking="hash", rows=rows)[1:]
        .any()
    )
    with pytest.raises(ValueError, match="pass rows"):
        selection.accept(s, random_state=4, tie_breaking="hash")
    with pytest.raises(
        ValueError, match="tie_breaking must be one of 'hash', 'sequential'; got 'random'"
    ):
        selection.accept(s, tie_breaking="random")


def _model(tmp_path, **changes):
    score = PerClassLinearScore.from_dict(SCORE)
    content = model_dict(
        feature_columns=["a", "b"],
        classes=["x", "y"],
        score=score,
        selection=SelectionFunction(threshold=1.5, accept_prob=1.0),
        target=Target("coverage", 0.8),
        loss_name="zero_one",
        versions={"rejectopt": "test"},
        pred_column="y_pred",
    )
    content.update(changes)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(content))
    return path, content


def test_model_json_round_trip(tmp_path):
    path, content = _model(tmp_path)
    assert list(content)[:2] == ["format", "format_version"] and content["format"] == _MODEL_FORMAT
    model, score, selection = read_model(path)
    assert model == content and selection == SelectionFunction(threshold=1.5, accept_prob=1.0)
    X = np.array([[0.0, 0.0], [2.0, -1.0]])
    np.testing.assert_array_equal(score.predict(X, np.array([0, 1])), _by_hand(X, [0, 1]))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"format": "other"}, "not a rejectopt model"),
        (
            {"format_version": 6},
            "unsupported format_version 6: this release reads format_version 1, 2, 3, 4 and 5 \\(a newer",
        ),
        (
            {"format_version": "1"},
            "unsupported format_version '1': this release reads format_version 1, 2, 3, 4 and 5$",
        ),
        ({"classes": ["x"]}, "classes has 1 entries but score.n_classes is 2"),
        ({"feature_columns": ["a", "a"]}, "feature_columns lists 'a' twice"),
        ({"pred_column": "a"}, "feature_columns includes the pred_column 'a'"),
        ({"extra": 1}, r"unknown field\(s\) \['extra'\]"),
    ],
)
def test_read_model_names_the_bad_field(tmp_path, changes, message):
    path, _ = _model(tmp_path, **changes)
    with pytest.raises(ValueError, match=f"^{tmp_path / 'model.json'}: invalid model: {message}"):
        read_model(path)


def test_read_model_refuses_what_is_not_a_model_file(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        read_model(tmp_path / "absent.json")
    (tmp_path / "nan.json").write_text('{"format": NaN}')
    with pytest.raises(ValueError, match=r"not a JSON model file \(non-standard JSON number NaN\)"):
        read_model(tmp_path / "nan.json")
    with pytest.raises(ValueError, match="missing field"):
        validate_model({"format": _MODEL_FORMAT, "format_version": 1})


def test_an_old_format_model_file_still_loads_and_decides():
    """A model.json written by the release before format_version 2 (select on wine, kept in tests/data)."""
    path = Path(__file__).parent / "data" / "model_v1_wine.json"
    raw = json.loads(path.read_text())
    assert raw["format_version"] == 1 and "n_logits" not in raw and "certificate" not in raw
    model, score, selection = read_model(path)
    assert (
        model["n_logits"] is None
        and model["certificate"] is None
        and type(selection) is SelectionFunction
    )
    X = (
        np.array(raw["score"]["mean"])[None, :]
        + np.array(raw["score"]["scale"])[None, :] * np.eye(13)[:3]
    )
    coef, intercept = np.array(raw["score"]["coef"]), np.array(raw["score"]["intercept"])
    expected = [(np.eye(13)[i] @ coef[c]) + intercept[c] for i, c in enumerate([0, 1, 2])]
    np.testing.assert_allclose(score.predict(X, np.array([0, 1, 2])), expected, rtol=1e-12)
    assert selection.threshold == raw["selection"]["threshold"]


def test_model_file_size_is_capped_before_parsing(tmp_path):
    from rejectopt.model import MODEL_MAX_BYTES

    path = tmp_path / "model.json"
    with open(
        path, "wb"
    ) as handle:  # sparse: no disk written; not JSON, so only the size can refuse it
        handle.truncate(MODEL_MAX_BYTES + 1)
    with pytest.raises(
        ValueError,
        match=r"model.json: 100 MB is larger than a model file can be \(100 MB, 4 million "
        r"weights\); refused before parsing",
    ):
        read_model(path)


def test_duplicate_json_keys_are_refused_naming_the_key(tmp_path):
    path, content = _model(tmp_path)
    text = json.dumps(content).replace('"threshold": 1.5', '"threshold": 1.5, "threshold": "inf"')
    path.write_text(text)
    with pytest.raises(
        ValueError, match=r"not a JSON model file \(duplicate key 'threshold' in one JSON object"
    ):
        read_model(path)


def test_class_seen_must_match_the_weights_of_an_unseen_class(tmp_path):
    unseen = dict(
        SCORE, class_seen=[True, False], coef=[[1.0, -1.0], [0.0, 0.0]], intercept=[0.0, 9.0]
    )
    path, _ = _model(tmp_path, score=unseen)
    _, score, _ = read_model(path)  # an unseen class's row: zero weights, the unseen-class score
    assert score.predict(np.array([[5.0, 5.0]]), np.array([1])).tolist() == [9.0]
    path, _ = _model(tmp_path, score=dict(SCORE, class_seen=[True, False]))
    with pytest.raises(
        ValueError,
        match=r"score.class_seen\[1\] is false \(no training row predicted class 1\) but "
        r"score.coef\[1\] or score.intercept\[1\] is not that of an unseen class",
    ):
        read_model(path)


CERTIFICATE = {
    "bound": 5.0,
    "confidence": 0.9,
    "n_calibration": 750,
    "method": "ltt",
    "risk_bound": 5.0,
    "coverage_bound": 0.6,
    "loss_bound": 100.0,
}


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"n_logits": 1}, "n_logits must be null or an integer >= 2"),
        ({"n_logits": True}, "n_logits must be null or an integer >= 2"),
        (
            {"certificate": {"bound": 2.0}},
            "certificate must be an object with keys bound, confidence, coverage_bound",
        ),
        (
            {"certificate": dict(CERTIFICATE, confidence=1.5)},
            r"certificate.confidence must lie in \(0, 1\)",
        ),
        (
            {"certificate": dict(CERTIFICATE, n_calibration=0)},
            "certificate.n_calibration must be an integer >= 1",
        ),
        (
            {"certificate": CERTIFICATE},
            r"certificate.confidence 0.9 differs from the target's confidence None",
        ),
        (
            {"target": {"kind": "risk", "value": 5, "confidence": 0.9}},
            "target has confidence 0.9 .a certified target. but certificate is null",
        ),
    ],
)
def test_format_2_fields_are_checked(tmp_path, changes, message):
    path, _ = _model(tmp_path, **changes)
    with pytest.raises(ValueError, match=f"invalid model: {message}"):
        read_model(path)


def test_a_certified_model_reads_back_its_certificate(tmp_path):
    path, content = _model(
        tmp_path,
        certificate=CERTIFICATE,
        n_logits=10,
        target={"kind": "risk", "value": 5, "confidence": 0.9},
    )
    model, _, selection = read_model(path)
    assert model == content and isinstance(selection, CertifiedSelection)
    assert selection.certificate == CERTIFICATE and selection.threshold == 1.5


def _certified(tmp_path, target, selection, loss_name="zero_one", **changes):
    """A certified model.json for ``target``, then ``changes`` applied to its entries (``...`` deletes the field)."""
    score = PerClassLinearScore.from_dict(SCORE)
    content = model_dict(
        feature_columns=["a", "b"],
        classes=["x", "y"],
        score=score,
        selection=selection,
        target=target,
        loss_name=loss_name,
        versions={"rejectopt": "test"},
        pred_column="y_pred",
        ood_column="is_ood" if isinstance(target, OODTarget) else None,
    )
    for key, value in changes.items():
        entry, field = key.split("__")
        if value is ...:
            del content[entry][field]
        else:
            content[entry][field] = value
    path = tmp_path / "model.json"
    path.write_text(json.dumps(content))
    return path


RISK = (
    Target("risk", 5, confidence=0.9),
    CertifiedSelection(
        1.5,
        0.0,
        bound=5.0,
        confidence=0.9,
        n_calibration=750,
        method="ltt",
        risk_bound=5.0,
        coverage_bound=0.45,
        loss_bound=100.0,
    ),
)
COVERAGE = (
    Target("coverage", 0.8, confidence=0.9),
    CertifiedSelection(
        1.5,
        1.0,
        bound=0.81,
        confidence=0.9,
        n_calibration=750,
        method="order-statistic",
        risk_bound=7.5,
        coverage_bound=0.81,
        loss_bound=100.0,
    ),
)
TPR_FPR = (
    OODTarget("tpr-fpr", (0.8, 0.3), confidence=0.9),
    CertifiedSelection(
        1.5,
        1.0,
        bound=0.28,
        confidence=0.9,
        n_calibration=750,
        method="order-statistic+clopper-pearson",
        coverage_bound=0.81,
    ),
)
EDITED = "the file was edited or is corrupt: re-run select$"


@pytest.mark.parametrize(
    "fitted, changes, message",
    [
        (
            RISK,
            {"certificate__bound": 7.0, "certificate__risk_bound": 7.0},
            "certificate.bound is 7 but the target's risk is 5: a certified selection's bound is at most its target's "
            "\\(<= 5\\)",
        ),
        (
            RISK,
            {"certificate__risk_bound": 6.0},
            "certificate.risk_bound is 6 but the target's risk is 5",
        ),
        (
            RISK,
            {"certificate__risk_bound": None},
            "certificate.risk_bound is NaN but the target's risk is 5",
        ),
        (
            COVERAGE,
            {"certificate__bound": 0.7, "certificate__coverage_bound": 0.7},
            "certificate.bound is 0.7 but the target's coverage is 0.8: a certified selection's bound is at least its "
            "target's \\(>= 0.8\\)",
        ),
        (
            TPR_FPR,
            {"certificate__bound": 0.35},
            "certificate.bound is 0.35 but the target's fpr is 0.3",
        ),
        (
            TPR_FPR,
            {"certificate__coverage_bound": 0.75},
            "certificate.coverage_bound is 0.75 but the target's tpr is 0.8",
        ),
        (
            COVERAGE,
            {"selection__accept_prob": 0.37},
            "selection.accept_prob is 0.37 but a certified selection \\(certificate not null\\) "
            "accepts its threshold's ties "
            "all or none \\(0 or 1\\), never at random",
        ),
    ],
)
def test_a_certified_model_contradicting_its_target_is_refused(tmp_path, fitted, changes, message):
    """Fitting never writes these (it raises InfeasibleTargetError instead): a file that does was edited."""
    assert (
        read_model(_certified(tmp_path, *fitted))[2].certificate == fitted[1].certificate
    )  # as written, it reads
    with pytest.raises(
        ValueError, match=f"^{tmp_path / 'model.json'}: invalid model: {message}.*; {EDITED}"
    ):
        read_model(_certified(tmp_path, *fitted, **changes))


@pytest.mark.parametrize(
    "fitted, loss_name, loss_bound",
    [
        (RISK, "zero_one", 100.0),
        (COVERAGE, "zero_one", 100.0),
        (TPR_FPR, "zero_one", None),
        (
            (
                Target("risk", 1, confidence=0.9),
                replace(RISK[1], bound=1.0, risk_bound=1.0, loss_bound=4.0),
            ),
            "mae",
            4.0,
        ),
        ((COVERAGE[0], replace(COVERAGE[1], loss_bound=10.0)), "column cost", 10.0),
    ],
    ids=["risk", "coverage", "tpr-fpr", "risk-mae", "coverage-column"],
)
def test_a_format_3_certificate_reads_back_its_loss_bound(tmp_path, fitted, loss_name, loss_bound):
    """B as the fit recorded it: 100 for the 0/100 loss, the declared one for the MAE or a column, null for TPR-FPR."""
    path = _certified(tmp_path, *fitted, loss_name=loss_name)
    raw = json.loads(path.read_text())
    assert raw["format_version"] == 3 and raw["certificate"]["loss_bound"] == loss_bound
    model, _, selection = read_model(path)
    assert model == raw and selection.certificate == fitted[1].certificate
    assert (
        math.isnan(selection.loss_bound)
        if loss_bound is None
        else selection.loss_bound == loss_bound
    )


@pytest.mark.parametrize(
    "fitted, changes, message",
    [
        (
            RISK,
            {"certificate__loss_bound": ...},
            "certificate.loss_bound is missing: a format_version 3 certificate records B",
        ),
        (
            RISK,
            {"certificate__loss_bound": "100"},
            "certificate.loss_bound must be a finite number > 0 .B, the largest "
            "loss a prediction can have. or null, got '100'$",
        ),
        (
            RISK,
            {"certificate__loss_bound": 0},
            "certificate.loss_bound must be a finite number > 0 .* got 0$",
        ),
        (
            RISK,
            {"certificate__loss_bound": -100.0},
            "certificate.loss_bound must be a finite number > 0 .* got -100.0$",
        ),
        (
            RISK,
            {"certificate__loss_bound": None},
            "certificate.loss_bound is null but method 'ltt' certifies a risk",
        ),
        (
            COVERAGE,
            {"certificate__loss_bound": None},
            "certificate.loss_bound is null but certificate.risk_bound is 7.5: a risk bound rests on B",
        ),
        (
            COVERAGE,
            {"certificate__loss_bound": None, "certificate__risk_bound": None},
            f"certificate.loss_bound is null but the target is a certified coverage: select records B, "
            f"the largest loss a "
            f"prediction can have, that the risk bound rests on; {EDITED}",
        ),
        (
            RISK,
            {"certificate__loss_bound": 50.0},
            f"certificate.loss_bound is 50 but loss zero_one has losses of 100 .an error, by its "
            f"definition.: B is at least "
            f"the largest loss a prediction can have; {EDITED}",
        ),
        (
            TPR_FPR,
            {"certificate__loss_bound": 100.0},
            f"certificate.loss_bound is 100 but a tpr-fpr certificate bounds no loss .loss_bound null.; {EDITED}",
        ),
    ],
)
def test_a_format_3_model_whose_loss_bound_is_not_what_select_records_is_refused(
    tmp_path, fitted, changes, message
):
    assert (
        read_model(_certified(tmp_path, *fitted))[2].certificate == fitted[1].certificate
    )  # as written, it reads
    with pytest.raises(ValueError, match=f"^{tmp_path / 'model.json'}: invalid model: {message}"):
        read_model(_certified(tmp_path, *fitted, **changes))


#: A certified model.json written by select of the release before format_version 3 (its certificate without
#: loss_bound): wine's f0..f12 and a y_pred wrong on every 5th row, --target coverage=0.5 --confidence 0.9 --C 1.
MODEL_V2 = Path(__file__).parent / "data" / "model_v2_wine_certified.json"


def test_a_format_2_certified_model_still_loads_its_loss_bound_unrecorded():
    raw = json.loads(MODEL_V2.read_text())
    assert raw["format_version"] == 2 and "loss_bound" not in raw["certificate"]
    model, _, selection = read_model(MODEL_V2)
    assert isinstance(selection, CertifiedSelection) and math.isnan(selection.loss_bound)
    assert (
        model["certificate"] == dict(raw["certificate"], loss_bound=None) == selection.certificate
    )
    assert (selection.threshold, selection.accept_prob) == (raw["selection"]["threshold"], 1.0)
    edited = dict(
        raw, certificate=dict(raw["certificate"], loss_bound=100.0)
    )  # a format-2 file never had it
    with pytest.raises(
        ValueError, match="^certificate.loss_bound is not a field of a format_version 2 certificate"
    ):
        validate_model(edited)
    assert (
        validate_model(dict(edited, format_version=3))[1].loss_bound == 100.0
    )  # the same certificate in format 3


RISK_MAE = (
    Target("risk", 1, confidence=0.9),
    replace(RISK[1], bound=1.0, risk_bound=1.0, loss_bound=4.0),
)


@pytest.mark.parametrize(
    "fitted, loss_name, changes, message",
    [
        (
            RISK,
            "zero_one",
            {"certificate__method": "foo"},
            "certificate.method is 'foo' but a cert",
        ),
        (
            COVERAGE,
            "zero_one",
            {"certificate__method": "foo"},
            "certificate.method is 'foo' but a certified coverage target is certified by ",
        ),
        (
            TPR_FPR,
            "zero_one",
            {"certificate__method": "order-statistic"},
            "certificate.method is 'order-statistic' but a certified tpr-fpr",
        ),
        (
            RISK,
            "zero_one",
            {"target": {"kind": "coverage", "value": 0.4, "confidence": 0.9}},
            "certificate.method is 'ltt' but a certified coverage target is certified by "
            "'order-statistic'",
        ),
        (
            RISK,
            "zero_one",
            {"certificate__coverage_bound": 1.5},
            r"certificate.coverage_bound is 1.5 but a coverage .a share of the rows. lies in \[0, 1\]",
        ),
        (
            RISK,
            "zero_one",
            {"certificate__coverage_bound": -0.5},
            "certificate.coverage_bound is -0.5 but a coverage",
        ),
        (
            COVERAGE,
            "zero_one",
            {"certificate__coverage_bound": 1.5, "certificate__bound": 1.5},
            "certificate.coverage_bound is 1.5 but a coverage",
        ),
        (
            TPR_FPR,
            "zero_one",
            {"certificate__coverage_bound": 1.5},
            "certificate.coverage_bound is 1.5 but a coverage",
        ),
        (TPR_FPR, "zero_one", {"certificate__bound": -0.1}, "certificate.bound is -0.1 but a cov"),
        (
            RISK_MAE,
            "mae",
            {"certificate__loss_bound": 1e-300},
            "certificate.loss_bound is 1e-300 but certificate.risk_bound is 1: a risk bound lies in",
        ),
        (
            RISK_MAE,
            "mae",
            {
                "certificate__loss_bound": 0.5,
                "certificate__risk_bound": 0.5,
                "certificate__bound": 0.5,
            },
            "certificate.loss_bound is 0.5 but the target's risk is 1: a certified risk lies below B",
        ),
        (
            (COVERAGE[0], replace(COVERAGE[1], loss_bound=10.0)),
            "column cost",
            {"certificate__loss_bound": 1e-300},
            "certificate.loss_bound is 1e-300 but certificate.risk_bound is 7.5",
        ),
        (
            RISK_MAE,
            "mae",
            {"classes": ["0", "9"]},
            r"certificate.loss_bound is 4 but loss mae on the classes \['0', '9'\] has losses up to 9",
        ),
        (
            RISK,
            "zero_one",
            {"certificate__bound": 4.0},
            "certificate.bound is 4 but certificate.risk_bound is 5: a certified risk's bound is",
        ),
        (
            COVERAGE,
            "zero_one",
            {"certificate__bound": 0.9},
            "certificate.bound is 0.9 but certificate.coverage_bound is 0.81",
        ),
        (
            RISK,
            "zero_one",
            {"certificate__bound": -1.0, "certificate__risk_bound": -1.0},
            "certificate.risk_bound is -1, below 0",
        ),
        (
            COVERAGE,
            "zero_one",
            {"certificate__risk_bound": -1.0},
            "certificate.risk_bound is -1, below 0",
        ),
        (
            RISK,
            "zero_one",
            {"loss": "hinge"},
            "loss is 'hinge' but select writes 'zero_one', 'mae'",
        ),
        (RISK, "zero_one", {"loss": "column "}, "loss is 'column ' but select writes"),
    ],
)
def test_an_edited_certificate_is_refused_naming_the_field(
    tmp_path, fitted, loss_name, changes, message
):
    """Fields that disagree with each other, with the target's kind or with the loss: never fitted."""
    path = _certified(tmp_path, *fitted, loss_name=loss_name)
    assert read_model(path)[2].certificate == fitted[1].certificate  # as written, it reads
    content = json.loads(path.read_text())
    for key, value in changes.items():
        entry, _, field = key.partition("__")
        if field:
            content[entry][field] = value
        else:
            content[entry] = value
    path.write_text(json.dumps(content))
    with pytest.raises(
        ValueError, match=f"^{tmp_path / 'model.json'}: invalid model: {message}.*; {EDITED}"
    ):
        read_model(path)
