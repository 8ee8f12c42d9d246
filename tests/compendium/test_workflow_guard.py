"""Tests of workflow/guard.py: one workflow run per checkout, stale Snakemake locks cleared.

A fake ``snakemake`` (a Python script) stands in for the real one: it records its arguments and,
when asked, sleeps so that a second run meets the first.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUARD = ROOT / "workflow" / "guard.py"

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir() or os.name != "posix",
                                reason="the guard uses fcntl locks and /proc (POSIX, Linux)")


def _guard_module():
    spec = importlib.util.spec_from_file_location("workflow_guard", GUARD)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fake_snakemake(folder: Path) -> Path:
    exe = folder / "bin" / "snakemake"
    exe.parent.mkdir(parents=True)
    exe.write_text(f"#!{sys.executable}\n"
                   "import os, pathlib, sys, time\n"
                   "with open('ran.txt', 'a') as f:\n"
                   "    f.write('ran ' + ' '.join(sys.argv[1:]) + '\\n')\n"
                   "if os.environ.get('FAKE_SLEEP'):\n"
                   "    pathlib.Path('started.txt').write_text('started')\n"
                   "    time.sleep(float(os.environ['FAKE_SLEEP']))\n", encoding="utf-8")
    exe.chmod(0o755)
    return exe


def _guard(repo: Path, exe: Path, *args: str, sleep: str = "", wait: bool = True):
    env = {**os.environ, "FAKE_SLEEP": sleep}
    cmd = [sys.executable, str(GUARD), str(exe), *args]
    if not wait:
        return subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=60)


def _wait_for(path: Path, seconds: float = 20.0) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.05)


def test_runs_snakemake_with_its_arguments_and_holds_the_lock(tmp_path):
    exe = _fake_snakemake(tmp_path)
    done = _guard(tmp_path, exe, "-j", "2", "all")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ran.txt").read_text().strip() == "ran -j 2 all"
    assert (tmp_path / "results/workflow/run.lock").is_file()


def test_a_second_run_is_refused_while_the_first_works_then_allowed_after_a_kill(tmp_path):
    exe = _fake_snakemake(tmp_path)
    first = _guard(tmp_path, exe, "all", sleep="30", wait=False)
    try:
        _wait_for(tmp_path / "started.txt")
        second = _guard(tmp_path, exe, "all")
        assert second.returncode != 0
        assert f"process {first.pid}" in second.stderr and "wait for it" in second.stderr
        assert (tmp_path / "ran.txt").read_text().count("ran") == 1
    finally:
        first.send_signal(signal.SIGKILL)  # a hard kill: the kernel releases the lock
        first.communicate(timeout=30)
    third = _guard(tmp_path, exe, "all")
    assert third.returncode == 0, third.stderr
    assert (tmp_path / "ran.txt").read_text().count("ran") == 2


def test_stale_snakemake_locks_of_a_killed_run_are_removed(tmp_path):
    exe = _fake_snakemake(tmp_path)
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    for name in ("0.input.lock", "0.output.lock"):
        (locks / name).write_text("results/cells/x.shard.json\n")
    done = _guard(tmp_path, exe, "all")
    assert done.returncode == 0, done.stderr
    assert "stale Snakemake lock" in done.stderr
    assert not list(locks.iterdir())
    assert (tmp_path / "ran.txt").is_file()


def test_a_live_snakemake_started_by_hand_is_never_unlocked(tmp_path):
    exe = _fake_snakemake(tmp_path)
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text("x\n")
    by_hand = subprocess.Popen([str(exe), "-s", "Snakefile"], cwd=tmp_path,
                               env={**os.environ, "FAKE_SLEEP": "30"})
    try:
        _wait_for(tmp_path / "started.txt")
        assert _guard_module().other_snakemake(tmp_path) == [by_hand.pid]
        done = _guard(tmp_path, exe, "all")
        assert done.returncode != 0
        assert f"process {by_hand.pid}" in done.stderr and "outside make" in done.stderr
        assert (locks / "0.input.lock").is_file()
    finally:
        by_hand.kill()
        by_hand.wait(timeout=30)
    assert _guard_module().other_snakemake(tmp_path) == []


def test_other_snakemake_ignores_other_directories_and_missing_proc(tmp_path):
    guard = _guard_module()
    assert guard.other_snakemake(tmp_path, proc=tmp_path / "no-proc") == []
    assert guard.other_snakemake(tmp_path / "nowhere") == []


def test_no_arguments_and_a_missing_executable_are_clear_errors(tmp_path):
    usage = subprocess.run([sys.executable, str(GUARD)], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60)
    assert usage.returncode != 0 and "usage:" in usage.stderr
    missing = _guard(tmp_path, tmp_path / "bin" / "snakemake")
    assert missing.returncode != 0 and "make workflow-env" in missing.stderr
