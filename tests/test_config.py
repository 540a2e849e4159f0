"""Tests of rejectopt.pipeline.config: the run environment (the pinned OpenBLAS kernels), the plugins, and
the run's plan (what it tracks, what it refuses before any job, what it does not read)."""

import os
import platform
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from sklearn.datasets import load_wine
from support import DEMO_MIRROR, snakemake

from rejectopt.pipeline.config import (
    BLAS_CORETYPE,
    C_MAX,
    ConfigError,
    PluginError,
    blas_environment,
    blas_kernels_run,
    load_plugins,
    plan_run,
    validate_config,
)
from rejectopt.scores import SCORES

AVX2 = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n"
NO_AVX2 = "processor\t: 0\nflags\t\t: fpu sse2 avx\n"


@pytest.fixture
def x86(monkeypatch):
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")


def test_avx2_cpu_gets_the_haswell_kernels(x86, tmp_path):
    (tmp_path / "cpuinfo").write_text(AVX2)
    assert (
        blas_environment({}, tmp_path / "cpuinfo", probe=False)
        == {"OPENBLAS_CORETYPE": BLAS_CORETYPE}
        == {"OPENBLAS_CORETYPE": "Haswell"}
    )


def test_kernels_that_crash_are_not_pinned_and_the_run_is_told(x86, tmp_path, monkeypatch, caplog):
    """A probe that dies as a crashing kernel would (SIGABRT here) leaves the kernels unpinned, with a
    warning that names the consequence and the lock."""
    (tmp_path / "cpuinfo").write_text(AVX2)
    monkeypatch.setattr("rejectopt.pipeline.config._KERNEL_PROBE", "import os; os.abort()")
    with caplog.at_level("WARNING", logger="rejectopt"):
        assert blas_environment({}, tmp_path / "cpuinfo") == {}
    assert "numpy's OpenBLAS crashes with the Haswell kernels on this CPU" in caplog.text
    assert "requirements/pipeline.txt" in caplog.text
    monkeypatch.setattr(
        "rejectopt.pipeline.config._KERNEL_PROBE",
        "import os; assert os.environ['OPENBLAS_CORETYPE'] "
        "== 'Haswell' and os.environ['OPENBLAS_NUM_THREADS'] == '1'",
    )
    assert blas_environment({}, tmp_path / "cpuinfo") == {"OPENBLAS_CORETYPE": "Haswell"}


def test_the_pinned_kernels_run_the_jobs_product_with_these_releases():
    """numpy's own OpenBLAS runs the product the jobs make with the kernels the workflow pins. It fails
    with a release whose AVX2 kernels crash on this CPU (numpy 2.5.5's OpenBLAS 0.3.34 on an AVX-512
    CPU): the workflow then runs unpinned, and the newest-releases CI stage shows it."""
    cpuinfo = Path("/proc/cpuinfo")
    avx2 = cpuinfo.is_file() and "avx2" in cpuinfo.read_text().split()
    if avx2 and platform.machine().lower() in ("x86_64", "amd64"):
        assert blas_kernels_run(BLAS_CORETYPE)
    else:  # nothing to pin on this machine, and nothing is
        assert blas_environment({}) == {}


def test_nothing_is_pinned_without_avx2_or_cpuinfo_or_on_another_architecture(
    x86, tmp_path, monkeypatch
):
    (tmp_path / "cpuinfo").write_text(NO_AVX2)
    assert blas_environment({}, tmp_path / "cpuinfo") == {}
    assert blas_environment({}, tmp_path / "absent") == {}
    (tmp_path / "avx2").write_text(AVX2.replace("avx2", "avx2x"))  # a word, not a substring
    assert blas_environment({}, tmp_path / "avx2") == {}
    (tmp_path / "cpuinfo").write_text(AVX2)
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    assert blas_environment({}, tmp_path / "cpuinfo") == {}


def test_the_users_value_wins(x86, tmp_path):
    (tmp_path / "cpuinfo").write_text(AVX2)
    assert blas_environment({"OPENBLAS_CORETYPE": "SkylakeX"}, tmp_path / "cpuinfo") == {}


# --- the run's plan: tracked plugin files, checks before any job, no data file parsed ----------

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())

#: A user's score: the mean Trn2 loss of the k = 1 + round(C) nearest neighbours.
KNN_PLUGIN = textwrap.dedent(
    """
    import numpy as np
    from sklearn.neighbors import KNeighborsRegressor

    import rejectopt


    @rejectopt.scores.register_score("test_cfg_knn")
    class KNNLoss:
        def __init__(self, C=1.0):
            self.C = C

        def fit(self, X, y_pred, loss):
            k = min(1 + int(round(self.C)), len(loss))
            self.model_ = KNeighborsRegressor(n_neighbors=k).fit(X, loss)
            return self

        def predict(self, X, y_pred):
            return self.model_.predict(X)
    """
)


def _default_config(**change):
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config.update(change)
    return config


def _planned_jobs(run) -> dict:
    """``rule -> count`` of a ``--quiet rules`` dry run."""
    lines = (run.stdout + run.stderr).splitlines()
    return {
        line.split()[0]: int(line.split()[1])
        for line in lines
        if len(line.split()) == 2 and line.split()[1].isdigit() and line.split()[0] != "total"
    }


@pytest.mark.pipeline
def test_an_edited_plugin_or_custom_file_reruns_what_depends_on_it(tmp_path):
    """Real dry runs after the outputs are up to date: the plugin's file is an input of the score
    job that learns its score (only that job reruns), the custom CSV an input of the preparation
    (all rerun)."""
    (tmp_path / "cfg_scores.py").write_text(KNN_PLUGIN)
    frame = load_wine(as_frame=True).frame
    frame.to_csv(tmp_path / "wine.csv", index=False)
    (tmp_path / "user.yaml").write_text(
        textwrap.dedent(
            """
        plugins: [cfg_scores]
        custom_datasets:
          wine: {path: wine.csv, target: target}
        datasets: [wine]
        n_splits: 1
        classifiers: {classification: [lr]}
        C_classifier: [1]
        C_score: [1]
        scores: {lr: [test_cfg_knn]}
        landmarks: {enabled: false}
        ood: {datasets: []}
        double_hinge: {datasets: []}
        """
        )
    )
    target, config = "results/scores/wine/lr.npz", ("--configfile", str(tmp_path / "user.yaml"))
    # the outputs made up to date without running the jobs (their content is not what is tested)
    outputs = [
        "data/wine/data.npz",
        "data/wine/splits.npz",
        "classifiers/wine/lr/split_0.npz",
        "scores/wine/lr.npz",
    ]
    for name in outputs:
        (tmp_path / "results" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "results" / name).touch()
    run = snakemake(tmp_path, target, "--touch", "--cores", "1", *config)
    assert run.returncode == 0, run.stderr[-3000:]
    scores = tmp_path / target
    dry = snakemake(tmp_path, target, "-n", *config, "--quiet", "rules")
    assert dry.returncode == 0 and _planned_jobs(dry) == {}, dry.stderr[-3000:]

    plugin = tmp_path / "cfg_scores.py"
    plugin.write_text(
        KNN_PLUGIN.replace("k = min(1 + int(round(self.C))", "k = min(2 + int(round(self.C))")
    )
    later = scores.stat().st_mtime + 5
    os.utime(plugin, (later, later))
    dry = snakemake(tmp_path, target, "-n", *config, "--quiet", "rules")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert _planned_jobs(dry) == {"learn_score": 1}

    os.utime(tmp_path / "wine.csv", (later + 5, later + 5))
    dry = snakemake(tmp_path, target, "-n", *config, "--quiet", "rules")
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = _planned_jobs(dry)
    training = [rule for rule in jobs if rule.startswith("train_classifier")]
    assert len(training) == 1 and jobs[training[0]] == 1, dry.stdout + dry.stderr
    assert {r: n for r, n in jobs.items() if r not in training} == {
        "prepare_dataset": 1,
        "make_splits": 1,
        "learn_score": 1,
    }


def test_plan_names_the_plugin_file_of_each_classifiers_scores(tmp_path):
    (tmp_path / "cfg_plan_scores.py").write_text(
        KNN_PLUGIN.replace("test_cfg_knn", "test_cfg_plan_knn")
    )
    try:
        load_plugins(["cfg_plan_scores"], search_dir=tmp_path)
        plan = plan_run(
            _default_config(
                datasets=["letter"], scores={"lr": ["sele", "test_cfg_plan_knn"], "svm": ["reg"]}
            )
        )
        assert plan.code_files_of("lr") == [str((tmp_path / "cfg_plan_scores.py").resolve())]
        assert plan.code_files_of("svm") == [] and plan.code_files_of("xgb") == []
    finally:
        SCORES.remove("test_cfg_plan_knn")
        sys.modules.pop("cfg_plan_scores", None)


@pytest.mark.pipeline
def test_a_stray_sklearn_py_in_the_working_directory_changes_nothing(tmp_path):
    """The working directory is never put on sys.path: its sklearn.py is not imported, the plan holds."""
    (tmp_path / "sklearn.py").write_text("raise ImportError('the stray sklearn.py was imported')\n")
    (tmp_path / "cfg_stray.py").write_text("VALUE = 1\n")
    (tmp_path / "user.yaml").write_text("plugins: [cfg_stray]\ndatasets: [shuttle]\nn_splits: 1\n")
    run = snakemake(
        tmp_path, "-n", "--quiet", "rules", "--configfile", str(tmp_path / "user.yaml"), timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "stray sklearn.py" not in run.stdout + run.stderr
    jobs = _planned_jobs(run)
    assert jobs["prepare_dataset"] == 1 and jobs["learn_score"] == 3  # shuttle; lr, svm, xgb


def test_a_plugin_named_like_an_installed_module_is_refused(tmp_path):
    (tmp_path / "sklearn.py").write_text("VALUE = 1\n")
    with pytest.raises(PluginError) as err:
        load_plugins(["sklearn"], search_dir=tmp_path)
    assert f"{tmp_path / 'sklearn.py'} has the name of the installed module 'sklearn'" in str(
        err.value
    )
    assert "config plugins: module 'sklearn'" in str(err.value) and "rename the file" in str(
        err.value
    )
    import sklearn

    assert sklearn.__file__ != str(tmp_path / "sklearn.py")


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"C_classifier": [0]},
            "config C_classifier[0]: C = 0 is invalid; every C must be a finite number in (0, 1e+06]",
        ),
        (
            {"C_classifier": [1, 1e308]},
            (
                "config C_classifier[1]: C = 1e+308 is invalid; every C must be a finite number "
                "in (0, 1e+06]"
            ),
        ),
        (
            {"C_score": [0, float("nan")]},
            (
                "config C_score[1]: C = nan is invalid; every C must be a finite number in "
                "[0, 1e+06] (0 = unregularised)"
            ),
        ),
        (
            {"double_hinge": {"C_grid": [float("inf")]}},
            "config double_hinge.C_grid[0]: C = inf is invalid",
        ),
        (
            {"classifiers": {"classification": [], "ordinal": ["svor"]}},
            (
                "config classifiers.classification: no classifier, but the run's datasets letter are classification "
                "datasets; list at least one (lr, svm, xgb"
            ),
        ),
        ({"classifiers": {}, "datasets": ["abalone"]}, "config classifiers.ordinal: no classifier"),
    ],
)
def test_plan_refuses_a_bad_C_or_an_empty_classifier_list_naming_the_key(change, message):
    with pytest.raises(ConfigError) as err:
        plan_run(_default_config(**{"datasets": ["letter"], **change}))
    assert message in str(err.value)


def test_C_score_zero_means_unregularised_and_is_valid():
    plan = plan_run(_default_config(datasets=["letter"], C_score=[0, 1], C_classifier=[C_MAX]))
    assert plan.datasets == ["letter"]


@pytest.mark.parametrize(
    "key, value, message",
    [
        (
            "C_classifier",
            [0],
            "config C_classifier.0: 0 is invalid: 0 is less than or equal to the minimum of 0",
        ),
        (
            "C_classifier",
            [1e308],
            "config C_classifier.0: 1e+308 is invalid: 1e+308 is greater than the maximum of",
        ),
        (
            "C_score",
            [0, 2e6],
            "config C_score.1: 2000000.0 is invalid: 2000000.0 is greater than the maximum of",
        ),
    ],
)
@pytest.mark.pipeline
def test_the_schema_states_the_C_bounds(key, value, message):
    config = _default_config(**{key: value})
    with pytest.raises(ConfigError) as err:
        validate_config(config, SCHEMA)
    assert message in str(err.value)
    assert SCHEMA["definitions"]["C_grid"]["items"]["maximum"] == C_MAX


def _custom_config(tmp_path, entry, **change):
    return _default_config(custom_datasets={"mine": entry}, datasets=["mine"], **change)


def test_a_custom_dataset_in_ood_or_double_hinge_must_declare_its_classes(tmp_path):
    (tmp_path / "mine.csv").write_text("a,b,y\n1,2,p\n")
    entry = {"path": str(tmp_path / "mine.csv"), "target": "y"}
    with pytest.raises(ConfigError) as err:
        plan_run(_custom_config(tmp_path, entry, ood={"datasets": ["mine"]}))
    assert (
        "config custom_datasets.mine.n_classes: declare the number of classes of 'mine', listed under "
        "ood.datasets" in str(err.value)
    )
    with pytest.raises(ConfigError) as err:
        plan_run(
            _custom_config(tmp_path, {**entry, "n_classes": 4}, double_hinge={"datasets": ["mine"]})
        )
    assert (
        "config double_hinge.datasets: 'mine' has 4 classes (custom_datasets.mine.n_classes); the double-hinge "
        "SVM is binary" in str(err.value)
    )
    plan = plan_run(
        _custom_config(tmp_path, {**entry, "n_classes": 2}, double_hinge={"datasets": ["mine"]})
    )
    assert plan.n_classes == {"mine": 2}


@pytest.mark.pipeline
def test_a_binary_dataset_in_ood_is_refused_at_planning(tmp_path):
    """A real dry run: refused while the workflow is read, before any job (no results folder), from
    the registry's class count (a custom dataset's declared one is checked the same way)."""
    run = snakemake(
        tmp_path, "-n", "--config", "datasets=[phishing]", "ood={datasets: [phishing]}", timeout=300
    )
    assert run.returncode != 0
    assert (
        "config ood.datasets: 'phishing' has 2 classes: holding out 1 of 2 classes leaves fewer than 2 ID "
        "classes"
    ) in run.stdout + run.stderr
    assert not (tmp_path / "results").exists()


def test_planning_reads_no_data_file(tmp_path):
    """A 60 MB CSV is planned from its size and first lines: the row count is an estimate, in milliseconds."""
    row = "0.123456,1.234567,2.345678,3.456789,p\n"
    n = 60_000_000 // len(row)
    with open(tmp_path / "big.csv", "w") as handle:
        handle.write("a,b,c,d,y\n")
        handle.write(row * n)
    entry = {"path": str(tmp_path / "big.csv"), "target": "y"}
    start = time.perf_counter()
    plan = plan_run(_custom_config(tmp_path, entry))
    assert time.perf_counter() - start < 1.0
    assert plan.n_examples == {"mine": n}


@pytest.mark.pipeline
def test_a_run_of_custom_datasets_only_downloads_no_faces(tmp_path):
    """A real dry run, no mirror set: the paper's datasets would be downloaded, but none is in the
    run, so neither is the 300-W archive (the landmark experiment is skipped, saying so)."""
    load_wine(as_frame=True).frame.to_csv(tmp_path / "wine.csv", index=False)
    (tmp_path / "user.yaml").write_text(
        "custom_datasets:\n  wine: {path: wine.csv, target: target}\ndatasets: [wine]\n"
    )
    run = snakemake(
        tmp_path, "-n", "--configfile", str(tmp_path / "user.yaml"), "--quiet", "rules", timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    jobs = _planned_jobs(run)
    assert jobs["prepare_dataset"] == 1 and "download_raw" not in jobs
    assert not {"download_faces", "extract_faces", "detect_faces"} & set(jobs)
    assert (
        "the run's datasets are all custom_datasets: the 300-W landmark experiment is skipped"
        in run.stderr
    )


@pytest.mark.pipeline
def test_a_misspelt_key_is_named_with_the_nearest_allowed_one():
    validate_config(_default_config(), SCHEMA)
    for change, message in (
        ({"n_splits": 0}, "config n_splits: 0 is invalid: 0 is less than the minimum of 1"),
        ({"n_split": 1}, "config (top level): unknown key 'n_split' (did you mean 'n_splits'?)"),
    ):
        with pytest.raises(ConfigError) as err:
            validate_config({**_default_config(), **change}, SCHEMA)
        assert str(err.value).split(";")[0] == message


def test_plan_of_the_demo_mirror_known_answer():
    """The demo mirror holds shuttle and abalone, not letter: the plan skips letter and lists what the
    jobs train, in registry order; a score that needs posteriors is refused for SVOR."""
    config = {
        "datasets": ["shuttle", "abalone", "letter"],
        "data_mirror": str(DEMO_MIRROR),
        "classifiers": {"classification": ["lr"], "ordinal": ["svor"]},
        "scores": {"lr": ["sele", "tcp"], "svor": ["sele"]},
    }
    plan = plan_run(config)
    assert (plan.datasets, plan.skipped) == (["shuttle", "abalone"], ["letter"])
    assert plan.task == {"shuttle": "classification", "abalone": "ordinal"}
    assert (plan.n_examples, plan.n_classes) == (
        {"shuttle": 58000, "abalone": 4177},
        {"shuttle": 7, "abalone": 19},
    )
    assert (plan.classifiers_run(), plan.scores_run()) == (["lr", "svor"], ["tcp", "sele"])
    assert (plan.classifiers_of("abalone"), plan.scores_of("svor"), plan.scores_of("svm")) == (
        ["svor"],
        ["sele"],
        [],
    )
    with pytest.raises(
        ConfigError,
        match="config scores.svor: score 'tcp' learns from class posteriors, which "
        "classifier 'svor' does not give",
    ):
        plan_run({**config, "scores": {"svor": ["tcp"]}})


def test_a_plugin_error_is_a_config_error_and_a_plugin_score_is_registered_with_its_origin(
    tmp_path,
):
    assert issubclass(PluginError, ConfigError)
    (tmp_path / "cfg_mean_loss.py").write_text(
        textwrap.dedent("""
        import numpy as np
        from rejectopt.scores import register_score

        @register_score("cfg_mean_loss")
        class MeanLoss:
            def __init__(self, C=1.0):
                self.C = C

            def fit(self, X, y_pred, loss):
                self.mean_ = float(np.mean(loss))
                return self

            def predict(self, X, y_pred):
                return np.full(len(X), self.mean_)
        """)
    )
    try:
        assert [module.__name__ for module in load_plugins(["cfg_mean_loss"], tmp_path)] == [
            "cfg_mean_loss"
        ]
        assert SCORES.origin("cfg_mean_loss") == "cfg_mean_loss.MeanLoss"
    finally:
        SCORES.remove("cfg_mean_loss")
        sys.modules.pop("cfg_mean_loss", None)


@pytest.mark.parametrize(
    "key, value",
    [
        ("unpack_max_ratio", float("inf")),
        ("unpack_max_ratio", float("nan")),
        ("split_job_cpu_s", float("nan")),
        ("download_deadline_s", float("nan")),
        ("download_timeout_s", float("nan")),
        ("download_timeout_s", float("inf")),
    ],
)
@pytest.mark.pipeline
def test_a_number_that_is_nan_or_infinite_is_refused_at_planning(key, value):
    """The schema's bounds let NaN through (every comparison with NaN is false) and inf past a
    minimum; either failed only in a job (unpack_max_ratio=inf: an OverflowError while unpacking)."""
    config = _default_config(datasets=["letter"], **{key: value})
    validate_config(config, SCHEMA)  # what the schema alone lets through
    with pytest.raises(ConfigError) as err:
        plan_run(config)
    assert str(err.value) == (
        f"config {key}: {value!r} is not a finite number; give a finite value (a large one "
        "where you mean no limit)"
    )
    with pytest.raises(ConfigError, match=r"config ood.tpr_min: nan is not a finite number"):
        plan_run(_default_config(datasets=["letter"], ood={"tpr_min": float("nan")}))


def test_download_options_refuse_infinite_values_too():
    from rejectopt.datasets._download import DownloadOptions

    for field, key in (
        ("max_ratio", "unpack_max_ratio"),
        ("timeout_s", "download_timeout_s"),
        ("deadline_s", "download_deadline_s"),
        ("backoff_s", "download_backoff_s"),
    ):
        with pytest.raises(ValueError, match=rf"^{key} must be a finite number"):
            DownloadOptions(**{field: float("inf")})


def test_mapie_convention_with_an_ordinal_dataset_is_refused_at_planning():
    with pytest.raises(ConfigError) as err:
        plan_run(_default_config(datasets=["letter", "abalone"], aurc_convention="mapie"))
    message = str(err.value)
    assert message.startswith(
        "config aurc_convention: 'mapie' cannot score the run's ordinal datasets abalone "
        "(their loss is the absolute error |y - h(x)|): convention 'mapie'"
    ), message
    assert message.endswith(
        "choose another aurc_convention (paper is eq. (27)) or drop them from datasets"
    )
    assert plan_run(_default_config(datasets=["letter"], aurc_convention="mapie")).datasets == [
        "letter"
    ]
    assert plan_run(_default_config(datasets=["abalone"], aurc_convention="geifman")).datasets == [
        "abalone"
    ]


def test_table_intervals_need_the_papers_aurc():
    assert plan_run(_default_config(datasets=["letter"], table_intervals=True)).datasets == [
        "letter"
    ]
    with pytest.raises(
        ConfigError,
        match=r"^config table_intervals: the intervals are of the paper's AuRC \(eq. \(27\)\), "
        r"but aurc_convention is 'geifman'; set aurc_convention: paper or table_intervals: false$",
    ):
        plan_run(
            _default_config(datasets=["letter"], table_intervals=True, aurc_convention="geifman")
        )


# --- data_mirror=null from the command line ----------------------------------------------------------


@pytest.mark.pipeline  # the config's JSON schema is checked with jsonschema, which Snakemake brings
def test_null_from_the_command_line_is_null_for_the_folders_that_may_be_null():
    """Snakemake's --config gives text: data_mirror=null arrives as 'null', and means null (YAML's word for it)."""
    from rejectopt.pipeline.config import NULLABLE_PATHS, coerce_numbers

    assert NULLABLE_PATHS == ("data_mirror", "download_base", "faces_mirror")
    for text in ("null", "Null", "NULL", "none", "None", "~", "", " null "):
        coerced = coerce_numbers(
            {"data_mirror": text, "download_base": text, "faces_mirror": text, "raw_dir": text}
        )
        assert coerced == {
            "data_mirror": None,
            "download_base": None,
            "faces_mirror": None,
            "raw_dir": text,
        }
    kept = {
        "data_mirror": "./null",
        "download_base": "file:///srv/mirror/",
        "faces_mirror": str(DEMO_MIRROR),
    }
    assert coerce_numbers(kept) == kept
    config = coerce_numbers(_default_config(datasets=["shuttle", "letter"], data_mirror="null"))
    validate_config(config, SCHEMA)
    plan = plan_run(config)
    assert config["data_mirror"] is None and (plan.datasets, plan.skipped) == (
        ["shuttle", "letter"],
        [],
    )


def test_a_data_mirror_that_is_no_folder_is_told_how_to_write_null_on_the_command_line(tmp_path):
    with pytest.raises(ConfigError) as err:
        plan_run(_default_config(datasets=["shuttle"], data_mirror=str(tmp_path / "nowhere")))
    assert str(err.value) == (
        f"config data_mirror={str(tmp_path / 'nowhere')!r} is not a folder; point it at a folder laid out as "
        "<mirror>/<dataset>/<file>[.xz|.gz], or set it to null to download (data_mirror: null in the config file, "
        "--config data_mirror=null on the command line)"
    )


@pytest.mark.slow
@pytest.mark.pipeline
def test_data_mirror_null_on_the_command_line_plans_the_downloads(tmp_path):
    """The advice above, followed: the dry run plans to download shuttle's raw files."""
    run = snakemake(
        tmp_path,
        "-n",
        "--quiet",
        "rules",
        "--config",
        "data_mirror=null",
        "datasets=[shuttle]",
        "n_splits=1",
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "is not a folder" not in run.stdout + run.stderr
    assert _planned_jobs(run)["download_raw"] >= 1


# --- a plugin that ends the process or is interrupted while imported ------------------------------


@pytest.mark.parametrize("code", [0, 5])
def test_a_plugin_calling_os_exit_while_imported_is_named_not_obeyed(tmp_path, code):
    """os._exit would end the planning at once, with status 0 as "success": refused, naming the module."""
    real = os._exit
    (tmp_path / f"cfg_quitting_{code}.py").write_text(f"import os\nos._exit({code})\n")
    with pytest.raises(PluginError) as err:
        load_plugins([f"cfg_quitting_{code}"], search_dir=tmp_path)
    assert str(err.value) == (
        f"config plugins: module 'cfg_quitting_{code}' called os._exit({code}) while imported, which would end "
        f"planning (Snakemake itself) at once with exit status {code} and no message; a module is imported by the "
        "planning and by every job: take the call out of its top level"
    )
    assert os._exit is real and f"cfg_quitting_{code}" not in sys.modules


def test_a_plugin_interrupted_while_imported_is_one_line_naming_it(tmp_path):
    (tmp_path / "cfg_interrupted.py").write_text("raise KeyboardInterrupt\n")
    with pytest.raises(PluginError) as err:
        load_plugins(["cfg_interrupted"], search_dir=tmp_path)
    assert str(err.value) == (
        "config plugins: module 'cfg_interrupted' was interrupted while imported "
        "(KeyboardInterrupt); nothing was run"
    )
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_os_exit_is_obeyed_again_after_an_import_and_in_a_child_forked_during_one(tmp_path):
    """Only the importing process, only during the import: a pool's forked child still exits."""
    import multiprocessing

    from rejectopt._registry import import_user_module

    (tmp_path / "cfg_forking.py").write_text(
        "import multiprocessing, os\n"
        "ctx = multiprocessing.get_context('fork')\n"
        "child = ctx.Process(target=os._exit, args=(7,))\n"
        "child.start(); child.join()\n"
        "EXITCODE = child.exitcode\n"
    )
    try:
        module = import_user_module("cfg_forking", tmp_path)
        assert module.EXITCODE == 7
    finally:
        sys.modules.pop("cfg_forking", None)
    child = multiprocessing.get_context("fork").Process(target=os._exit, args=(3,))
    child.start()
    child.join()
    assert child.exitcode == 3
