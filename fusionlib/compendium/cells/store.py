"""Where shards live and what makes them current: paths and code keys (the shard file itself:
:mod:`fusionlib.compendium.cells.shardfile`, re-exported here).

Part of the cell machinery (:mod:`fusionlib.compendium.cells` describes the file layout and
the code key); left out of every code key.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from fusionlib.compendium.cells.model import Experiment
from fusionlib.compendium.cells.registry import get_experiment
from fusionlib.compendium.cells.shardfile import SHARD_FORMAT, load_shard, write_shard
from fusionlib.compendium.runner import fusionlib_dependencies
from fusionlib.errors import InvalidInputError

__all__ = ["LOCK_FILES", "SHARD_FORMAT", "MACHINERY", "ENV_ROOT", "SHARD_SUFFIX", "ERROR_SUFFIX",
           "default_root", "resolve_root", "shard_path", "error_path", "key_files", "code_key",
           "write_shard", "load_shard"]

PACKAGE = Path(__file__).resolve().parents[2]  # the fusionlib folder
REPO = PACKAGE.parent
#: the pinned environment: a change of any pin invalidates every shard. Both torch locks count,
#: whichever build is installed, so that a shard computed on a GPU runner (torch from the cuda
#: lock) is current on the CPU machine that builds the book (and vice versa)
LOCK_FILES: tuple[Path, ...] = (REPO / "requirements.lock", REPO / "requirements-torch-cpu.lock",
                                REPO / "requirements-torch-cuda.lock")
#: modules of the cell machinery, left out of every code key (see the cells module docstring)
MACHINERY: tuple[str, ...] = (
    "fusionlib.compendium.cells", "fusionlib.compendium.cells.model",
    "fusionlib.compendium.cells.registry", "fusionlib.compendium.cells.frames",
    "fusionlib.compendium.cells.store", "fusionlib.compendium.cells.exec",
    "fusionlib.compendium.cells.cli", "fusionlib.compendium.cells.shardfile",
    "fusionlib.compendium.cells.bundle", "fusionlib.compendium.cells.bundle_checks",
    "fusionlib.compendium.cells.bundle_meta", "fusionlib.compendium.cells.origin",
    "fusionlib.compendium.cells.__main__",
)
ENV_ROOT = "FUSIONLIB_CELLS"
SHARD_SUFFIX = ".shard.json"
ERROR_SUFFIX = ".error.txt"


def default_root() -> Path:
    """``$FUSIONLIB_CELLS`` if set, else ``results/cells`` in the repository checkout when
    fusionlib is used from one, else ``results/cells`` in the current folder (an installed
    package: never inside site-packages)."""
    env = os.environ.get(ENV_ROOT)
    if env:
        return Path(env)
    if (REPO / "pyproject.toml").is_file() and (REPO / "fusionlib").is_dir():
        return REPO / "results" / "cells"
    return Path.cwd() / "results" / "cells"


def _root(root: str | os.PathLike[str] | None) -> Path:
    return Path(root) if root is not None else default_root()


def shard_path(root: str | os.PathLike[str] | None, experiment: str, scale: str,
               cell_id: str) -> Path:
    """``<root>/<experiment>/<scale>/<cell_id>.shard.json``."""
    return _root(root) / experiment / scale / f"{cell_id}{SHARD_SUFFIX}"


def error_path(root: str | os.PathLike[str] | None, experiment: str, scale: str,
               cell_id: str) -> Path:
    """``<root>/<experiment>/<scale>/<cell_id>.error.txt`` (traceback of a failed compute)."""
    return _root(root) / experiment / scale / f"{cell_id}{ERROR_SUFFIX}"


# ----------------------------------------------------------------------------- code key
def _module_source(name: str) -> tuple[str, Path]:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise InvalidInputError(f"cannot find the source file of module {name!r}")
    return name, Path(spec.origin)


class _DropMachinery(ast.NodeTransformer):
    """Replace imports of the cell machinery by ``pass`` (it is not part of the key)."""

    def _hits(self, names: Iterable[str]) -> bool:
        return any(n == m or n.startswith(m + ".") for n in names for m in MACHINERY)

    def visit_Import(self, node: ast.Import) -> ast.AST:
        return ast.Pass() if self._hits(a.name for a in node.names) else node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        mod = node.module or ""
        if node.level == 0 and self._hits([mod, *(f"{mod}.{a.name}" for a in node.names)]):
            return ast.Pass()
        return node


def _key_files(modules: Sequence[str]) -> list[tuple[str, Path]]:
    """(name in the key, file) of the modules and their fusionlib dependencies, sorted."""
    files: dict[str, Path] = {}
    for name in modules:
        _, path = _module_source(name)
        try:
            rel = str(path.resolve().relative_to(PACKAGE))
        except ValueError:  # a module outside fusionlib (tests): named by its dotted name
            rel = f"<{name}>"
        if name not in MACHINERY:
            files[rel] = path
        tree = _DropMachinery().visit(ast.parse(path.read_text(encoding="utf-8")))
        for dep in fusionlib_dependencies(ast.unparse(ast.fix_missing_locations(tree)),
                                          skip=MACHINERY):
            files.setdefault(dep, PACKAGE / dep)
    for m in MACHINERY:  # never part of the key, even if reached through another module
        files.pop(str(_module_source(m)[1].resolve().relative_to(PACKAGE)), None)
    return sorted(files.items())


def code_key(experiment: str | Experiment) -> str:
    """SHA-256 of the experiment's code, its fusionlib dependencies, the lock files
    (:data:`LOCK_FILES`) and :data:`SHARD_FORMAT` (see the module docstring)."""
    exp = get_experiment(experiment)
    h = hashlib.sha256(f"fusionlib-cells-format-{SHARD_FORMAT}\0".encode())
    for rel, path in _key_files(exp.modules):
        h.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
    for lock in LOCK_FILES:
        h.update(lock.name.encode() + b"\0")
        h.update(lock.read_bytes() if lock.is_file() else b"<absent>")
    return h.hexdigest()


resolve_root = _root
key_files = _key_files
