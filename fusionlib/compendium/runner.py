"""Execute a MyST notebook with papermill, unless its executed copy is current.

``python -m fusionlib.compendium.runner NOTEBOOK.md [...] --scale cpu [--out book/executed]``

What runs when, and in which order, is the workflow's business (``workflow/Snakefile``: the
cells a chapter reads, then the chapter, the scorecard after every other chapter, the book;
``make book`` runs it). This module executes the notebooks it is *named*, in the order given,
and keeps what it does well:

For each notebook the runner computes a key from (its source, the scale, its parameters, and the
source of every ``fusionlib`` module it depends on, transitively). If the executed notebook's
stamp holds the same key and the results it recorded are all there (:func:`stamp_is_current`:
the results are part of "done"), nothing runs. Otherwise the notebook is read with jupytext,
executed by papermill with ``scale`` and ``results_dir`` injected, its ``parameters`` and
``injected-parameters`` cells are tagged ``remove-cell`` (the book shows neither the defaults nor
this machine's paths), and the executed ``.ipynb`` is moved into place atomically; a failed
run leaves the previous output untouched and keeps the failed notebook under ``<out>/_failed/``
for inspection. The scorecard is keyed on every other notebook's ``claims.csv`` as they are
when it runs (the workflow runs it last; :func:`discover` lists it last for the tests).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fusionlib.compendium.scales import SCALES, validate_scale
from fusionlib.compendium.summary import dress_chapter, dress_scorecard
from fusionlib.errors import InvalidInputError
from fusionlib.io import atomic_write_json

__all__ = ["notebook_key", "scorecard_inputs", "fusionlib_dependencies", "execute_notebook",
           "run_all", "discover", "hide_parameter_cells", "stamp_is_current", "SCORECARD"]

PACKAGE = Path(__file__).resolve().parents[1]  # the fusionlib folder
REPO = PACKAGE.parent
SCORECARD = "scorecard"
#: the pinned environment: a change of any pin re-runs every notebook
ENVIRONMENT_FILES = (REPO / "requirements.lock", REPO / "pyproject.toml")
#: what the runner itself adds to an executed chapter (its opening box, folded code): a change
#: of any of these re-runs the notebooks
DRESSING_FILES = tuple(PACKAGE / "compendium" / f for f in (
    "runner.py", "summary.py", "conclusions.py", "verdicts.py", "chapters.csv",
    "conclusions.csv"))
#: tags of the cells the book hides: the notebook's defaults and papermill's injected values
PARAMETER_TAGS = ("parameters", "injected-parameters")
_CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.S)


def _module_file(dotted: str) -> Path | None:
    """The file of module ``fusionlib.a.b`` (``a/b.py`` or ``a/b/__init__.py``), if any."""
    parts = dotted.split(".")[1:]
    base = PACKAGE.joinpath(*parts)
    for cand in (base.with_suffix(".py") if parts else None, base / "__init__.py"):
        if cand is not None and cand.is_file():
            return cand
    return None


def _imports(code: str) -> set[str]:
    """Dotted fusionlib modules imported by Python ``code`` (``from fusionlib import x`` too)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:  # a cell with IPython magics: fall back to the import lines alone
        lines = [ln for ln in code.splitlines() if ln.lstrip().startswith(("from ", "import "))]
        try:
            tree = ast.parse("\n".join(ln.strip() for ln in lines))
        except SyntaxError:
            return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "fusionlib"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] == "fusionlib":
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}  # submodules, if any
    return found


def _with_parents(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def fusionlib_dependencies(text: str, skip: Iterable[str] = ()) -> list[str]:
    """Files (relative to ``fusionlib/``) of every fusionlib module ``text`` imports, closed
    under their own imports; package ``__init__`` files on each path are included.

    ``text`` is Python source or a MyST notebook (its code cells are read). Modules named in
    ``skip`` (dotted names; their submodules too) are neither listed nor followed: what only
    they import is not a dependency (the code key skips the cell machinery this way).
    """
    skip = tuple(skip)

    def skipped(dotted: str) -> bool:
        return any(dotted == m or dotted.startswith(m + ".") for m in skip)

    cells = _CELL.findall(text)
    todo = set().union(*(_imports(c) for c in cells)) if cells else _imports(text)
    todo.add("fusionlib")
    seen: dict[str, Path] = {}
    while todo:
        name = todo.pop()
        for dotted in _with_parents(name):
            f = _module_file(dotted)
            if f is None or dotted in seen or skipped(dotted):
                continue
            seen[dotted] = f
            todo |= _imports(f.read_text(encoding="utf-8")) - set(seen)
    return sorted(str(f.relative_to(PACKAGE)) for f in seen.values())


def notebook_key(path: Path, scale: str, params: dict | None = None,
                 extra: list[Path] | None = None) -> str:
    """A hash of everything the executed notebook depends on."""
    text = path.read_text(encoding="utf-8")
    h = hashlib.sha256()
    h.update(text.encode())
    h.update(scale.encode())
    h.update(json.dumps(params or {}, sort_keys=True).encode())
    for rel in fusionlib_dependencies(text):
        h.update(rel.encode())
        h.update((PACKAGE / rel).read_bytes())
    for f in ENVIRONMENT_FILES + DRESSING_FILES:
        h.update(f.read_bytes() if f.is_file() else b"<absent>")
    for f in extra or []:
        h.update(str(f).encode())
        h.update(f.read_bytes() if f.is_file() else b"<absent>")
    return h.hexdigest()


def discover(folder: Path) -> list[Path]:
    """All notebooks in ``folder``; the scorecard last."""
    found = sorted(folder.glob("*.md"))
    return [p for p in found if p.stem != SCORECARD] + [p for p in found if p.stem == SCORECARD]


def execute_notebook(path: Path, out_dir: Path, scale: str, params: dict | None = None,
                     *, timeout: int | None = None) -> Path:
    """Execute one notebook into ``out_dir/<stem>.ipynb`` (atomic).

    Its results (tables, figures, claims, provenance) are written to a fresh folder
    ``out_dir/.<stem>.partial/`` and moved onto ``out_dir/<stem>/`` only when the whole notebook
    succeeded, so a failed or killed run never mixes its files with a previous run's.
    """
    import jupytext
    import nbformat
    import papermill

    validate_scale(scale)
    out_dir.mkdir(parents=True, exist_ok=True)
    results = (out_dir / path.stem).resolve()
    partial = out_dir.resolve() / f".{path.stem}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    nb = jupytext.read(path)
    if not any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb.cells):
        raise InvalidInputError(f"{path}: no cell tagged 'parameters'; add one (see README)")
    parameters = {"scale": scale, "results_dir": str(partial), **(params or {})}
    # papermill writes the notebook as it runs; it stays under _failed/ unless the run succeeds,
    # in which case it is renamed onto the target (atomic on one file system)
    failed = out_dir / "_failed" / f"{path.stem}.ipynb"
    failed.parent.mkdir(exist_ok=True)
    executed = papermill.execute_notebook(
        nb, str(failed), parameters=parameters, kernel_name="python3", cwd=str(path.parent),
        progress_bar=False, execution_timeout=timeout, report_mode=False,
    )
    hide_parameter_cells(executed)
    if path.stem == SCORECARD:  # no opening box; code folded, figures described
        dress_scorecard(executed, partial)
    else:  # the answer first: the opening box from the chapter's claims, code folded
        dress_chapter(executed, path.stem, partial, scale)
    nbformat.write(executed, str(failed))
    target = out_dir / f"{path.stem}.ipynb"
    old = out_dir.resolve() / f".{path.stem}.old"
    shutil.rmtree(old, ignore_errors=True)
    if results.exists():
        os.replace(results, old)
    partial.mkdir(exist_ok=True)
    os.replace(partial, results)
    os.replace(failed, target)
    shutil.rmtree(old, ignore_errors=True)
    return target


def hide_parameter_cells(nb: Any) -> int:
    """Add the ``remove-cell`` tag to every cell of ``nb`` tagged ``parameters`` or
    ``injected-parameters`` (myst-nb leaves such cells out of the book); returns how many cells
    carry it. Other cells and their tags are left alone; calling it twice changes nothing."""
    hidden = 0
    for cell in nb.cells:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if any(t in tags for t in PARAMETER_TAGS):
            if "remove-cell" not in tags:
                tags.append("remove-cell")
            hidden += 1
    return hidden


def scorecard_inputs(out_dir: Path, scale: str) -> list[Path]:
    """What the scorecard reads besides code: every chapter's claims, the seed-stability table."""
    stability = REPO / "results" / "stability" / scale / "stability.csv"
    return sorted(out_dir.glob("*/claims.csv")) + [stability, stability.with_suffix(".json")]


def _stamp_path(out_dir: Path, stem: str) -> Path:
    return out_dir / f"{stem}.stamp.json"


def _result_files(out_dir: Path, stem: str) -> list[str]:
    folder = out_dir / stem
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def stamp_is_current(out_dir: Path, stem: str, key: str) -> bool:
    """True when ``<out>/<stem>.ipynb`` exists, its stamp holds ``key``, and the results it
    recorded are all there: the results folder ``<out>/<stem>/`` and every file listed in the
    stamp (a deleted results folder or file makes the notebook stale, not up to date). An
    unreadable stamp counts as stale."""
    if not (out_dir / f"{stem}.ipynb").is_file() or not (out_dir / stem).is_dir():
        return False
    try:
        stamp = json.loads(_stamp_path(out_dir, stem).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing, a folder, not UTF-8 or not JSON
        return False
    if not isinstance(stamp, dict) or stamp.get("key") != key:
        return False
    files = stamp.get("files", [])
    return isinstance(files, list) and all(
        isinstance(f, str) and (out_dir / stem / f).is_file() for f in files)


def run_all(notebooks: list[Path], out_dir: Path, scale: str, *, force: bool = False,
            params: dict | None = None) -> dict[str, str]:
    """Execute the named notebooks that changed, in the order given (no scheduling: the
    workflow names one per job); returns ``{stem: "ran" | "up to date"}``. A failure is raised
    after trying the remaining notebooks (so one failure does not hide another)."""
    validate_scale(scale)
    status: dict[str, str] = {}
    errors: list[str] = []
    for path in notebooks:
        extra = None
        if path.stem == SCORECARD:
            extra = scorecard_inputs(out_dir, scale)
        key = notebook_key(path, scale, params, extra)
        stamp = _stamp_path(out_dir, path.stem)
        if not force and stamp_is_current(out_dir, path.stem, key):
            status[path.stem] = "up to date"
            print(f"[notebooks] {path.stem}: up to date ({scale})", flush=True)
            continue
        # the stamp goes first: a run killed from here on leaves no stamp to be taken as done
        stamp.unlink(missing_ok=True)
        print(f"[notebooks] {path.stem}: executing at scale {scale} ...", flush=True)
        t0 = time.perf_counter()
        try:
            execute_notebook(path, out_dir, scale, params)
        except Exception as exc:  # keep going, report all failures at the end
            errors.append(f"{path.name}: {type(exc).__name__}: {str(exc)[-2000:]}")
            status[path.stem] = "failed"
            print(f"[notebooks] {path.stem}: FAILED (see {out_dir}/_failed/)", flush=True)
            continue
        wall = time.perf_counter() - t0
        if path.stem == SCORECARD:  # key on the claims as they are after the run
            key = notebook_key(path, scale, params, scorecard_inputs(out_dir, scale))
        atomic_write_json(stamp, {"key": key, "scale": scale, "wall_s": round(wall, 1),
                                  "files": _result_files(out_dir, path.stem)})
        status[path.stem] = "ran"
        print(f"[notebooks] {path.stem}: done in {wall:.1f} s", flush=True)
    if errors:
        raise RuntimeError("notebook execution failed:\n" + "\n".join(errors))
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fusionlib.compendium.runner")
    parser.add_argument("notebooks", nargs="+", type=Path,
                        help="notebooks to run, in this order (the whole book: `make book`, "
                             "which runs workflow/Snakefile)")
    parser.add_argument("--scale", default="cpu", help=f"one of {', '.join(SCALES)}")
    parser.add_argument("--out", type=Path, default=REPO / "book" / "executed")
    parser.add_argument("--force", action="store_true", help="re-run even if up to date")
    parser.add_argument("--seed", type=int, default=0,
                        help="root seed of every random stream (fusionlib.rng); default 0")
    args = parser.parse_args(argv)
    try:
        validate_scale(args.scale)
    except InvalidInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    notebooks = [p.resolve() for p in args.notebooks]
    for p in notebooks:
        if not p.is_file():
            print(f"error: notebook {p} not found", file=sys.stderr)
            return 2
    try:
        if args.seed < 0:
            raise InvalidInputError(f"--seed must be an integer >= 0, got {args.seed}")
        run_all(notebooks, args.out.resolve(), args.scale, force=args.force,
                params={"seed": args.seed})
    except InvalidInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
