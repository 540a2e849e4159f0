"""The open method layer: a user's score (plugin) and dataset (custom_datasets) run through the
pipeline like the paper's; bad plugins and bad files are refused before any job, naming the culprit."""

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_wine
from support import DEMO_MIRROR, snakemake

from rejectopt.datasets import load_prepared, prepare_dataset
from rejectopt.pipeline.config import (
    ConfigError,
    PluginError,
    coerce_numbers,
    load_plugins,
    plan_run,
)
from rejectopt.pipeline.experiments.paper import (
    SCORE_ERROR,
    run_classifiers,
    run_scores,
    score_key,
    tst_outcomes,
)
from rejectopt.scores import SCORES, ScoreError, get_score, make_score, register_score, score_names
from rejectopt.splits import make_splits, save_splits

REPO = Path(__file__).resolve().parents[1]

#: A real score of a user's own: the mean loss of the k nearest Trn2 neighbours, k = 1 + round(C).
PLUGIN = textwrap.dedent(
    """
    import numpy as np
    from sklearn.neighbors import KNeighborsRegressor

    import rejectopt


    @rejectopt.scores.register_score("knn_loss")
    class KNNLoss:
        def __init__(self, C=1.0):
            self.C = C

        def fit(self, X, y_pred, loss):
            k = min(1 + int(round(self.C)), len(loss))
            self.model_ = KNeighborsRegressor(n_neighbors=k).fit(np.column_stack([X, y_pred]), loss)
            return self

        def predict(self, X, y_pred):
            return self.model_.predict(np.column_stack([X, y_pred]))
    """
)


def _write_wine_csv(path):
    data = load_wine(as_frame=True)
    frame = data.frame.rename(columns={"target": "cultivar"})
    frame["cultivar"] = frame["cultivar"].map({0: "barolo", 1: "grignolino", 2: "barbera"})
    frame.to_csv(path, index=False)


def _write_cancer_npz(path):
    X, y = load_breast_cancer(return_X_y=True)
    np.savez(path, X=X, y=y)


@pytest.fixture(scope="module")
def plugin_run(tmp_path_factory):
    """A plugin score and two custom datasets (CSV, NPZ) through the whole pipeline, LR only."""
    workdir = tmp_path_factory.mktemp("plugin")
    (workdir / "my_scores.py").write_text(PLUGIN)
    _write_wine_csv(workdir / "wine.csv")
    _write_cancer_npz(workdir / "cancer.npz")
    (workdir / "user.yaml").write_text(
        textwrap.dedent(
            """
        plugins: [my_scores]
        custom_datasets:
          wine: {path: wine.csv, task: classification, target: cultivar}
          cancer: {path: cancer.npz, task: classification}
        datasets: [wine, cancer]
        n_splits: 1
        classifiers: {classification: [lr], ordinal: []}
        scores: {lr: [sele, knn_loss]}
        landmarks: {enabled: false}
        """
        )
    )
    run = snakemake(workdir, "--cores", "2", "--configfile", str(workdir / "user.yaml"))
    assert run.returncode == 0, run.stderr[-5000:]
    return workdir


@pytest.mark.slow
def test_plugin_score_and_custom_datasets_reach_the_table(plugin_run):
    summary = pd.read_csv(plugin_run / "results/summary.csv")
    assert set(summary.dataset) == {"wine", "cancer"}
    assert set(summary.score) == {"mcp", "sele", "knn_loss"}
    knn = summary[summary.score == "knn_loss"]
    assert knn.C_score.isin([0, 1, 10, 100, 1000]).all()  # C chosen from C_score by Val2 AuRC
    assert (knn.aurc >= 0).all() and (knn.aurc <= knn.risk_full + 1e-9).all()
    table = pd.read_csv(plugin_run / "results/tables/table3a.csv")
    assert set(table.dataset) == {"wine", "cancer"} and "knn_loss_mean" in table.columns
    markdown = (plugin_run / "results/tables/table3a.md").read_text()
    header = next(line for line in markdown.splitlines() if line.startswith("| dataset"))
    assert header.split(" | ")[1:4] == ["MCP", "SELE", "knn_loss"]
    rank_row = next(line for line in markdown.splitlines() if line.startswith("| avg. rank"))
    ranks = [float(c) for c in rank_row.strip("| ").split(" | ")[1:4]]
    assert sum(ranks) == pytest.approx(6.0)  # 3 methods: ranks 1..3 on each dataset
    assert "Friedman test p = 0." in markdown or "Friedman test p = 1." in markdown
    assert "Nemenyi CD = " in markdown and "n/a (alpha = 0.05)" not in markdown


@pytest.mark.slow
def test_custom_datasets_are_in_the_environment_not_in_the_paper_comparison(plugin_run):
    from rejectopt.datasets._trust import sha256_of_file

    environment = (plugin_run / "results/tables/environment.md").read_text()
    assert sha256_of_file(plugin_run / "wine.csv") in environment
    assert sha256_of_file(plugin_run / "cancer.npz") in environment
    comparison = pd.read_csv(plugin_run / "results/tables/paper_comparison.csv")
    assert not comparison.dataset.isin(["wine", "cancer"]).any()
    assert comparison.ours_mean.isna().all()  # no paper dataset ran
    X = np.load(plugin_run / "results/data/wine/data.npz")
    assert X["X"].shape == (178, 13) and sorted(set(X["y"].tolist())) == [0, 1, 2]


def _bad_run(tmp_path, files, config):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "user.yaml").write_text(textwrap.dedent(config))
    run = snakemake(tmp_path, "--cores", "1", "--configfile", str(tmp_path / "user.yaml"))
    assert run.returncode != 0
    assert not (tmp_path / "results").exists()  # refused before any job
    return run.stdout + run.stderr


PLUGIN_CONFIG = """
plugins: [{module}]
datasets: [sattelite]
scores: {{lr: [sele]}}
"""


@pytest.mark.parametrize(
    "source, expected",
    [
        (None, "module 'bad_plugin' not found"),
        (
            "import numpy\nraise RuntimeError('no licence server')\n",
            "bad_plugin' failed to import: RuntimeError: no licence server",
        ),
        ("import sys\nsys.exit(0)\n", "bad_plugin' failed to import: SystemExit: 0"),
        (
            "import rejectopt\n@rejectopt.scores.register_score('sele')\nclass Mine:\n"
            "    def __init__(self, C=1.0): pass\n    def fit(self, X, y_pred, loss): return self\n"
            "    def predict(self, X, y_pred): return X[:, 0]\n",
            "score 'sele' is already registered by rejectopt.scores._sele.SELE",
        ),
        (
            "import rejectopt\n@rejectopt.scores.register_score('mine')\nclass Mine:\n"
            "    def __init__(self, C=1.0): pass\n    def fit(self, X, y_pred, loss): return self\n",
            "bad_plugin.Mine: score 'mine' lacks predict",
        ),
    ],
    ids=["missing", "raises", "exits", "name-taken", "no-predict"],
)
@pytest.mark.pipeline
def test_bad_plugin_is_refused_before_any_job(tmp_path, source, expected):
    files = {} if source is None else {"bad_plugin.py": source}
    output = _bad_run(tmp_path, files, PLUGIN_CONFIG.format(module="bad_plugin"))
    assert expected in output
    assert "bad_plugin" in output


DATASET_CONFIG = """
custom_datasets:
  mine: {path: mine.csv, task: classification, target: y}
datasets: [mine]
"""


def _csv(rows):
    return "a,b,y\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n"


GOOD_ROWS = [(i, i % 7, "p" if i % 2 else "q") for i in range(40)]


@pytest.mark.slow
def test_a_bad_custom_cell_fails_its_preparation_job_naming_file_line_and_column(tmp_path):
    """Planning reads no data file: the dry run plans the custom dataset, and its preparation job
    refuses the overflowing cell (rejectopt.datasets._custom.prepare_custom; every bad-cell case is in
    test_datasets), names it in the job's log and writes no data.npz."""
    rows = GOOD_ROWS[:4] + [(4, "1e300", "q")] + GOOD_ROWS[5:]
    (tmp_path / "mine.csv").write_text(_csv(rows))
    (tmp_path / "user.yaml").write_text(textwrap.dedent(DATASET_CONFIG))
    run = snakemake(
        tmp_path,
        "results/data/mine/data.npz",
        "--cores",
        "1",
        "--configfile",
        str(tmp_path / "user.yaml"),
    )
    assert run.returncode != 0
    expected = (
        "CustomDatasetError: mine.csv line 6, column 'b': 1e300 lies beyond +-1e+150, the bound "
        "on feature values"
    )
    assert expected in (tmp_path / "logs/prepare_dataset/mine.log").read_text()
    assert "Error in rule prepare_dataset" in run.stdout + run.stderr
    assert not (tmp_path / "results/data/mine/data.npz").exists()


# --- the registry and the config checks, without Snakemake --------------------------------------


def test_every_built_in_method_is_registered_once_with_a_label():
    assert score_names(learned=True) == ["reg", "tcp", "sele", "reg_shared", "sele_shared"]
    assert set(score_names(learned=False)) == {"mcp", "margin", "face_score"}
    assert [get_score(n).label for n in ("sele", "reg", "tcp", "mcp", "margin")] == [
        "SELE",
        "REG",
        "TCP",
        "MCP",
        "Margin",
    ]
    assert get_score("tcp").needs_posteriors and not get_score("sele").needs_posteriors


def test_reading_the_registries_imports_no_scikit_learn():
    """A table, summary or figure job reads the registries only; scikit-learn and
    scipy.stats (most of a job's start-up, rejectopt.pipeline.resources.JOB_STARTUP_CPU_S) load with the
    first registered class used."""
    code = textwrap.dedent(
        """
        import sys
        import rejectopt.pipeline.config, rejectopt.pipeline.experiments
        import rejectopt.pipeline.experiments.paper, rejectopt.pipeline.report
        from rejectopt.classifiers import CLASSIFIERS
        from rejectopt.scores import SCORES
        from rejectopt.pipeline.tables import table_specs
        specs = table_specs({"lr": ["sele", "tcp"], "svm": ["reg"], "svor": ["sele"], "xgb": ["tcp"]})
        labels = [info.label for info in [*CLASSIFIERS.values(), *SCORES.values()]]
        print(sorted(m for m in sys.modules if m.split(".")[0] == "sklearn" or m == "scipy.stats._stats_py"))
        SCORES.get("sele").cls
        print("sklearn" in sys.modules)
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split("\n")[:2] == ["[]", "True"], run.stdout


def test_a_class_registered_by_path_is_checked_when_first_used():
    from rejectopt._registry import RegistryError
    from rejectopt.classifiers import CLASSIFIERS, register_classifier

    register_score("test_by_path")(
        "rejectopt.scores._baselines:MCP"
    )  # a baseline, registered as learned
    register_score("test_bad_path")("rejectopt.scores._baselines:NoSuchScore")
    register_classifier("test_no_train", task="classification", baseline="mcp", posteriors=True)(
        "rejectopt.scores._ridge:REG"
    )
    try:
        assert SCORES.origin("test_by_path") == "rejectopt.scores._baselines.MCP"
        with pytest.raises(
            RegistryError,
            match=r"rejectopt.scores._baselines.MCP: score 'test_by_path' lacks fit, "
            r"predict \(see rejectopt.scores.register_score\)",
        ):
            _ = get_score("test_by_path").cls
        with pytest.raises(
            RegistryError,
            match="cannot load the registered class 'rejectopt.scores._baselines:"
            "NoSuchScore': AttributeError",
        ):
            _ = get_score("test_bad_path").cls
        with pytest.raises(RegistryError, match="classifier 'test_no_train' lacks train, outputs"):
            _ = CLASSIFIERS.get("test_no_train").cls
        assert (
            get_score("sele").cls.__name__ == "SELE"
            and get_score("sele").cls is get_score("sele").cls
        )
    finally:
        SCORES.remove("test_by_path")
        SCORES.remove("test_bad_path")
        CLASSIFIERS.remove("test_no_train")


def test_make_score_passes_only_the_keywords_a_score_accepts():
    sele = make_score("sele", 10.0, n_classes=3, chunk_size=100, random_state=7)
    assert (sele.C, sele.n_classes, sele.chunk_size, sele.random_state) == (10.0, 3, 100, 7)
    reg = make_score("reg", 1.0, n_classes=3, chunk_size=100, random_state=7)  # REG takes no seed
    assert (reg.C, reg.n_classes) == (1.0, 3)


def test_a_plain_class_gets_the_C_grid_through_select_C():
    from rejectopt.scores import select_C

    @register_score("test_abs_first_feature")
    class AbsFirst:
        def __init__(self, C=1.0):
            self.C = C

        def fit(self, X, y_pred, loss):
            self.shift_ = float(self.C)
            return self

        def predict(self, X, y_pred):
            return np.abs(X[:, 0] - self.shift_)

    try:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(200, 2))
        loss = (np.abs(X[:, 0] - 1.0) > 1.0).astype(float)  # errors far from x0 = 1
        best, val = select_C(AbsFirst(), X, None, loss, X, None, loss, C_grid=(0, 1, 10))
        assert best.C == 1 and val[1] < min(val[0], val[10])  # |x0 - 1| orders the errors last
    finally:
        SCORES.remove("test_abs_first_feature")


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"scores": {"svm": ["tcp"]}},
            "score 'tcp' learns from class posteriors, which classifier 'svm' does not give",
        ),
        ({"scores": {"lr": ["sel"]}}, "unknown score 'sel': did you mean 'sele'?"),
        ({"scores": {"lr": ["mcp"]}}, "'mcp' is a baseline"),
        (
            {"classifiers": {"classification": ["svor"]}},
            "classifier 'svor' is for the ordinal task",
        ),
        ({"datasets": ["letterr"]}, "unknown dataset 'letterr' (did you mean 'letter'?)"),
        (
            {"custom_datasets": {"letter": {"path": "x.csv"}}},
            "'letter' is one of the paper's datasets",
        ),
    ],
)
def test_plan_run_names_the_bad_entry(change, message):
    import yaml

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config.update(change)
    with pytest.raises(ConfigError) as err:
        plan_run(config)
    assert message in str(err.value)


def test_numbers_given_as_text_become_numbers():
    assert coerce_numbers(
        {"C_classifier": ["1", "10", "-1", "0.5", "1e3"], "datasets": ["letter"]}
    ) == {
        "C_classifier": [1, 10, -1, 0.5, 1000.0],
        "datasets": ["letter"],
    }
    assert coerce_numbers(
        {"landmarks": {"enabled": "false", "max_faces": "40"}, "raw_dir": "10"}
    ) == {
        "landmarks": {"enabled": False, "max_faces": 40},
        "raw_dir": "10",
    }
    assert coerce_numbers({"custom_datasets": {"d": {"path": "1.csv", "target": "0"}}}) == {
        "custom_datasets": {"d": {"path": "1.csv", "target": "0"}},
    }


def test_load_plugins_refuses_a_non_module_name(tmp_path):
    with pytest.raises(PluginError, match="'my-scores' is not a module name"):
        load_plugins(["my-scores"], search_dir=tmp_path)


# --- a plugin that fails inside a job fails alone, named, and is never silently dropped -----------

#: A user's score that leaves the process (``sys.exit(0)``) when asked for its uncertainty.
EXITING_PLUGIN = textwrap.dedent(
    """
    import sys

    import numpy as np

    import rejectopt


    @rejectopt.scores.register_score("test_exiting")
    class Exiting:
        def __init__(self, C=1.0):
            self.C = C

        def fit(self, X, y_pred, loss):
            self.mean_ = float(np.mean(loss))
            return self

        def predict(self, X, y_pred):
            sys.exit(0)
    """
)


def test_a_failing_plugin_keeps_the_other_scores_of_its_job_and_is_named_when_read(tmp_path):
    prepare_dataset("sattelite", tmp_path / "raw", tmp_path / "data.npz", mirror=DEMO_MIRROR)
    _, y = load_prepared(tmp_path / "data.npz")
    save_splits(tmp_path / "splits.npz", make_splits(y, n_splits=1, seed=0, dataset="sattelite"))
    run_classifiers(
        tmp_path / "data.npz",
        tmp_path / "splits.npz",
        {0: tmp_path / "lr_0.npz"},
        "lr",
        [1.0],
        0,
        dataset="sattelite",
    )
    plugin = tmp_path / "exiting_scores.py"
    plugin.write_text(EXITING_PLUGIN)
    spec = importlib.util.spec_from_file_location("exiting_scores", plugin)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    common = {
        "task": "classification",
        "C_grid": [1.0],
        "seed": 0,
        "dataset": "sattelite",
        "classifier": "lr",
    }
    try:
        chosen = run_scores(
            tmp_path / "data.npz",
            tmp_path / "splits.npz",
            {0: tmp_path / "lr_0.npz"},
            scores=["test_exiting", "sele"],
            out_path=tmp_path / "both.npz",
            **common,
        )
        run_scores(
            tmp_path / "data.npz",
            tmp_path / "splits.npz",
            {0: tmp_path / "lr_0.npz"},
            scores=["sele"],
            out_path=tmp_path / "sele.npz",
            **common,
        )
    finally:
        SCORES.remove("test_exiting")
    expected = (
        f"sattelite lr split 0: score 'test_exiting' (class exiting_scores.Exiting in {plugin}) failed in "
        "predict: SystemExit(0)"
    )
    assert chosen[("test_exiting", 0)] == {"error": expected}
    with np.load(tmp_path / "both.npz") as both, np.load(tmp_path / "sele.npz") as alone:
        assert str(both[score_key("test_exiting", 0, SCORE_ERROR)]) == expected
        for field in (
            "uncertainty",
            "C",
            "C_grid",
            "val_aurc",
        ):  # SELE's results, as if learned alone
            np.testing.assert_array_equal(
                both[score_key("sele", 0, field)], alone[score_key("sele", 0, field)]
            )
    with pytest.raises(
        ScoreError,
        match=f"{tmp_path / 'both.npz'}: score 'test_exiting' failed when it was learned, "
        "so it has no results: sattelite lr split 0: score 'test_exiting' "
        r"\(class exiting_scores.Exiting in .*exiting_scores.py\) failed in predict",
    ):
        tst_outcomes(
            "classification",
            tmp_path / "data.npz",
            tmp_path / "splits.npz",
            {("lr", 0): tmp_path / "lr_0.npz"},
            {
                ("lr", "sele", 0): tmp_path / "both.npz",
                ("lr", "test_exiting", 0): tmp_path / "both.npz",
            },
        )
