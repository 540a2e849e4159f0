"""Tests of rejectopt.config's run environment: the pinned OpenBLAS kernels."""

import platform

import pytest

from rejectopt.config import BLAS_CORETYPE, blas_environment

AVX2 = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n"
NO_AVX2 = "processor\t: 0\nflags\t\t: fpu sse2 avx\n"


@pytest.fixture
def x86(monkeypatch):
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")


def test_avx2_cpu_gets_the_haswell_kernels(x86, tmp_path):
    (tmp_path / "cpuinfo").write_text(AVX2)
    assert blas_environment({}, tmp_path / "cpuinfo") == {"OPENBLAS_CORETYPE": BLAS_CORETYPE} == {
        "OPENBLAS_CORETYPE": "Haswell"}


def test_nothing_is_pinned_without_avx2_or_cpuinfo_or_on_another_architecture(x86, tmp_path, monkeypatch):
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
