"""Add ``--hash`` lines to requirements.lock so that ``pip install --require-hashes`` checks
every file it installs.

For each ``name==version`` pin, every file PyPI lists for that release (all platforms, so the
same lock serves the CPU machines and the GPU runners) contributes its sha256, read from PyPI's
simple JSON API; wheels in local find-links folders (``--find-links DIR``, e.g. the CPU build of
torch that lies on this machine's disk) are hashed too.

    python tools/lock_hashes.py requirements.lock --find-links /opt/wheels \
        --local-index /opt/pypi/simple --local-index /opt/pypi-more/simple > requirements.lock.new
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import urllib.request
from pathlib import Path

SIMPLE = "https://pypi.org/simple/{}/"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pypi_hashes(name: str, version: str) -> set[str]:
    req = urllib.request.Request(SIMPLE.format(_norm(name)),
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        files = json.load(resp)["files"]
    out = set()
    for f in files:
        fname = f["filename"]
        stem = fname[: -len(".tar.gz")] if fname.endswith(".tar.gz") else fname.rsplit(".", 1)[0]
        parts = stem.split("-")
        if len(parts) >= 2 and parts[1].split("+")[0] == version and "sha256" in f["hashes"]:
            out.add(f["hashes"]["sha256"])
    return out


def local_hashes(name: str, version: str, folders: list[Path]) -> set[str]:
    out = set()
    prefix = _norm(name).replace("-", "_")
    for folder in folders:
        for f in folder.glob("*"):
            parts = f.name.split("-")
            if len(parts) >= 2 and _norm(parts[0]).replace("-", "_") == prefix \
                    and parts[1].split("+")[0] == version:
                out.add(hashlib.sha256(f.read_bytes()).hexdigest())
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("lock", type=Path)
    parser.add_argument("--find-links", type=Path, action="append", default=[])
    parser.add_argument("--local-index", type=Path, action="append", default=[],
                        help="a file:// simple index folder (one sub-folder per project)")
    args = parser.parse_args()
    lines = []
    for raw in args.lock.read_text().splitlines():
        line = raw.split("#")[0].strip().rstrip("\\").strip()
        if not line or line.startswith("--hash"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==([^\s;]+)", line)
        if m is None:
            print(f"error: cannot read pin {line!r}", file=sys.stderr)
            return 2
        name, version = m[1], m[2]
        base = name.split("[")[0]
        folders = args.find_links + [ix / _norm(base) for ix in args.local_index
                                     if (ix / _norm(base)).is_dir()]
        hashes = sorted(pypi_hashes(base, version) | local_hashes(base, version, folders))
        if not hashes:
            print(f"error: no files found for {name}=={version}", file=sys.stderr)
            return 1
        lines.append(f"{name}=={version} \\")
        lines += [f"    --hash=sha256:{h} \\" for h in hashes[:-1]]
        lines.append(f"    --hash=sha256:{hashes[-1]}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
