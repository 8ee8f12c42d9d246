"""The registry of experiments, and the discovery of the modules that fill it.

Paper packages register their experiments when imported (:func:`register`). This module never
imports them statically (the compendium sits below the papers, see ``tests/test_layers.py``):
:func:`experiment_modules` finds them by walking the files of the ``fusionlib`` package, with
no import, and :func:`load_experiments` imports them by name on first use. A registering module
is any module of ``fusionlib`` whose last dotted name is ``cells`` or ends with ``_cells``
(``fusionlib.ptgan.toys.cells``, ``fusionlib.ptgan.variance.cells``, ...), outside
``fusionlib.compendium``; ``FUSIONLIB_CELL_MODULES`` (comma-separated dotted names) adds
others, e.g. a module of tests or of a user's own package.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from pathlib import Path

from fusionlib.compendium.cells.model import Experiment
from fusionlib.errors import InvalidInputError

__all__ = ["EXPERIMENTS", "ENV_MODULES", "experiment_modules", "register", "load_experiments",
           "experiment_names", "get_experiment"]

PACKAGE = Path(__file__).resolve().parents[2]  # the fusionlib folder
ENV_MODULES = "FUSIONLIB_CELL_MODULES"
#: packages never searched for registering modules (the machinery itself lives there)
_SKIPPED = ("compendium",)


def _is_registering(stem: str) -> bool:
    return stem == "cells" or stem.endswith("_cells")


def experiment_modules(package: str | os.PathLike[str] | None = None,
                       name: str = "fusionlib") -> list[str]:
    """Dotted names of the registering modules found under ``package`` (default: the
    ``fusionlib`` folder), sorted; then those of ``FUSIONLIB_CELL_MODULES``.

    A file counts when its stem is ``cells`` or ends with ``_cells``, every folder on its path
    is a package (has ``__init__.py``) and it lies outside ``<name>.compendium``. Nothing is
    imported to find them.
    """
    root = Path(package) if package is not None else PACKAGE
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if not _is_registering(path.stem) or rel.parts[0] in _SKIPPED:
            continue
        folders = [root.joinpath(*rel.parts[:i]) for i in range(len(rel.parts))]
        if any(not (f / "__init__.py").is_file() for f in folders) or any(
                not part.isidentifier() for part in rel.parts[:-1]):
            continue  # not importable as a module of the package (scratch folders, caches)
        found.append(".".join((name, *rel.with_suffix("").parts)))
    extra = [m.strip() for m in os.environ.get(ENV_MODULES, "").split(",") if m.strip()]
    return [*found, *(m for m in extra if m not in found)]


#: name -> experiment; filled by :func:`register` (paper packages call it on import)
EXPERIMENTS: dict[str, Experiment] = {}
_loaded = False


def register(experiment: Experiment) -> Experiment:
    """Add ``experiment`` to :data:`EXPERIMENTS` and return it.

    Registering a name again replaces the entry when it comes from the same modules (a module
    re-imported or reloaded in a notebook); a different experiment under a taken name is an
    error.
    """
    if not isinstance(experiment, Experiment):
        raise InvalidInputError(f"register() takes an Experiment, got {experiment!r}")
    old = EXPERIMENTS.get(experiment.name)
    if old is not None and old is not experiment and old.modules != experiment.modules:
        raise InvalidInputError(
            f"experiment name {experiment.name!r} is already registered by {old.modules}; "
            "choose another name")
    EXPERIMENTS[experiment.name] = experiment
    return experiment


def load_experiments(modules: Iterable[str] | None = None, *,
                     until: str | None = None) -> dict[str, Experiment]:
    """Import the registering modules (default: :func:`experiment_modules`, i.e. every
    ``cells`` / ``*_cells`` module of fusionlib plus ``FUSIONLIB_CELL_MODULES``); returns
    :data:`EXPERIMENTS`.

    With ``until``, stop as soon as that experiment is registered, trying first the modules
    whose source text names it (a cell job imports only the paper package it needs, not every
    registering module sorted before it).
    """
    global _loaded
    everything = modules is None
    names = experiment_modules() if modules is None else list(modules)
    if until is not None:  # the modules whose source names the experiment first
        names.sort(key=lambda m: not _mentions(m, until))
    for name in names:
        if until is not None and until in EXPERIMENTS:
            return EXPERIMENTS
        importlib.import_module(name)
    if everything:
        _loaded = True
    return EXPERIMENTS


def _mentions(module: str, experiment: str) -> bool:
    """Whether the source file of the fusionlib ``module`` holds the quoted name
    ``experiment`` (read as text, nothing imported); False for modules outside fusionlib."""
    parts = module.split(".")
    if parts[0] != "fusionlib":
        return False
    path = PACKAGE.joinpath(*parts[1:]).with_suffix(".py")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return f'"{experiment}"' in text or f"'{experiment}'" in text


def experiment_names() -> list[str]:
    """Registered experiment names (after loading the registering modules), sorted."""
    if not _loaded:
        load_experiments()
    return sorted(EXPERIMENTS)


def get_experiment(name: str | Experiment) -> Experiment:
    """The registered experiment ``name``; an unknown name is an error naming the known ones."""
    if isinstance(name, Experiment):
        return name
    if name not in EXPERIMENTS and not _loaded:
        load_experiments(until=name if isinstance(name, str) else None)
    if name not in EXPERIMENTS:
        raise InvalidInputError(
            f"unknown experiment {name!r}; allowed values are {', '.join(sorted(EXPERIMENTS))}")
    return EXPERIMENTS[name]
