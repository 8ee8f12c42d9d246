"""Where `make env` installs torch from, and with which pip arguments.

    python tools/torch_source.py [--torch cpu|cuda] [--source auto|local|index] [--wheels DIR]

prints the pip arguments that install the torch lock (one shell-quoted line, for the Makefile's
``eval``) and says on stderr which source it chose; exit status 2, with what to do, when there
is none.

``requirements-torch-cpu.lock`` pins ``torch==2.13.0+cpu`` by the sha256 of one file, the Linux
x86_64 CPython 3.11 wheel. That build is not on PyPI (PyPI's Linux torch is the CUDA build, with
gigabytes of CUDA libraries). Its sources, in order (``--source auto``):

1. **a local wheel folder**: ``--wheels DIR`` (``make env TORCH_WHEELS=DIR``) and every
   ``find-links`` folder of pip's configuration (``pip config list``: its files and
   ``PIP_FIND_LINKS``), when one holds a ``torch-2.13.0+cpu-*.whl`` whose sha256 is the
   lock's. pip gets ``--find-links DIR``;
2. **PyTorch's own CPU wheel index**, https://download.pytorch.org/whl/cpu, when it answers
   (and pip's configuration does not say ``no-index``). pip gets ``--extra-index-url`` for the
   torch lock alone (the Makefile installs it in a pip call of its own, ``--no-deps``; the
   other locks come from PyPI as before), and ``--require-hashes`` still checks the file;
3. otherwise it stops and says what to do: put the wheel in a folder (``TORCH_WHEELS=``), or
   on a machine with an NVIDIA GPU take PyPI's CUDA build (``make env TORCH=cuda``).

``--source local`` or ``--source index`` (``make env TORCH_SOURCE=...``) takes that source
only (``index`` without asking whether it answers: the GitHub workflow's CPU job).
``--torch cuda`` is PyPI's CUDA build (``requirements-torch-cuda.lock``): no extra source.

Standard library only; the choice (:func:`resolve`) takes the wheel folders, pip's
configuration and the reachability of the index as arguments, so it is tested without network.
"""

from __future__ import annotations

import argparse
import hashlib
import platform
import re
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
#: the index page that lists PyTorch's CPU wheels of torch (what a person downloads from)
CPU_INDEX_PAGE = f"{CPU_INDEX}/torch/"
LOCKS = {"cpu": "requirements-torch-cpu.lock", "cuda": "requirements-torch-cuda.lock"}
SOURCES = ("auto", "local", "index")
#: the one file the CPU lock's hash pins (Linux x86_64, CPython 3.11)
CPU_PLATFORM = ("Linux", "x86_64", (3, 11))
CPU_WHEEL = "torch-{version}-cp311-cp311-manylinux_2_28_x86_64.whl"


@dataclass(frozen=True)
class Pin:
    """One ``name==version`` line of a hash-pinned lock, with its sha256 hashes."""

    name: str
    version: str
    hashes: frozenset[str]


@dataclass(frozen=True)
class Choice:
    """Where torch comes from: ``kind`` is ``local``, ``index`` or ``pypi``; ``args`` the pip
    arguments that install the lock from there; ``message`` says so (stderr)."""

    kind: str
    args: tuple[str, ...]
    message: str


class NoSource(Exception):
    """No source of the pinned torch here; the message says what to do."""


def read_lock(path: str | Path) -> list[Pin]:
    """The pins of a requirements lock (continuation lines joined, comments dropped)."""
    text = re.sub(r"\\\n\s*", " ", Path(path).read_text(encoding="utf-8"))
    pins = []
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        m = re.match(r"([A-Za-z0-9_.\-]+)==(\S+)", line)
        if m is None:
            raise ValueError(f"{path}: cannot read the pin {line.split()[0]!r}")
        pins.append(Pin(m[1].lower(), m[2], frozenset(
            re.findall(r"--hash=sha256:([0-9a-f]{64})", line))))
    return pins


def _config_values(pip_config: str, option: str) -> list[str]:
    """The values of ``option`` in the output of ``pip config list`` (``global.find-links='a
    b'``, ``:env:.find-links='a'``, ...), in the order listed."""
    out = []
    for line in pip_config.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip().rsplit(".", 1)[-1] == option:
            out.append(value.strip().strip("'\""))
    return out


def find_links(pip_config: str) -> list[Path]:
    """The local folders among pip's ``find-links`` (URLs other than ``file:`` left out)."""
    folders: list[Path] = []
    for value in _config_values(pip_config, "find-links"):
        for item in value.split():
            if item.startswith("file://"):
                item = item[len("file://"):]
            elif "://" in item:
                continue
            if Path(item) not in folders:
                folders.append(Path(item))
    return folders


def no_index(pip_config: str) -> bool:
    """Whether pip's configuration says ``no-index`` (then only find-links serve)."""
    return any(v.strip().lower() in ("1", "true", "yes", "on")
               for v in _config_values(pip_config, "no-index"))


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def local_wheel(pin: Pin, folders: Sequence[Path],
                digest: Callable[[Path], str] = sha256) -> tuple[Path | None, list[str]]:
    """The first folder holding a wheel of ``pin`` whose sha256 is one of the lock's, and
    notes on the wheels of that version that were found with another hash."""
    notes = []
    prefix = f"{pin.name.replace('-', '_')}-{pin.version}-"
    for folder in folders:
        if not folder.is_dir():
            continue
        for whl in sorted(folder.glob("*.whl")):
            if not whl.name.lower().replace("%2b", "+").startswith(prefix):
                continue
            if digest(whl) in pin.hashes:
                return folder, notes
            notes.append(f"{whl} has another sha256 than the lock's (not the pinned file)")
    return None, notes


def index_reachable(url: str = CPU_INDEX_PAGE, timeout: float = 15.0) -> tuple[bool, str]:
    """Whether ``url`` answers (proxies from the environment, as pip uses them), and why not."""
    try:
        req = urllib.request.Request(url, method="HEAD")
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status < 400, f"HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return False, f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        return False, str(getattr(exc, "reason", exc))


def this_platform() -> tuple[str, str, tuple[int, int]]:
    return platform.system(), platform.machine(), sys.version_info[:2]


def resolve(torch: str, source: str, *, lock: Path, wheel_folders: Sequence[Path],
            pip_config: str, reachable: Callable[[], tuple[bool, str]],
            machine: tuple[str, str, tuple[int, int]] = CPU_PLATFORM,
            digest: Callable[[Path], str] = sha256) -> Choice:
    """Where to install the torch lock from (see the module docstring). ``wheel_folders``:
    folders named by the user (``--wheels``), looked at before pip's find-links;
    ``pip_config``: the output of ``pip config list``; ``reachable()``: whether PyTorch's CPU
    index answers, asked only when needed; ``machine``: (system, machine, Python version).
    Raises :class:`NoSource` with what to do."""
    if torch not in LOCKS:
        raise NoSource(f"TORCH={torch} is not allowed; use one of: {' '.join(LOCKS)}")
    if source not in SOURCES:
        raise NoSource(f"TORCH_SOURCE={source} is not allowed; use one of: {' '.join(SOURCES)} "
                       "(auto: a local wheel folder, else PyTorch's CPU index)")
    if torch == "cuda":
        return Choice("pypi", ("-r", str(lock)),
                      f"torch: PyPI's CUDA build ({lock.name})")
    (pin,) = [p for p in read_lock(lock) if p.name == "torch"]
    wheel = CPU_WHEEL.format(version=pin.version)
    what = f"torch {pin.version} ({lock.name})"
    folders = list(dict.fromkeys([*wheel_folders, *find_links(pip_config)]))
    looked = ", ".join(map(str, folders)) or "none configured"
    todo = (f"download {wheel} from {CPU_INDEX_PAGE} (sha256 {min(pin.hashes)}) into a folder "
            "and run `make env TORCH_WHEELS=<that folder>`, or, on a machine with an NVIDIA "
            "GPU, install PyPI's CUDA build instead: `make env TORCH=cuda`")
    if machine[0] != CPU_PLATFORM[0] or machine[1] != CPU_PLATFORM[1] \
            or tuple(machine[2]) != CPU_PLATFORM[2]:
        raise NoSource(
            f"{what} pins one file, {wheel}, built for Linux x86_64 and Python 3.11; this is "
            f"{machine[0]} {machine[1]} with Python {'.'.join(map(str, machine[2]))}. Use "
            "such a machine (or its Docker image), or outside the compendium install fusionlib "
            "with pip's own torch (README: The package alone)")
    if source in ("auto", "local"):
        found, notes = local_wheel(pin, folders, digest)
        if found is not None:
            return Choice("local", ("--find-links", str(found), "-r", str(lock)),
                          f"{what}: the hash-pinned wheel in {found}")
        if source == "local":
            raise NoSource(f"{what}: no wheel folder here holds the pinned {wheel} (looked in: "
                           f"{looked}{'; ' + '; '.join(notes) if notes else ''}); {todo}")
    index_args = ("--extra-index-url", CPU_INDEX, "-r", str(lock))
    index_msg = f"{what}: from PyTorch's CPU index {CPU_INDEX} (hash-pinned)"
    if source == "index":
        return Choice("index", index_args, index_msg)
    if no_index(pip_config):
        why = "pip's configuration says no-index"
    else:
        ok, why = reachable()
        if ok:
            return Choice("index", index_args, f"{index_msg}; no wheel folder here holds it "
                          f"(looked in: {looked})")
    raise NoSource(f"{what} is not on PyPI, no wheel folder here holds {wheel} (looked in: "
                   f"{looked}) and PyTorch's CPU index {CPU_INDEX} cannot be used ({why}): "
                   f"{todo}")


def pip_config_list() -> str:
    """``pip config list`` of this interpreter (its files and ``PIP_*`` variables)."""
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                          text=True, timeout=120)
    return done.stdout if done.returncode == 0 else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/torch_source.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch", default="cpu")
    parser.add_argument("--source", default="auto")
    parser.add_argument("--wheels", type=Path, action="append", default=[],
                        help="a folder that may hold the pinned CPU wheel (TORCH_WHEELS)")
    parser.add_argument("--lock", type=Path, default=None,
                        help="the torch lock (default requirements-torch-<torch>.lock)")
    args = parser.parse_args(argv)
    lock = args.lock or Path(__file__).resolve().parents[1] / LOCKS.get(args.torch, "")
    try:
        choice = resolve(args.torch, args.source, lock=lock, wheel_folders=args.wheels,
                         pip_config=pip_config_list(), reachable=index_reachable,
                         machine=this_platform())
    except NoSource as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(choice.message, file=sys.stderr)
    print(shlex.join(choice.args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
