"""``fusionlib``: the package's command line (its console entry point)::

    fusionlib cells list|run|results|plan|export|import|verify|origin ...  (the grid of cells)
    fusionlib data provision|status ...                                    (the datasets)
    fusionlib claims locate|show CLAIM_ID                       (a claim's chapter, its row)

Each command is the module's own command line (``python -m fusionlib.compendium.cells``,
``python -m fusionlib.data``, ``python -m fusionlib.compendium.recompute``); ``fusionlib
<command> --help`` lists its options. Exit status: the command's; 2 for an unknown command.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = ["COMMANDS", "main"]


def _cells(argv: list[str]) -> int:
    from fusionlib.compendium.cells.cli import main as cells_main

    return cells_main(argv)


def _data(argv: list[str]) -> int:
    from fusionlib.data.__main__ import main as data_main

    return data_main(argv)


def _claims(argv: list[str]) -> int:
    from fusionlib.compendium.recompute import main as claims_main

    return claims_main(argv)


#: command -> (function taking the remaining arguments, one line of help)
COMMANDS: dict[str, tuple[Callable[[list[str]], int], str]] = {
    "cells": (_cells, "list, run, aggregate, export, import and verify cells (shards)"),
    "data": (_data, "provision and check the datasets"),
    "claims": (_claims, "the chapter of a claim (locate) or its scorecard row (show)"),
}


def _usage() -> str:
    lines = ["usage: fusionlib COMMAND [ARGUMENTS ...]", "", "commands:"]
    lines += [f"  {name:<8} {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "`fusionlib COMMAND --help` lists the options of a command."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run ``fusionlib COMMAND ...``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"error: unknown command {command!r}; allowed values are "
              f"{', '.join(COMMANDS)} (fusionlib --help)", file=sys.stderr)
        return 2
    return COMMANDS[command][0](rest)


if __name__ == "__main__":
    sys.exit(main())
