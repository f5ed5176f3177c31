"""The fuzz targets without the fuzzer: their seeds, every saved finding and random bytes go
through the same `one_input` that `make fuzz` runs, so a fixed finding stays fixed."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hack import fuzz
from hack.fuzz import __main__ as runner
from hack.fuzz import registryv1
from hack.fuzz._input import Input

REGRESSIONS = Path(__file__).parent / "fuzz_regressions"


def one_input(target: str) -> Callable[[bytes], None]:
    function: Callable[[bytes], None] = importlib.import_module(f"hack.fuzz.{target}").one_input
    return function


def saved_findings() -> list[object]:
    return [
        pytest.param(path.parent.name, path.read_bytes(), id=f"{path.parent.name}/{path.stem}")
        for path in sorted(REGRESSIONS.glob("*/*.bin"))
    ]


@pytest.mark.parametrize("target", fuzz.TARGETS)
def test_seeds_pass(target: str) -> None:
    seeds = importlib.import_module(f"hack.fuzz.{target}").SEEDS
    assert seeds
    for seed in seeds:
        one_input(target)(seed)


@pytest.mark.parametrize(("target", "data"), saved_findings())
def test_saved_findings_stay_fixed(target: str, data: bytes) -> None:
    one_input(target)(data)


@pytest.mark.parametrize("target", fuzz.TARGETS)
def test_random_bytes_pass(target: str) -> None:
    @settings(max_examples=25, deadline=None)
    @given(st.binary(max_size=runner.MAX_LEN[target] // 4))
    def check(data: bytes) -> None:
        one_input(target)(data)

    check()


def test_every_target_has_an_input_limit() -> None:
    assert set(runner.MAX_LEN) == set(fuzz.TARGETS)
    for target in fuzz.TARGETS:
        assert callable(one_input(target))


def test_registryv1_files_round_trip_through_the_fuzzer_form() -> None:
    files = {"metadata/annotations.yaml": b"a: b\n", "manifests/x.yaml": b"kind: X\n"}
    assert registryv1.decode(registryv1.encode(files)) == files


def test_an_exhausted_input_reads_as_zeros() -> None:
    source = Input(b"\x05\x01")
    assert source.number(256) == 5
    assert source.number(1 << 16) == 256
    assert (source.number(10), source.chunk(5), source.choice("ab")) == (0, b"", "a")
