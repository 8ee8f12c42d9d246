"""Atomic writes: file permissions and the clean-up of temporary files left by killed writes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fusionlib.io as fio

ROOT = Path(__file__).resolve().parents[1]
HOUR = 3600.0


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.fixture()
def umask():
    """Set the process umask for one test and restore the previous one afterwards."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_write_gives_the_permissions_of_a_plain_open(tmp_path, umask, mask, expected):
    umask(mask)
    written = [fio.atomic_write_text(tmp_path / "a.txt", "x"),
               fio.atomic_write_json(tmp_path / "b.json", {"x": 1}),
               fio.atomic_write(tmp_path / "c.bin", lambda p: p.write_bytes(b"x"))]
    with open(tmp_path / "plain.txt", "w") as fh:  # what a normal open gives, for comparison
        fh.write("x")
    assert _mode(tmp_path / "plain.txt") == expected
    assert [_mode(p) for p in written] == [expected] * 3


def test_rewriting_a_file_left_0600_by_earlier_versions_gives_the_umask_mode(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "shard.json"
    target.write_text("old")
    target.chmod(0o600)
    fio.atomic_write_text(target, "new")
    assert target.read_text() == "new" and _mode(target) == 0o644


def test_atomic_write_uses_a_temporary_name_that_cleanup_recognises(tmp_path):
    seen: list[str] = []
    fio.atomic_write(tmp_path / "out.csv", lambda p: (seen.append(p.name), p.write_text("x")))
    assert len(seen) == 1 and seen[0].startswith(".out.csv.") and seen[0].endswith(".tmp")
    assert fio.is_own_temporary(seen[0], "out.csv")
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_a_killed_write_leaves_a_temporary_that_cleanup_removes_once_stale(tmp_path):
    code = (
        "import os, signal, sys\n"
        "from fusionlib.io import atomic_write\n"
        "def die(p):\n"
        "    p.write_text('half a result')\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "atomic_write(sys.argv[1], die)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "shard.json")], cwd=ROOT)
    assert proc.returncode != 0
    leftovers = list(tmp_path.iterdir())
    assert len(leftovers) == 1 and fio.is_own_temporary(leftovers[0].name)
    assert fio.clean_stale_temporaries(tmp_path, older_than_s=HOUR) == []  # fresh: kept
    _age(leftovers[0], 2 * HOUR)
    assert fio.clean_stale_temporaries(tmp_path, older_than_s=HOUR) == leftovers
    assert list(tmp_path.iterdir()) == []


def test_clean_stale_temporaries_removes_only_this_packages_old_temporaries(tmp_path):
    stale = tmp_path / ".result.csv.k3x_9a0b.tmp"
    fresh = tmp_path / ".result.csv.q8w2e1r4.tmp"
    others = [
        tmp_path / "result.csv",             # a finished result, however old
        tmp_path / "notes.tmp",              # someone else's temporary file
        tmp_path / ".result.csv.tmp",        # no random part
        tmp_path / ".result.csv.ABCDEFGH.tmp",  # not the random alphabet
        tmp_path / ".result.csv.abc.tmp",    # random part of the wrong length
        tmp_path / "x.result.csv.abcdefgh.tmp",  # no leading dot
        tmp_path / ".result.csv.abcdefgh.tmp.bak",
    ]
    for p in (stale, fresh, *others):
        p.write_text("x")
    folder_like = tmp_path / ".dir.abcdefgh.tmp"
    folder_like.mkdir()
    important = tmp_path / "important.txt"
    important.write_text("keep")
    link = tmp_path / ".link.abcdefgh.tmp"
    link.symlink_to(important)
    nested = tmp_path / "sub" / ".deep.abcdefgh.tmp"
    nested.parent.mkdir()
    nested.write_text("x")
    for p in (stale, *others, folder_like, important, nested):
        _age(p, 30 * 24 * HOUR)
    os.utime(link, (time.time() - 30 * 24 * HOUR,) * 2, follow_symlinks=False)
    _age(fresh, 60)

    removed = fio.clean_stale_temporaries(tmp_path, older_than_s=HOUR)

    assert removed == [stale]
    assert not stale.exists()
    for p in (fresh, *others, folder_like, important, nested):
        assert p.exists(), p
    assert link.is_symlink() and important.read_text() == "keep"


def test_clean_stale_temporaries_accepts_a_missing_folder_and_checks_its_threshold(tmp_path):
    assert fio.clean_stale_temporaries(tmp_path / "absent") == []
    assert fio.DEFAULT_STALE_AGE_S >= HOUR
    with pytest.raises(ValueError, match="older_than_s"):
        fio.clean_stale_temporaries(tmp_path, older_than_s=-1)


def test_clean_stale_temporaries_is_exported():
    assert "clean_stale_temporaries" in fio.__all__


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names fds through /proc (Linux)")
def test_atomic_write_flushes_the_file_before_the_rename_and_the_folder_after(tmp_path,
                                                                            monkeypatch):
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src, dst) -> None:
        events.append(("replace", str(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    target = tmp_path / "result.json"
    fio.atomic_write_text(target, "{}")
    kinds = [k for k, _ in events]
    assert kinds == ["fsync", "replace", "fsync"]
    assert Path(events[0][1]).name.startswith(".result.json.")  # the temporary, before
    assert events[1][1] == str(target) and events[2][1] == str(tmp_path)  # the folder, after
    assert target.read_text() == "{}"
