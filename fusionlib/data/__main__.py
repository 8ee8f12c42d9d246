"""Command line: ``python -m fusionlib.data provision [NAME ...]`` and ``... status``.

``status`` lists every file of every dataset as present and verified, missing, present but
altered (hash mismatch), a folder instead of a file, or present with its first-use SHA256 not yet
recorded; it only looks and never records anything.

Errors are one line on stderr (``error: ...``), never a traceback; only an unexpected exception
(a bug) shows one. Exit status: 0 success; 1 a data error (altered or unavailable files; also
``status`` when a file is altered or is a folder); 2 a usage error such as an unknown dataset.
"""

from __future__ import annotations

import argparse
import sys

from fusionlib.data.provisioning import provision
from fusionlib.data.registry import REGISTRY
from fusionlib.data.store import ALTERED, FOLDER, NOT_A_FILE, data_dir, dataset_states
from fusionlib.errors import FusionlibError, InvalidInputError

_BAD = (ALTERED, FOLDER, NOT_A_FILE)


def _error(message: str, code: int) -> int:
    """Print ``message`` as one line on stderr; returns ``code``."""
    line = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
    print(f"error: {line}", file=sys.stderr)
    return code


def _provision(names: list[str], all_: bool) -> int:
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        which = "dataset" if len(unknown) == 1 else "datasets"
        return _error(f"unknown {which} {', '.join(map(repr, unknown))}; "
                      f"known: {', '.join(sorted(REGISTRY))}", 2)
    if all_ and names:
        return _error("give dataset names or --all, not both", 2)
    print(f"data folder: {data_dir()}")
    for name, state in provision(sorted(REGISTRY) if all_ else (names or None)).items():
        print(f"  {name:15s} {state}")
    return 0


def _status() -> int:
    print(f"data folder: {data_dir()}")
    bad = 0
    for name in sorted(REGISTRY):
        for file, state in dataset_states(name).items():
            print(f"  {name:15s} {file:36s} {state}")
            bad += state in _BAD
    if bad:
        print(f"{bad} file(s) altered or not a file: move or delete them and provision again "
              "(loading the dataset says which hash was expected)")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusionlib.data")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("provision", help="fetch and verify datasets (default: offline ones)")
    p.add_argument("names", nargs="*", help=f"datasets (known: {', '.join(sorted(REGISTRY))})")
    p.add_argument("--all", action="store_true", help="also try the web-only datasets")
    sub.add_parser("status", help="show each file: verified, missing, altered or a folder "
                   "(exit 1 if any is altered or a folder)")
    args = parser.parse_args(argv)
    try:
        return _provision(args.names, args.all) if args.cmd == "provision" else _status()
    except InvalidInputError as exc:
        return _error(str(exc), 2)
    except FusionlibError as exc:
        return _error(str(exc), 1)
    except KeyboardInterrupt:
        return _error("interrupted", 130)


if __name__ == "__main__":
    sys.exit(main())
