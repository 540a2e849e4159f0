"""Tests of rejectopt.logits: a deep network's outputs as input (baselines, learned scores, the whole route).

The route is checked on two real models: a PCA + logistic-regression "network" on scikit-learn's
digits (no torch needed; :func:`cli_data.network_outputs`) and, under the ``torch`` marker, a
small PyTorch MLP trained on the CPU whose logits and penultimate embeddings are exported to an
NPZ and run through the library and the command line.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import support
from cli_data import network_outputs
from scipy import special, stats

from rejectopt import cli
from rejectopt.fitting import fit_selective, split_rows
from rejectopt.logits import (
    BASELINES,
    NetworkOutputError,
    baseline_uncertainties,
    check_network_outputs,
    doctor,
    energy,
    entropy,
    fit_logits,
    fit_pnorm,
    fit_temperature,
    margin,
    max_logit,
    maxlogit_pnorm,
    msp,
    msp_pnorm,
    predictions,
    softmax,
)
from rejectopt.metrics import aurc, rc_curve
from rejectopt.targets import Target


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    return network_outputs(str(tmp_path_factory.getbasetemp() / "network_outputs"))


@pytest.fixture(scope="module")
def route(net):
    return fit_logits(net["logits"], net["labels"], net["embeddings"], seed=3)


# --------------------------------------------------------------------------------------------
# Baselines against independent computations (scipy)
# --------------------------------------------------------------------------------------------
def test_baselines_equal_scipy_formulas(net):
    Z = net["logits"]
    p = special.softmax(Z, axis=1)
    top2 = np.sort(p, axis=1)[:, -2:]
    expected = {
        "mcp": 1.0 - p.max(axis=1),
        "entropy": stats.entropy(p, axis=1),
        "energy": -special.logsumexp(Z, axis=1),
        "doctor": 1.0 - (p**2).sum(axis=1),
        "max_logit": -Z.max(axis=1),
        "margin": top2[:, 0] - top2[:, 1],
    }
    got = baseline_uncertainties(Z)
    assert list(got) == list(BASELINES) == list(expected)
    for name, values in expected.items():
        np.testing.assert_allclose(got[name], values, rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(
        energy(Z, temperature=2.5), -2.5 * special.logsumexp(Z / 2.5, axis=1), atol=1e-12
    )
    np.testing.assert_allclose(softmax(Z), p, atol=1e-15)


def test_predictions_are_the_models_own_and_ties_take_the_first_class(net):
    assert (predictions(net["logits"]) == net["logits"].argmax(axis=1)).all()
    assert predictions([[1.0, 3.0, 3.0]]).tolist() == [1]


def test_softmax_baselines_ignore_a_shift_of_the_logits_and_energy_follows_it():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(50, 4)) * 30  # large logits: the stable forms must not overflow
    shifted = Z + 700.0  # exp(700 + 90) overflows float64 without the max shift
    for f in (msp, entropy, doctor, margin):
        np.testing.assert_allclose(f(shifted), f(Z), atol=1e-12)
    np.testing.assert_allclose(energy(shifted), energy(Z) - 700.0, atol=1e-9)
    np.testing.assert_allclose(max_logit(shifted), max_logit(Z) - 700.0, atol=1e-9)


def test_known_answers_uniform_and_certain():
    uniform = np.zeros((1, 4))
    assert msp(uniform)[0] == pytest.approx(0.75)
    assert entropy(uniform)[0] == pytest.approx(np.log(4))
    assert doctor(uniform)[0] == pytest.approx(0.75)
    assert margin(uniform)[0] == 0.0
    certain = np.array([[0.0, 1000.0, 0.0]])
    assert msp(certain)[0] == 0.0 and entropy(certain)[0] == pytest.approx(0.0, abs=1e-300)
    assert (
        doctor(certain)[0] == 0.0 and margin(certain)[0] == -1.0 and energy(certain)[0] == -1000.0
    )


# --------------------------------------------------------------------------------------------
# Validation: the error names the array, row and column
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "case, args, fragments, where",
    [
        (
            "nan",
            lambda Z, y, E: (_with(Z, (3, 2), np.nan), y, E),
            ["logits", "non-finite value nan"],
            (3, 2),
        ),
        (
            "inf_embedding",
            lambda Z, y, E: (Z, y, _with(E, (7, 1), np.inf)),
            ["embeddings", "inf"],
            (7, 1),
        ),
        (
            "label_high",
            lambda Z, y, E: (Z, _with(y, 5, 10), E),
            ["labels", "label 10", "0..9"],
            (5, None),
        ),
        (
            "label_fraction",
            lambda Z, y, E: (Z, _with(y.astype(float), 2, 1.5), E),
            ["label 1.5"],
            (2, None),
        ),
        (
            "label_rows",
            lambda Z, y, E: (Z, y[:-1], E),
            ["labels", "1296 rows, logits 1297"],
            (None, None),
        ),
        ("emb_rows", lambda Z, y, E: (Z, y, E[:10]), ["embeddings", "10 rows"], (None, None)),
        ("one_class", lambda Z, y, E: (Z[:, :1], y, E), ["at least 2 columns"], (None, None)),
        ("flat", lambda Z, y, E: (Z[:, 0], y, E), ["logits", "2-D", "(1297,)"], (None, None)),
        ("text", lambda Z, y, E: (Z.astype(str), y, E), ["real numbers"], (None, None)),
    ],
)
def test_bad_outputs_raise_naming_array_row_and_column(net, case, args, fragments, where):
    with pytest.raises(NetworkOutputError) as info:
        check_network_outputs(*args(net["logits"], net["labels"], net["embeddings"]))
    for fragment in fragments:
        assert fragment in str(info.value)
    assert (info.value.index, info.value.column) == where
    assert isinstance(info.value, ValueError)


def _with(array, position, value):
    array = np.array(array, copy=True)
    array[position] = value
    return array


# --------------------------------------------------------------------------------------------
# The route
# --------------------------------------------------------------------------------------------
def test_route_table_holds_every_method_evaluated_on_the_held_out_rows(net, route):
    table = route.table.set_index("method")
    assert list(table.index) == [
        *BASELINES,
        "maxlogit_pnorm",
        "msp_pnorm",
        "msp_ts",
        "reg",
        "tcp",
        "sele",
    ]  # registry order
    parts = split_rows(len(net["labels"]), seed=3)
    for name in parts:
        np.testing.assert_array_equal(route.parts[name], parts[name])
    rep = parts["report"]
    loss = 100.0 * (net["logits"].argmax(axis=1) != net["labels"])
    np.testing.assert_array_equal(route.loss, loss)
    for name, (function, _) in BASELINES.items():
        assert table.loc[name, "aurc"] == aurc(loss[rep], function(net["logits"])[rep])
    assert (table["n_eval"] == rep.size).all() and (table["risk_full"] == loss[rep].mean()).all()
    assert table.loc["sele", "features"] == "embeddings" and table.loc["mcp", "kind"] == "baseline"
    # each method's RC curve on the evaluation rows; its mean is the AuRC (eq. 27)
    for method, curve in route.curves.groupby("method", sort=False):
        assert curve["risk"].mean() == pytest.approx(table.loc[method, "aurc"], abs=1e-12)
        assert curve["risk"].iloc[-1] == pytest.approx(table.loc[method, "risk_full"])
    # the selection functions meet the coverage target on the calibration rows
    cal = parts["calibration"]
    for method, selection in route.selections.items():
        assert selection.acceptance_probability(
            route.uncertainty[method][cal]
        ).mean() == pytest.approx(0.8)


def test_learned_scores_are_fit_selective_on_the_embeddings(net, route):
    """SELE of the route is exactly fit_selective's on the same rows; TCP learns the true class's softmax posterior."""
    y_pred = net["logits"].argmax(axis=1)
    loss = 100.0 * (y_pred != net["labels"])
    parts = split_rows(len(loss), seed=3)
    direct = fit_selective(
        net["embeddings"],
        y_pred,
        loss,
        Target("coverage", 0.8),
        parts,
        score="sele",
        n_classes=10,
        seed=3,
    )
    np.testing.assert_array_equal(route.uncertainty["sele"], direct.uncertainty)
    assert route.table.set_index("method").loc["sele", "C"] == direct.C
    p_true = special.softmax(net["logits"], axis=1)[np.arange(len(loss)), net["labels"]]
    tcp = fit_selective(
        net["embeddings"],
        y_pred,
        loss,
        Target("coverage", 0.8),
        parts,
        score="tcp",
        n_classes=10,
        seed=3,
        fit_target=p_true,
    )
    np.testing.assert_allclose(route.uncertainty["tcp"], tcp.uncertainty, rtol=0, atol=1e-12)
    # better than a random ordering (whose expected AuRC is the error rate) on held-out rows
    table = route.table.set_index("method")
    assert (table.loc[["sele", "reg", "tcp"], "aurc"] < table.loc["sele", "risk_full"]).all()


def test_route_on_both_feature_sources_and_logits_only(net):
    both = fit_logits(
        net["logits"],
        net["labels"],
        net["embeddings"],
        scores=("reg",),
        baselines=("energy",),
        features=("embeddings", "logits"),
        C_grid=(1.0,),
        post_hoc=(),
    )
    assert both.table["method"].tolist() == ["energy", "reg@embeddings", "reg@logits"]
    only = fit_logits(
        net["logits"], net["labels"], scores="reg", baselines=(), post_hoc=(), C_grid=(1.0,)
    )
    assert only.table["features"].tolist() == ["logits"]
    np.testing.assert_array_equal(only.uncertainty["reg"], both.uncertainty["reg@logits"])


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"features": "embeddings", "embeddings": None}, "needs embeddings"),
        ({"scores": ("knn",)}, "unknown learned score"),
        ({"baselines": ("odin",)}, "unknown baseline"),
        ({"post_hoc": "odin"}, "unknown post-hoc score"),
        ({"target": "tpr=0.8,fpr=0.2"}, "coverage, risk or reject-cost"),
    ],
)
def test_route_errors_name_the_option(net, kwargs, fragment):
    arguments = {"embeddings": net["embeddings"], **kwargs}
    with pytest.raises(ValueError, match=fragment):
        fit_logits(net["logits"], net["labels"], **arguments)


def test_unmet_target_names_the_method(net):
    wrong = (
        net["logits"].argmax(axis=1) + 1
    ) % 10  # every prediction wrong: no coverage has risk <= 5
    with pytest.raises(
        ValueError, match=r"^mcp: cannot meet target risk=5 on the 389 calibration rows"
    ):
        fit_logits(net["logits"], wrong, target="risk=5", scores=())


# --------------------------------------------------------------------------------------------
# A real network: a PyTorch MLP trained on the CPU (marker `torch`)
# --------------------------------------------------------------------------------------------
def _train_mlp(X, y, seed):
    """A 64-32-16-10 ReLU MLP on the digits, trained with Adam; deterministic on one CPU thread."""
    import torch  # optional dependency (the `deep` extra): only this test's network needs it

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    body = torch.nn.Sequential(
        torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16), torch.nn.ReLU()
    )
    head = torch.nn.Linear(16, 10)
    optimiser = torch.optim.Adam([*body.parameters(), *head.parameters()], lr=3e-3)
    X_t, y_t = torch.tensor(X, dtype=torch.float32), torch.tensor(y)
    order = torch.Generator().manual_seed(seed)
    for _ in range(40):
        for batch in torch.randperm(len(y_t), generator=order).split(64):
            optimiser.zero_grad()
            torch.nn.functional.cross_entropy(head(body(X_t[batch])), y_t[batch]).backward()
            optimiser.step()

    def outputs(X_new):
        with torch.no_grad():
            embeddings = body(torch.tensor(X_new, dtype=torch.float32))
            return head(embeddings).double(), embeddings.double()

    return outputs


@pytest.mark.torch
def test_torch_network_outputs_through_library_and_cli(tmp_path):
    import torch  # optional dependency (the `deep` extra)
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    outputs = _train_mlp(X[:500], y[:500], seed=0)
    logits_t, embeddings_t = outputs(X[500:])
    again = _train_mlp(X[:500], y[:500], seed=0)(X[500:])[0]
    assert torch.equal(
        logits_t, again
    )  # seeded, one thread, deterministic algorithms: the same network
    np.savez(
        tmp_path / "net.npz",
        logits=logits_t.numpy(),
        labels=y[500:],
        embeddings=embeddings_t.numpy(),
    )
    with np.load(tmp_path / "net.npz") as data:
        logits, labels, embeddings = data["logits"], data["labels"], data["embeddings"]
    # the exported outputs give torch's own quantities
    np.testing.assert_allclose(
        energy(logits), -torch.logsumexp(logits_t, dim=1).numpy(), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        msp(logits), 1 - torch.softmax(logits_t, dim=1).max(dim=1).values.numpy(), atol=1e-12
    )
    np.testing.assert_array_equal(predictions(logits), logits_t.argmax(dim=1).numpy())
    error_rate = float((predictions(logits) != labels).mean())
    assert 0.02 < error_rate < 0.3  # a real, imperfect network

    route = fit_logits(logits, labels, embeddings, seed=0)
    table = route.table.set_index("method")
    assert embeddings.shape == (1297, 16) and table.loc["sele", "features"] == "embeddings"
    assert (
        table.loc["sele", "aurc"] < table.loc["sele", "risk_full"]
    )  # better than a random ordering

    # the command line on the same file: the same SELE, decided row by row on the network's predictions
    sel = tmp_path / "sel"
    assert (
        cli.main(
            [
                "select",
                "--data",
                str(tmp_path / "net.npz"),
                "--target",
                "coverage=0.8",
                "--score",
                "sele",
                "--out",
                str(sel),
                "-q",
            ]
        )
        == 0
    )
    model = json.loads((sel / "model.json").read_text())
    assert model["feature_columns"] == [f"emb_{j}" for j in range(16)]
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(sel / "model.json"),
                "--data",
                str(tmp_path / "net.npz"),
                "--out",
                str(tmp_path / "d.csv"),
                "-q",
            ]
        )
        == 0
    )
    decisions = pd.read_csv(tmp_path / "d.csv", dtype={"uncertainty": str})
    np.testing.assert_array_equal(
        decisions["uncertainty"].map(float).to_numpy(), route.uncertainty["sele"]
    )
    np.testing.assert_array_equal(decisions["y_pred"].to_numpy(), logits_t.argmax(dim=1).numpy())
    _, risk = rc_curve(
        route.loss[route.parts["report"]], route.uncertainty["sele"][route.parts["report"]]
    )
    assert risk.mean() == table.loc["sele", "aurc"]


def test_torch_marker_is_registered_and_torch_is_optional():
    """torch is in the `deep` extra only, never a core dependency, and the marker is declared."""
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    core = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    assert "torch" not in core
    assert '\ndeep = ["torch>=2.2"]\n' in text
    assert '\n    "torch: ' in text.split("markers = [", 1)[1].split("]", 1)[0]


class _MarkedItem:
    """The part of a pytest item that the conftest hook reads: its markers."""

    def __init__(self, marker):
        self.marker = marker

    def get_closest_marker(self, name):
        return object() if name == self.marker else None


_find_spec = importlib.util.find_spec


def _no_torch(name, package=None):
    if name == "torch":
        raise ModuleNotFoundError("torch is hidden by this test")
    return _find_spec(name, package)


def test_torch_tests_fail_on_ci_without_torch_and_skip_elsewhere(monkeypatch):
    """tests/conftest.py's hook: without torch a `torch` test is skipped, with CI=true it fails.

    Never a silent skip on CI."""
    monkeypatch.setattr(support.importlib.util, "find_spec", _no_torch)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="torch is not installed but CI=true"):
        support.skip_or_fail_without_torch(_MarkedItem("torch"))
    support.skip_or_fail_without_torch(_MarkedItem("slurm"))  # other tests are left alone
    monkeypatch.delenv("CI")
    with pytest.raises(
        pytest.skip.Exception, match=r"needs torch: pip install 'rejectopt\[deep\]'"
    ):
        support.skip_or_fail_without_torch(_MarkedItem("torch"))


# --------------------------------------------------------------------------------------------
# Post-hoc scores tuned on held-out rows: MaxLogit-pNorm, MSP-pNorm, temperature scaling
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0, 1, 2, 3, 8, np.inf])
def test_pnorm_scores_equal_their_definition(net, p):
    Z = net["logits"]
    z = Z - Z.mean(axis=1, keepdims=True)
    norm = np.ones(len(z)) if p == 0 else np.linalg.norm(z, ord=p, axis=1)
    unit = z / norm[:, None]
    np.testing.assert_allclose(maxlogit_pnorm(Z, p), -unit.max(axis=1), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        msp_pnorm(Z, p, 0.3),
        1 - special.softmax(unit / 0.3, axis=1).max(axis=1),
        rtol=1e-12,
        atol=1e-15,
    )
    # scale-free for p >= 1, and |z|^p cannot overflow: logits of 1e100 give the same score
    if p:
        np.testing.assert_allclose(maxlogit_pnorm(Z * 1e100, p), maxlogit_pnorm(Z, p), rtol=1e-12)


def test_msp_pnorm_without_normalisation_is_temperature_scaled_msp(net):
    np.testing.assert_allclose(
        msp_pnorm(net["logits"], 0, 2.5), msp(net["logits"] / 2.5), rtol=0, atol=1e-15
    )
    with pytest.raises(
        ValueError,
        match=r"^msp_pnorm: p must be 0 \(no normalisation\), a number >= 1 or inf \(the max "
        r"norm\), got 0.5$",
    ):
        msp_pnorm(net["logits"], 0.5)


def test_fit_pnorm_is_the_grid_point_of_least_aurc(net):
    Z, y = net["logits"][:600], net["labels"][:600]
    loss = 100.0 * (Z.argmax(axis=1) != y)
    z = Z - Z.mean(axis=1, keepdims=True)
    grid = {
        p: aurc(loss, -(z / (np.linalg.norm(z, ord=p, axis=1)[:, None] if p else 1)).max(axis=1))
        for p in range(9)
    }
    best = fit_pnorm(Z, y)
    assert best["p"] == min(grid, key=lambda p: (grid[p], p)) and best["aurc"] == pytest.approx(
        grid[best["p"]], abs=1e-12
    )
    assert best["temperature"] is None
    msp_best = fit_pnorm(Z, y, "msp", p_grid=(0, 2), temperature_grid=(0.5, 1.0))
    values = {}
    for p in (0, 2):
        norm = np.linalg.norm(z, ord=p, axis=1) if p else np.ones(len(z))
        for t in (0.5, 1.0):
            T = t / norm.mean()
            values[(p, T)] = aurc(
                loss, 1 - special.softmax(z / norm[:, None] / T, axis=1).max(axis=1)
            )
    p, T = min(values, key=values.get)
    assert (msp_best["p"], msp_best["temperature"]) == (p, pytest.approx(T, rel=1e-12))


def test_fit_temperature_zeroes_the_nll_gradient_and_recovers_a_known_temperature():
    """Labels drawn from softmax(f / 2): the NLL's minimiser is near 2 and its derivative in 1/T vanishes there."""
    from scipy.optimize import brentq

    rng = np.random.default_rng(1)
    Z = rng.normal(size=(20_000, 5)) * 3
    u = rng.random(20_000)[:, None]
    y = (u > np.cumsum(special.softmax(Z / 2.0, axis=1), axis=1)).sum(axis=1)
    T = fit_temperature(Z, y)

    def gradient(beta):  # d NLL / d beta, beta = 1/T: E_p[f] - f_y
        return float(
            np.mean((special.softmax(beta * Z, axis=1) * Z).sum(axis=1) - Z[np.arange(len(y)), y])
        )

    assert T == pytest.approx(1.0 / brentq(gradient, 0.05, 5.0, xtol=1e-14), rel=1e-6)
    assert abs(T - 2.0) < 0.1  # sampling error of T-hat at n = 20,000 is about 0.02
    with pytest.raises(ValueError, match=r"fit_temperature: the NLL is least at the bound"):
        fit_temperature(
            [[5.0, 0.0], [0.0, 5.0]] * 10, [0, 1] * 10
        )  # separable: NLL falls as T -> 0


def test_route_reports_post_hoc_scores_tuned_on_the_training_rows(net, route):
    table = route.table.set_index("method")
    tune = np.concatenate([route.parts["fit"], route.parts["validation"]])
    best = fit_pnorm(net["logits"][tune], net["labels"][tune])
    np.testing.assert_array_equal(
        route.uncertainty["maxlogit_pnorm"], maxlogit_pnorm(net["logits"], best["p"])
    )
    T = fit_temperature(net["logits"][tune], net["labels"][tune])
    np.testing.assert_array_equal(route.uncertainty["msp_ts"], msp_pnorm(net["logits"], 0, T))
    assert table.loc["msp_ts", "kind"] == "post-hoc" and table.loc[
        "maxlogit_pnorm", "label"
    ].endswith(f"(p={best['p']:g})")


# --------------------------------------------------------------------------------------------
# Class-shared scores in the route; hostile inputs of the baselines
# --------------------------------------------------------------------------------------------
def test_class_shared_scores_read_the_logits_whatever_the_feature_source(net):
    y_pred = net["logits"].argmax(axis=1)
    loss = 100.0 * (y_pred != net["labels"])
    route = fit_logits(
        net["logits"],
        net["labels"],
        net["embeddings"],
        scores="sele_shared",
        baselines=(),
        post_hoc=(),
        C_grid=(1.0, 10.0),
        seed=3,
    )
    direct = fit_selective(
        net["logits"],
        y_pred,
        loss,
        Target("coverage", 0.8),
        split_rows(len(loss), seed=3),
        score="sele_shared",
        n_classes=10,
        C_grid=(1.0, 10.0),
        seed=3,
    )
    np.testing.assert_array_equal(route.uncertainty["sele_shared"], direct.uncertainty)
    assert route.table["features"].tolist() == ["logits"] and route.scores[
        "sele_shared"
    ].coef_.shape == (10, 20)


def test_extreme_logits_give_a_finite_entropy_without_warnings():
    import warnings

    row = [[1e308, -1e308, 0.0, 5.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not even a RuntimeWarning
        assert entropy(row).tolist() == [0.0] and msp(row).tolist() == [0.0]
        assert softmax(row).tolist() == [[1.0, 0.0, 0.0, 0.0]] and doctor(row).tolist() == [0.0]
        check_network_outputs(row)


def test_energy_refuses_temperatures_that_overflow_naming_them():
    with pytest.raises(
        ValueError,
        match=r"energy: logits / temperature overflows at index 1 \(largest \|logit\| 3, "
        r"temperature 1e-310; 1 row\(s\) in all\)",
    ):
        energy([[0.0, 0.0], [3.0, -1.0]], temperature=1e-310)
    with pytest.raises(
        ValueError, match=r"energy: logits / temperature overflows at index 0 .* temperature 0.5"
    ):
        energy([[1e308, 0.0]], temperature=0.5)
    with pytest.raises(
        TypeError, match=r"^energy: temperature must be a finite number > 0, got '1'$"
    ):
        energy([[0.0, 1.0]], temperature="1")
    assert energy([[1e308, 0.0]], temperature=1.0).tolist() == [
        -1e308
    ]  # stable: the largest logit factored out


@pytest.mark.parametrize(
    "function",
    [
        softmax,
        predictions,
        msp,
        entropy,
        doctor,
        margin,
        max_logit,
        energy,
        maxlogit_pnorm,
        msp_pnorm,
    ],
)
def test_baselines_name_themselves_and_the_row_of_a_bad_logit(function):
    name = function.__name__
    with pytest.raises(
        NetworkOutputError,
        match=rf"^{name}: logits: non-finite value nan \(1 in all\) at index 1, "
        r"column 0$",
    ):
        function([[0.0, 1.0], [np.nan, 2.0]])
    with pytest.raises(
        NetworkOutputError,
        match=rf"^{name}: logits: must be 2-D \(n x K\), got shape \(3,\); one "
        r"row of 3 logits is a 2-D array of one row",
    ):
        function([0.0, 1.0, 2.0])


def test_label_that_is_almost_a_class_is_reported_in_full():
    with pytest.raises(
        NetworkOutputError,
        match=r"^labels: label 3.0000000001 is not a class of the 4 logits "
        r"\(0..3; a class is a whole number\) at index 1$",
    ):
        check_network_outputs(np.zeros((2, 4)), [1, 3.0000000001])


def test_route_applies_the_feature_bound_of_the_command_line(net):
    embeddings = net["embeddings"].copy()
    embeddings[17, 4] = 1e200  # standardising it overflows: every learned score would be constant
    with pytest.raises(
        NetworkOutputError,
        match=r"^embeddings: value 1e\+200 is beyond \+-1e\+150, the bound of a "
        r"feature .* at index 17, column 4$",
    ):
        fit_logits(net["logits"], net["labels"], embeddings, scores="reg")


def test_class_shared_score_through_select_and_apply_on_logits(net, tmp_path):
    """``select --score sele_shared`` on logits writes a model.json that ``apply`` reads back.

    It gives the same uncertainties."""
    npz = tmp_path / "logits_only.npz"
    np.savez(npz, logits=net["logits"], labels=net["labels"])
    assert (
        cli.main(
            [
                "select",
                "--data",
                str(npz),
                "--target",
                "coverage=0.8",
                "--score",
                "reg_shared",
                "--seed",
                "3",
                "--out",
                str(tmp_path / "sel"),
                "-q",
            ]
        )
        == 0
    )
    assert (
        cli.main(
            [
                "apply",
                "--model",
                str(tmp_path / "sel" / "model.json"),
                "--data",
                str(npz),
                "--out",
                str(tmp_path / "decisions.csv"),
                "-q",
            ]
        )
        == 0
    )
    decisions = pd.read_csv(tmp_path / "decisions.csv")
    route = fit_logits(
        net["logits"], net["labels"], scores="reg_shared", baselines=(), post_hoc=(), seed=3
    )
    np.testing.assert_allclose(
        decisions["uncertainty"], route.uncertainty["reg_shared"], rtol=1e-12, atol=1e-12
    )
    model = json.loads((tmp_path / "sel" / "model.json").read_text())
    assert model["score"]["kind"] == "reg_shared" and len(model["score"]["mean"]) == 20


# --------------------------------------------------------------------------------------------
# Row blocks: the baselines read the logits in blocks of BLOCK_ROWS rows, with the same result
# --------------------------------------------------------------------------------------------
def _unblocked_baselines(logits):
    """The baselines' formulas over all rows at once (the computation before row blocks)."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    p = np.exp(log_p)
    top = logits.max(axis=1)
    sorted_p = np.sort(p, axis=1)
    return {
        "mcp": 1.0 - p.max(axis=1),
        "entropy": -(p * np.where(log_p > -np.inf, log_p, 0.0)).sum(axis=1),
        "energy": -(top + np.log(np.exp(logits - top[:, None]).sum(axis=1))),
        "doctor": 1.0 - (p * p).sum(axis=1),
        "max_logit": -top,
        "margin": -(sorted_p[:, -1] - sorted_p[:, -2]),
        "softmax": p,
    }


@pytest.mark.parametrize("K", [400, 1000, 3000])
def test_baselines_in_row_blocks_equal_the_unblocked_formulas(K):
    from rejectopt.scores._shared import block_rows

    BLOCK_ROWS = block_rows(K)
    rng = np.random.default_rng(K)
    n = 2 * BLOCK_ROWS + 3  # two whole blocks and a short one
    logits = rng.normal(size=(n, K)) * 4
    logits[BLOCK_ROWS - 1 : BLOCK_ROWS + 1] = 1.5  # ties across a block boundary
    logits[5, 0], logits[2 * BLOCK_ROWS, -1] = 700.0, -700.0  # softmax underflows to 0 at both ends
    expected = _unblocked_baselines(logits)
    got = {**baseline_uncertainties(logits), "softmax": softmax(logits)}
    for name, values in expected.items():
        np.testing.assert_array_equal(got[name], values, err_msg=name)


def test_a_non_finite_logit_in_a_later_block_is_named_by_its_row_and_count():
    from rejectopt.scores._shared import block_rows

    BLOCK_ROWS = block_rows(3)
    logits = np.zeros((BLOCK_ROWS + 10, 3))
    logits[BLOCK_ROWS + 4, 2], logits[BLOCK_ROWS + 7, 0] = np.inf, np.nan
    with pytest.raises(
        NetworkOutputError, match=rf"non-finite value inf \(2 in all\).*index {BLOCK_ROWS + 4}"
    ):
        msp(logits)


def test_float64_logits_are_validated_without_a_copy():
    logits = np.random.default_rng(0).normal(size=(50, 4))
    assert (
        check_network_outputs(logits)[0] is logits
    )  # n x K outputs of gigabytes are not duplicated


def test_energy_in_blocks_names_the_first_overflowing_row_of_any_block():
    from rejectopt.scores._shared import block_rows

    BLOCK_ROWS = block_rows(2)
    logits = np.zeros((BLOCK_ROWS + 5, 2))
    logits[BLOCK_ROWS + 2, 1] = 1e308
    with pytest.raises(
        ValueError, match=rf"overflows at index {BLOCK_ROWS + 2} .*1 row\(s\) in all"
    ):
        energy(logits, temperature=0.5)
