"""The seed-002 benchmark script's command line (benchmarks/bench_fairtest.py); nothing is timed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("torch")
BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_fairtest.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_fairtest", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_default_options(bench):
    args = bench.parse_args([])
    assert args.ctgan_epochs == [1, 5] and args.repeats == 3 and args.seed == 0


@pytest.mark.parametrize("argv", [["--ctgan-epochs", "5", "5"], ["--ctgan-epochs", "0", "5"],
                                  ["--repeats", "0"]])
def test_invalid_options_exit_with_a_usage_message(bench, argv, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.parse_args(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "DIFFERENT epoch counts" in err or "--repeats must be >= 1" in err
