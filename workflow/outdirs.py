"""Output folders of the workflow: never the checkout's sources, data or results.

``workflow/Snakefile`` checks its output folder settings (config ``executed``: where the
executed chapters go) with :func:`check_output_folder` before anything runs. A folder is
refused, with one line naming the key, the value and the fix, when it is outside the checkout
(absolute, or with ``..``) or when it is, contains or sits inside one of :data:`PROTECTED`:
the checkout itself, the package, the notebooks, the book's sources, the data, the shards, the
tests, the workflow (``executed=.`` made each chapter's job write over the checkout's folders:
the ``data`` chapter replaced ``data/``). :data:`ALLOWED` are the exceptions inside a protected
folder (``book/executed``, the default). Symbolic links are resolved first.

Standard library only: Snakemake's interpreter (``.venv/workflow``) imports it.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

#: folders of the checkout (relative to its root; "." is the root itself) that no output folder
#: may be, contain or sit inside
PROTECTED: tuple[str, ...] = (".", "fusionlib", "notebooks", "book", "data", "results/cells",
                              "tests", "workflow", "tools", "benchmarks", ".git", ".github",
                              ".venv")
#: output folders allowed although inside a protected folder (they and what is under them)
ALLOWED: tuple[str, ...] = ("book/executed",)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def check_output_folder(repo: str | Path, key: str, value: str) -> str:
    """``value`` (a folder relative to ``repo``, the checkout's root) without a trailing
    ``/`` if config ``key`` may name it as an output folder; else :class:`ValueError` with one
    line naming the key, the value, the folder it collides with and the fix."""
    text = str(value).strip().rstrip("/") or "."
    fix = ("give a folder of its own inside the checkout, e.g. results/stability/cpu/seed-1 "
           "(default book/executed)")
    rel = PurePosixPath(text)
    if rel.is_absolute() or ".." in rel.parts or "\\" in text:
        raise ValueError(f"config {key}={value!r} must be a folder inside the checkout, given "
                         f"relative to it without '..': {fix}")
    top = Path(repo).resolve()
    path = (top / text).resolve()
    if not _inside(path, top):
        raise ValueError(f"config {key}={value!r} leads outside the checkout (to {path}, "
                         f"through a symbolic link): {fix}")
    for allowed in ALLOWED:
        if _inside(path, (top / allowed).resolve()):
            return text
    for name in PROTECTED:
        folder = (top / name).resolve()
        what = "the checkout itself" if name == "." else f"the checkout's {name}/"
        if path == folder or (name != "." and _inside(path, folder)):
            where = "is" if path == folder else "sits inside"
            raise ValueError(f"config {key}={value!r} {where} {what}, whose files the jobs "
                             f"would overwrite: {fix}")
        if _inside(folder, path):
            raise ValueError(f"config {key}={value!r} contains {what}, whose files the jobs "
                             f"would overwrite: {fix}")
    return text
