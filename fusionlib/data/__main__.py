"""Command line: ``python -m fusionlib.data provision [NAME ...]`` and ``... status``."""

from __future__ import annotations

import argparse
import sys

from fusionlib.data.provisioning import provision
from fusionlib.data.registry import REGISTRY
from fusionlib.data.store import data_dir, dataset_paths
from fusionlib.errors import FusionlibError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusionlib.data")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("provision", help="fetch and verify datasets (default: offline ones)")
    p.add_argument("names", nargs="*", help=f"datasets (known: {', '.join(sorted(REGISTRY))})")
    p.add_argument("--all", action="store_true", help="also try the web-only datasets")
    sub.add_parser("status", help="show which datasets are present and verified")
    args = parser.parse_args(argv)
    print(f"data folder: {data_dir()}")
    if args.cmd == "provision":
        names = sorted(REGISTRY) if args.all else (args.names or None)
        for name, state in provision(names).items():
            print(f"  {name:15s} {state}")
        return 0
    for name in sorted(REGISTRY):
        try:
            dataset_paths(name)
            state = "present, checksums verified"
        except FusionlibError as exc:
            state = f"missing ({type(exc).__name__})"
        print(f"  {name:15s} {state}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
