"""Start Snakemake on this checkout: one workflow run at a time, and no manual unlock after a kill.

    python workflow/guard.py SNAKEMAKE [ARGUMENTS ...]     (run from the repository root)

`make cells`, `make notebooks` and `make book` go through this script. It

1. takes an exclusive lock on ``results/workflow/run.lock`` (``fcntl.flock``; the kernel drops
   it when the holder dies, even by SIGKILL). A second run on the same checkout is refused at
   once with the first one's process id, instead of racing it;
2. clears a stale Snakemake lock. Snakemake locks the working directory in
   ``.snakemake/locks/`` and removes the lock when it ends; a run killed hard (SIGKILL, a lost
   terminal, an out-of-memory kill) leaves it behind, and every later run would stop with
   "Directory cannot be locked" until someone ran ``snakemake --unlock`` with the right
   arguments. Holding the lock of step 1 proves that no run started by ``make`` is alive; a
   Snakemake started by hand in this directory is looked for too (Linux ``/proc``), and if one
   is running the guard refuses rather than unlocking under it;
3. replaces itself with Snakemake (``exec``), which inherits the lock and holds it until it ends.
   Signals (Ctrl-C) therefore reach Snakemake directly.

Standard library only: it runs with the interpreter of ``.venv/workflow``. Exit status 2 with a
message naming the other process when the checkout is busy.
"""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

#: the lock every run started by make holds (relative to the repository root)
RUN_LOCK = Path("results/workflow/run.lock")
#: where Snakemake keeps its own directory locks
SNAKEMAKE_LOCKS = Path(".snakemake/locks")


def other_snakemake(repo: Path, *, proc: Path = Path("/proc")) -> list[int]:
    """Process ids of Snakemake processes (other than this one) whose working directory is
    ``repo``; empty where ``/proc`` is missing (the check is then skipped)."""
    if not proc.is_dir():
        return []
    repo, found = repo.resolve(), []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:  # gone, or not ours to read
            continue
        names = [Path(a.decode(errors="replace")).name for a in argv[:3]]
        launched = "snakemake" in names or (b"-m" in argv[:3] and b"snakemake" in argv[:4])
        if launched and cwd == repo:
            found.append(int(entry.name))
    return sorted(found)


def acquire(repo: Path) -> int:
    """The open, locked run-lock file (its descriptor), with this process id written in it;
    raises ``SystemExit(2)`` naming the holder when another run has it."""
    path = repo / RUN_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise SystemExit(
            f"error: another workflow run (`make book`, `make cells` or `make notebooks`, "
            f"process {holder}) is working in {repo}; wait for it to finish or stop it "
            f"(kill {holder}), then start again. Its finished cells are kept.") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def clear_stale_locks(repo: Path) -> list[Path]:
    """Remove Snakemake's directory locks when no Snakemake is alive here; returns what was
    removed. Raises ``SystemExit(2)`` if a Snakemake started by hand is running here."""
    folder = repo / SNAKEMAKE_LOCKS
    stale = sorted(p for p in folder.glob("*") if p.is_file()) if folder.is_dir() else []
    if not stale:
        return []
    alive = other_snakemake(repo)
    if alive:
        ids = ", ".join(map(str, alive))
        raise SystemExit(
            f"error: Snakemake is already running in {repo} (process {ids}, started outside "
            "make); wait for it to finish or stop it, then start again.")
    for p in stale:
        p.unlink(missing_ok=True)
    print(f"workflow: removed {len(stale)} stale Snakemake lock file(s) left by a run that was "
          "killed (no Snakemake process is running here); its finished cells are kept",
          file=sys.stderr)
    return stale


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python workflow/guard.py SNAKEMAKE [ARGUMENTS ...]")
    repo = Path.cwd()
    fd = acquire(repo)
    clear_stale_locks(repo)
    os.set_inheritable(fd, True)  # Snakemake keeps the lock until it ends
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(argv[0], argv)
    except OSError as exc:
        raise SystemExit(f"error: cannot start {argv[0]!r} ({exc}); `make workflow-env` "
                         "installs Snakemake in .venv/workflow") from None


if __name__ == "__main__":
    main(sys.argv[1:])
