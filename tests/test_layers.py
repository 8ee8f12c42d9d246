"""The architecture of book/design.md ("How this compendium is built"), checked: layers import
only downwards, papers never import each other, the module import graph of fusionlib has
no cycle, and every experiment is a subpackage with the same rooms.

Every import counts, including imports inside functions (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fusionlib"

#: floor of each top-level entry of fusionlib (higher number = higher floor)
LAYERS = {
    "__init__": 0, "__main__": 0, "errors": 0, "io": 0, "rng": 0, "checks": 0, "threads": 0,
    "compendium": 1, "data": 1, "encoding": 1,
    "gan": 2, "metrics": 2, "matching": 2,
    "fairtest": 3, "ptgan": 3, "fusion": 3,
    "studies": 4,
}
PAPERS = {"fairtest", "ptgan", "fusion"}


def _modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = ["fusionlib", *f.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The longest known module prefix of dotted ``name``."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        cand = ".".join(parts[:i])
        if cand in MODULES:
            return cand
    return None


def _imports(module: str) -> set[str]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: set[str] = set()
    is_pkg = MODULES[module].name == "__init__.py"
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names = [mod] + [f"{mod}.{a.name}" for a in node.names]
        for n in names:
            if n.split(".")[0] == "fusionlib":
                r = _resolve(n)
                if r is not None and r != module:
                    found.add(r)
    return found


GRAPH = {m: _imports(m) for m in MODULES}


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_top_level_entry_has_a_layer():
    unknown = sorted({_top(m) for m in MODULES} - set(LAYERS))
    assert not unknown, f"give these a floor in LAYERS (and book/design.md): {unknown}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down_or_sideways_only(module):
    mine = _top(module)
    for dep in GRAPH[module]:
        theirs = _top(dep)
        if dep == "fusionlib":  # the root package only re-exports the error types
            continue
        assert LAYERS[theirs] <= LAYERS[mine], (
            f"{module} (floor {LAYERS[mine]}) imports {dep} (floor {LAYERS[theirs]}): a lower "
            "floor must not import a higher one; move the shared piece down")
        if mine in PAPERS and theirs in PAPERS:
            assert theirs == mine, f"paper package {module} imports another paper's {dep}"


def test_module_import_graph_has_no_cycle():
    # package __init__ files re-export their children; importing a child does not need the
    # parent's re-exports, so edges parent -> child are ignored when looking for cycles
    def edges(m: str) -> set[str]:
        return {d for d in GRAPH[m] if not d.startswith(m + ".")}

    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges(m)):
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_the_checker_sees_a_planted_upward_import(tmp_path):
    code = "from fusionlib.ptgan.config import GANConfig\n"
    tree = ast.parse(code)
    node = tree.body[0]
    assert isinstance(node, ast.ImportFrom) and _resolve(node.module) == "fusionlib.ptgan.config"
    assert LAYERS[_top("fusionlib.ptgan.config")] > LAYERS[_top("fusionlib.gan.trainer")]


# ----------------------------------------------------------------------------- the rooms
#: the rooms an experiment subpackage may have, each under this one name in every wing:
#: data (what it reads), model / step (what it trains), runs (one run), cells (the grid),
#: report (what the chapter shows); other modules of a wing are named for what they hold
ROOMS = ("data", "model", "step", "runs", "cells", "report")
#: experiment subpackages ("wings"): every package of fusionlib that holds a ``cells`` module
WINGS = sorted(m.rsplit(".", 1)[0] for m in MODULES if m.endswith(".cells")
               and MODULES[m].name == "cells.py" and _top(m) != "compendium")


def test_every_experiment_is_a_subpackage_of_a_paper_or_study():
    # registering modules (stem ``cells`` or ``*_cells``) live in a wing as ``cells.py``, one
    # floor below their paper package: fusionlib.<paper>.<experiment>.cells
    registering = sorted(m for m, f in MODULES.items() if _top(m) != "compendium" and (
        f.stem == "cells" or f.stem.endswith("_cells")))
    assert registering, "no experiment found"
    for m in registering:
        parts = m.split(".")
        assert parts[-1] == "cells" and len(parts) == 4, (
            f"{m}: an experiment's cells live in fusionlib.<package>.<experiment>.cells")
        assert LAYERS[parts[1]] >= LAYERS["fairtest"], f"{m}: experiments live in papers/studies"


@pytest.mark.parametrize("wing", WINGS)
def test_a_wing_names_its_rooms_alike(wing):
    folder = MODULES[wing].parent
    stems = sorted(p.stem for p in folder.glob("*.py") if p.stem != "__init__")
    assert "cells" in stems
    assert not any(p.is_dir() and (p / "__init__.py").is_file() for p in folder.iterdir()), (
        f"{wing}: a wing is one floor of modules")
    leaf = wing.rsplit(".", 1)[1]
    for stem in stems:  # a room under another name, or a name that repeats the folder's
        assert not any(stem.endswith(f"_{room}") or stem.startswith(f"{room}_")
                       for room in ROOMS), f"{wing}.{stem}: name the room {ROOMS}"
        assert not stem.startswith(f"{leaf}_"), f"{wing}.{stem}: the folder already says {leaf}"
