"""The records of the grid of cells: :class:`Cell`, :class:`Shard`, :class:`Experiment`.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`, which re-exports everything
public): these modules store results and are left out of every code key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from fusionlib.checks import check_seed
from fusionlib.compendium.scales import SCALES, validate_scale
from fusionlib.errors import FusionlibError, InvalidInputError

__all__ = ["Cell", "Shard", "Experiment", "CellsFailedError", "CellsMissingError",
           "StaleShardWarning", "canonical_json"]

_NAME = re.compile(r"[a-z][a-z0-9_]*")
_SLUG_BAD = re.compile(r"[^a-z0-9]+")
_ID_HASH_LEN = 12

class CellsFailedError(FusionlibError, RuntimeError):
    """One or more cells raised; ``failures`` lists ``(cell_id, traceback file)``."""

    def __init__(self, message: str, failures: Sequence[tuple[str, Path]] = ()) -> None:
        super().__init__(message)
        self.failures = list(failures)


class CellsMissingError(FusionlibError, LookupError):
    """Shards are missing and computing them was not allowed (``compute_missing=False``)."""


class StaleShardWarning(UserWarning):
    """A shard file was found but cannot be used (unreadable, truncated or stale code key)."""


# ----------------------------------------------------------------------------- canonical JSON
def _canonical(obj: Any) -> str:
    """Canonical JSON (sorted keys, no spaces, finite numbers only) of ``obj``."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                          allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"a cell configuration must be JSON-able with finite numbers (dicts, lists, str, "
            f"int, float, bool, None); {exc}. Convert tuples/arrays to lists and drop objects"
        ) from exc


def _slug(text: str, limit: int = 40) -> str:
    text = text.lower()
    return _SLUG_BAD.sub("-", text).strip("-")[:limit].strip("-") or "cell"



canonical_json = _canonical


# ----------------------------------------------------------------------------- cells
@dataclasses.dataclass(frozen=True, eq=True)
class Cell:
    """One unit of work: ``compute(cell)`` depends on nothing else.

    Parameters
    ----------
    experiment:
        Name of the experiment (lower case, digits and ``_``).
    config:
        JSON-able dict (stored in its canonical JSON round-trip form: tuples become lists).
    seed:
        Integer >= 0 from which ``compute`` derives every random stream.
    label:
        Human-readable part of :attr:`cell_id` (e.g. ``"pt+cp rep 3"``); it does not enter the
        hash, which is taken over (experiment, config, seed).
    """

    experiment: str
    config: dict
    seed: int
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.experiment, str) or not _NAME.fullmatch(self.experiment):
            raise InvalidInputError(
                f"experiment names are lower case letters, digits and '_' starting with a "
                f"letter; got {self.experiment!r}")
        if not isinstance(self.config, dict):
            raise InvalidInputError(f"a cell's config must be a dict, got {self.config!r}")
        object.__setattr__(self, "seed", check_seed("a cell's seed", self.seed))
        object.__setattr__(self, "config", json.loads(_canonical(self.config)))

    def __hash__(self) -> int:
        return hash(self.cell_id)

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the canonical JSON of (experiment, config, seed)."""
        text = _canonical({"experiment": self.experiment, "config": self.config,
                           "seed": self.seed})
        return hashlib.sha256(text.encode("ascii")).hexdigest()

    @property
    def cell_id(self) -> str:
        """``<slug of label>-<12 hex digits>``: short, stable across processes and machines
        (hashlib, not :func:`hash`), and safe as a file name."""
        return f"{_slug(self.label)}-{self.digest[:_ID_HASH_LEN]}"

    def to_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "cell_id": self.cell_id, "label": self.label,
                "seed": self.seed, "config": self.config}


@dataclasses.dataclass
class Shard:
    """The result of one cell.

    ``rows`` is a tidy frame; ``figures`` is JSON-able data for figures (numpy arrays are
    written as lists and read back as lists); ``meta`` is free-form JSON-able information
    (e.g. the device used). A *provisional* shard records a result that depends on something
    outside the code key (e.g. "dataset not on this machine"): it is written, so that a
    workflow job has its output, but every later run recomputes it instead of reading it.
    ``header`` is filled when a shard is read from disk.
    """

    rows: pd.DataFrame
    figures: dict = dataclasses.field(default_factory=dict)
    meta: dict = dataclasses.field(default_factory=dict)
    provisional: bool = False
    header: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.rows, pd.DataFrame):
            raise InvalidInputError(
                f"a shard's rows must be a pandas DataFrame, got {type(self.rows).__name__}")
        if self.figures is None:
            self.figures = {}
        if not isinstance(self.figures, dict) or not isinstance(self.meta, dict):
            raise InvalidInputError("a shard's figures and meta must be dicts")


# ----------------------------------------------------------------------------- experiments
@dataclasses.dataclass(frozen=True)
class Experiment:
    """A grid of cells and the function that computes one.

    Parameters
    ----------
    name:
        Registry name, also the folder of its shards.
    grid:
        ``grid(scale, seed) -> list[Cell]``: the cells at ``scale`` for root seed ``seed``.
    compute:
        ``compute(cell) -> Shard``, a pure function of the cell.
    modules:
        Dotted names of the modules holding the experiment's code (default: the module of
        ``compute``). Their source and every ``fusionlib`` module they import make the code key.
    scales:
        Scales the experiment has cells for (default: all).
    description:
        One line shown by ``list``.
    """

    name: str
    grid: Callable[[str, int], list[Cell]]
    compute: Callable[[Cell], Shard]
    modules: tuple[str, ...] = ()
    scales: tuple[str, ...] = SCALES
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise InvalidInputError(
                f"experiment names are lower case letters, digits and '_'; got {self.name!r}")
        if not callable(self.grid) or not callable(self.compute):
            raise InvalidInputError(f"experiment {self.name!r}: grid and compute must be callable")
        modules = tuple(self.modules) or (self.compute.__module__,)
        object.__setattr__(self, "modules", modules)
        for s in self.scales:
            validate_scale(s)

    def check_scale(self, scale: object) -> str:
        validate_scale(scale)
        if scale not in self.scales:
            raise InvalidInputError(
                f"experiment {self.name!r} has no cells at scale {scale!r}; allowed values are "
                f"{', '.join(self.scales)}")
        return str(scale)

    def cells(self, scale: str, seed: int = 0) -> list[Cell]:
        """The cells at ``scale`` for root seed ``seed`` (validated: unique ids, right name)."""
        self.check_scale(scale)
        seed = check_seed("the root seed", seed)
        cells = list(self.grid(scale, seed))
        seen: dict[str, Cell] = {}
        for c in cells:
            if not isinstance(c, Cell) or c.experiment != self.name:
                raise InvalidInputError(
                    f"experiment {self.name!r}: grid() returned {c!r}, not a Cell of this "
                    "experiment")
            if c.cell_id in seen:
                raise InvalidInputError(
                    f"experiment {self.name!r}: two cells share the id {c.cell_id} (same "
                    "config and seed); make each cell's config distinct")
            seen[c.cell_id] = c
        return cells
