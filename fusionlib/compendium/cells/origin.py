"""Where results came from, and whether they recompute here.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.

:func:`bundle_origin` says where the current shards of an experiment came from: computed on this
machine, on another one (a cluster node), or installed from a bundle
(:mod:`fusionlib.compendium.cells.bundle`) made on which machine and device, and when.
:func:`verify_bundle` (``make verify-results``) recomputes a few cells installed from bundles
and compares them with the installed shards.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fusionlib.checks import check_positive_int
from fusionlib.compendium.cells.bundle import LEDGER_DIR
from fusionlib.compendium.cells.bundle_checks import MEMBER
from fusionlib.compendium.cells.model import CellsFailedError
from fusionlib.compendium.cells.registry import experiment_names, get_experiment
from fusionlib.compendium.cells.shardfile import read_shard_file, shard_device, this_machine
from fusionlib.compendium.cells.store import (
    REPO,
    SHARD_SUFFIX,
    code_key,
    load_shard,
    resolve_root,
    shard_path,
)
from fusionlib.compendium.scales import SCALES
from fusionlib.errors import InvalidInputError
from fusionlib.rng import numpy_rng

__all__ = ["GPU_RTOL", "GPU_ATOL", "installed_from_bundles", "bundle_origin", "origin_text",
           "origin_summary", "verify_bundle", "chapter_experiments", "origin_line", "paper_ahead",
           "WORKFLOW_CONFIG"]


#: a shard of a ledger: ``<experiment>/<scale>/<cell_id>.shard.json`` (a bundle member without
#: its ``cells/``)
_LEDGER_SHARD = re.compile(MEMBER.pattern.removeprefix("cells/"))


def installed_from_bundles(root: str | os.PathLike[str] | None = None
                           ) -> dict[str, dict[str, Any]]:
    """``{"<experiment>/<scale>/<cell>.shard.json": ledger entry}`` of every shard installed
    from a bundle, where the ledger entry is the bundle's ledger without its shard list."""
    folder = resolve_root(root) / LEDGER_DIR
    out: dict[str, dict[str, Any]] = {}
    ledgers = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for path in ledgers:  # a later import of the same shard wins
        try:
            ledger = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        shards = ledger.get("shards") if isinstance(ledger, dict) else None
        if not isinstance(shards, dict):
            continue  # not a ledger written by import_bundle
        info = {k: v for k, v in ledger.items() if k != "shards"}
        for rel, hashes in shards.items():
            if _LEDGER_SHARD.fullmatch(rel) and isinstance(hashes, dict):
                out[rel] = {**info, **hashes}
    return out


def bundle_origin(experiment: str, scale: str, *, seed: int = 0,
                  root: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Where the current shards of ``experiment`` at ``scale`` came from.

    Returns ``{"experiment", "scale", "cells", "present", "sources", "text"}``: ``sources``
    groups the present shards by origin (``"this machine"``, ``"machine <name>"`` or
    ``"bundle <file>"``), machine and device, with the number of cells and the first and last
    date they were computed; ``text`` is one line for a page (:func:`origin_text`).
    """
    root = resolve_root(root)
    exp = get_experiment(experiment)
    cells = exp.cells(scale, seed) if scale in exp.scales else []
    key, ledger, here = code_key(exp), installed_from_bundles(root), this_machine()
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for cell in cells:
        path = shard_path(root, exp.name, scale, cell.cell_id)
        shard = load_shard(path, key, cell, quiet=True)
        if shard is None:
            continue
        run = shard.header
        got = ledger.get(f"{exp.name}/{scale}/{path.name}")
        if got is not None and got.get("run_sha256") == run["run_sha256"]:
            origin = f"bundle {got['bundle']}"
        elif run.get("machine") == here:
            origin = "this machine"
        else:
            origin = f"machine {run.get('machine')}"
        adopted = run.get("adopted_from")
        twin = adopted.get("scale") if isinstance(adopted, dict) else None
        twin = twin if twin in SCALES else ("another scale" if adopted else "")
        groups.setdefault((origin, str(run.get("machine")), str(run.get("device")), twin),
                          []).append(str(run.get("written_utc") or "")[:10])
    sources = [{"origin": o, "machine": m, "device": d, "cells": len(dates),
                "first": min(dates), "last": max(dates), **({"adopted_from": t} if t else {})}
               for (o, m, d, t), dates in sorted(groups.items())]
    info = {"experiment": exp.name, "scale": scale, "cells": len(cells),
            "present": sum(s["cells"] for s in sources), "sources": sources}
    info["text"] = origin_text(info)
    return info


def origin_text(info: dict[str, Any]) -> str:
    """One line for a page from :func:`bundle_origin`'s result, e.g. ``"6 of 6 cells: 6
    computed on this machine (cpu: x86_64), 2025-11-25"`` or ``"60 of 60 cells: 60 from bundle
    b.tar.gz, computed on runner-3 (cuda: NVIDIA H100), 2025-11-20 to 2025-11-21"``; shards
    adopted from the same cell at another scale
    (:func:`~fusionlib.compendium.cells.shardfile.adopt_shard`) say so:
    ``"12 ... computed on m (cpu: ...), adopted from their cpu-scale twins (the same
    computation on a CPU), ..."``."""
    head = f"{info['present']} of {info['cells']} cells"
    if not info["sources"]:
        return f"{head}: none computed yet"
    parts = []
    for s in info["sources"]:
        when = s["first"] if s["first"] == s["last"] else f"{s['first']} to {s['last']}"
        where = ("computed on this machine" if s["origin"] == "this machine"
                 else f"computed on {s['machine']}" if s["origin"].startswith("machine ")
                 else f"from {s['origin']}, computed on {s['machine']}")
        twin = s.get("adopted_from")
        same = ("" if not twin else ", adopted from their twins at another scale"
                if twin not in SCALES else
                f", adopted from their {twin}-scale twins (the same computation on a CPU)")
        parts.append(f"{s['cells']} {where} ({s['device']}){same}, {when}")
    return f"{head}: " + "; ".join(parts)


def origin_summary(scale: str, *, seed: int = 0, root: str | os.PathLike[str] | None = None,
                   experiments: Sequence[str] | None = None) -> str:
    """One line for a page: where the current shards of every experiment (or of
    ``experiments``) at ``scale`` came from, e.g. ``"Results: 69 of 69 cells, 69 computed on
    this machine (cpu: ...), 2025-11-25."`` (:func:`bundle_origin`, summed over experiments)."""
    info = _summed_origin(scale, seed=seed, root=root, experiments=experiments)
    return f"Results at scale {scale}: {info['text']}."


def _summed_origin(scale: str, *, seed: int = 0, root: str | os.PathLike[str] | None = None,
                   experiments: Sequence[str] | None = None) -> dict[str, Any]:
    """:func:`bundle_origin` summed over ``experiments`` (every one when None)."""
    total, present, groups = 0, 0, {}
    for name in experiments or experiment_names():
        if scale not in get_experiment(name).scales:
            continue
        info = bundle_origin(name, scale, seed=seed, root=root)
        total, present = total + info["cells"], present + info["present"]
        for src in info["sources"]:
            key = (src["origin"], src["machine"], src["device"], src.get("adopted_from"))
            got = groups.setdefault(key, {**src, "cells": 0})
            got.update(cells=got["cells"] + src["cells"], first=min(got["first"], src["first"]),
                       last=max(got["last"], src["last"]))
    info = {"cells": total, "present": present, "sources": list(groups.values())}
    return {**info, "text": origin_text(info)}


#: the workflow's configuration: which experiments each chapter reads (absent in an installed
#: package, where a chapter then says nothing about where its numbers came from)
WORKFLOW_CONFIG = Path(__file__).resolve().parents[3] / "workflow" / "config.yaml"


def chapter_experiments(chapter: str, config: str | os.PathLike[str] | None = None) -> list[str]:
    """The experiments whose shards ``chapter`` reads (``notebooks`` in
    ``workflow/config.yaml``); empty for a chapter that reads none, or outside a checkout."""
    config = Path(config) if config is not None else WORKFLOW_CONFIG
    if not config.is_file():
        return []
    import yaml

    data = yaml.safe_load(config.read_text()) or {}
    return [str(e) for e in ((data.get("notebooks") or {}).get(chapter) or [])]


def origin_line(chapter: str, scale: str, seed: int = 0, *,
                root: str | os.PathLike[str] | None = None) -> str | None:
    """Where the numbers of ``chapter`` came from: :func:`origin_summary` over the experiments
    it reads (:func:`chapter_experiments`); None for a chapter that reads no cells."""
    names = [n for n in chapter_experiments(chapter) if n in experiment_names()]
    return origin_summary(scale, seed=seed, root=root, experiments=names) if names else None


def paper_ahead(chapter: str, seed: int = 0, *,
                root: str | os.PathLike[str] | None = None) -> str | None:
    """For a page built below the paper scale: the paper-scale cells of ``chapter`` computed so
    far (here, elsewhere or installed from a bundle) and where, which that page does not read;
    None when there are none (or the chapter reads no cells)."""
    names = [n for n in chapter_experiments(chapter) if n in experiment_names()]
    if not names:
        return None
    info = _summed_origin("paper", seed=seed, root=root, experiments=names)
    if not info["present"]:
        return None
    return (f"At the paper scale, {info['text']}: this page does not read them; the chapter "
            "built at scale `paper` does.")


# ----------------------------------------------------------------------------- verify
#: default tolerance of :func:`verify_bundle` where a GPU computed either side, or two different
#: CPUs (kernels are chosen by device and instruction set, and round differently); one CPU model
#: against itself must agree bitwise
GPU_RTOL, GPU_ATOL = 1e-3, 1e-6

#: the verdict of a cell recomputed on another CPU model whose numbers differ beyond the tolerance:
#: other kernels round differently and a long training run amplifies it into another (equally
#: valid) trajectory, so such a cell cannot confirm or refute its shard digit by digit
OTHER_CPU = "other CPU"


def _installed(root: Path, scale: str, device: str | None = None
               ) -> list[tuple[str, dict[str, Any]]]:
    """(relative shard path, ledger entry) of shards at ``scale`` installed from a bundle and
    still in place (not recomputed or replaced since), sorted; with ``device``, only those
    computed on it."""
    out = []
    for rel, info in sorted(installed_from_bundles(root).items()):
        if rel.split("/")[1:2] != [scale]:
            continue
        try:
            obj = read_shard_file((root / rel).read_bytes())
        except (OSError, ValueError):
            continue
        if obj["run_sha256"] != info.get("run_sha256"):
            continue
        if device is None or str(obj["run"].get("device")) == device:
            out.append((rel, info))
    return out


def _diff(a: Any, b: Any, rtol: float, atol: float, acc: dict[str, float]) -> bool:
    """Whether JSON values ``a`` and ``b`` agree within the tolerance; ``acc`` collects the
    largest absolute difference of numbers (``max_abs_diff``) and, as ``structure`` = 1.0, any
    difference that is not one of numbers (other keys, lengths, strings, booleans, None): no
    tolerance excuses that one."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            acc["structure"] = 1.0
            return False
        return all([_diff(a[k], b[k], rtol, atol, acc) for k in a])  # every key: max diff
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            acc["structure"] = 1.0
            return False
        return all([_diff(x, y, rtol, atol, acc) for x, y in zip(a, b, strict=True)])
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        if math.isnan(float(a)) or math.isnan(float(b)):
            if math.isnan(float(a)) and math.isnan(float(b)):
                return True
            acc["structure"] = 1.0  # a number against NaN: not a rounding difference
            return False
        gap = abs(float(a) - float(b))
        acc["max_abs_diff"] = max(acc.get("max_abs_diff", 0.0), gap)
        return gap <= atol + rtol * abs(float(b))
    if a != b:
        acc["structure"] = 1.0
        return False
    return True


def _recompute(exp: str, cell_id: str, scale: str, seed: int, python: str, tmp: Path
               ) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "FUSIONLIB_CELLS"}
    # one thread, as every workflow job (Snakemake sets these from the rule's threads: 1)
    env.update({k: "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")})
    cmd = [python, "-m", "fusionlib.compendium.cells", "run", exp, cell_id, "--scale", scale,
           "--seed", str(seed), "--root", str(tmp)]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise CellsFailedError(f"recomputing {exp}/{cell_id} failed:\n{done.stderr[-2000:]}")
    return read_shard_file(shard_path(tmp, exp, scale, cell_id).read_bytes())


def verify_bundle(scale: str, n: int = 3, *, seed: int,
                  root: str | os.PathLike[str] | None = None, rtol: float = GPU_RTOL,
                  atol: float = GPU_ATOL, python: str | None = None,
                  same_device: bool = False) -> list[dict[str, Any]]:
    """Recompute ``n`` cells drawn at random (stream ``seed``) among the shards at ``scale``
    installed from bundles, each in a one-thread process as a workflow job, and compare.

    A shard computed on this CPU model and recomputed here must be bitwise identical (equal
    result hashes). Where a GPU computed either side, every number must agree within
    ``atol + rtol * |installed|`` and everything else exactly. Where another CPU model computed
    it, agreement within that tolerance is "within tolerance", and a larger difference is
    :data:`OTHER_CPU`, not "differs": that CPU's kernels round differently and training
    amplifies it (README, "Numbers across machines"); a difference that is not one of numbers
    (rows, columns, strings, a NaN) "differs" on any device. ``same_device`` draws only among
    the shards computed on this device, the check that can confirm a shard bitwise (the device
    is the processor's model name, which does not tell every generation apart: two CPUs of one
    name but other instruction sets may round differently). Returns one record per cell:
    experiment, cell id, bundle, both devices, the comparison (``"bitwise"`` or
    ``"tolerance"``), ``verdict`` (``"identical"``, ``"within tolerance"``, ``"differs"`` or
    :data:`OTHER_CPU`) and the largest absolute difference of the numbers.
    """
    root = resolve_root(root)
    n = check_positive_int("n", n)
    here = shard_device() if same_device else None
    pool = _installed(root, scale, here)
    if not pool and here is not None and _installed(root, scale):
        raise InvalidInputError(
            f"no shard at scale {scale!r} under {root} installed from a bundle was computed on "
            f"this device ({here}); drop --same-device (SAME_DEVICE) to draw among all of them")
    if not pool:
        raise InvalidInputError(
            f"no shard at scale {scale!r} under {root} was installed from a bundle (or every "
            "one was recomputed since); import one first: make import-results BUNDLE=<file>")
    rng = numpy_rng(seed, "verify-results")
    picks = rng.choice(len(pool), min(n, len(pool)), replace=False)
    out = []
    with tempfile.TemporaryDirectory(prefix="fusionlib-verify-") as tmp:
        for i in sorted(int(i) for i in picks):
            rel, info = pool[i]
            exp, _, name = rel.split("/")
            cell_id = name.removesuffix(SHARD_SUFFIX)
            old = read_shard_file((root / rel).read_bytes())
            seed_of = info.get("seed")
            new = _recompute(exp, cell_id, scale,
                             seed_of if type(seed_of) is int and seed_of >= 0 else 0,
                             python or sys.executable, Path(tmp))
            dev_old, dev_new = str(old["run"].get("device")), str(new["run"].get("device"))
            gpu = dev_old.startswith("cuda") or dev_new.startswith("cuda")
            strict = not gpu and dev_old == dev_new
            acc: dict[str, float] = {}
            close = _diff(_comparable(old), _comparable(new), rtol, atol, acc)
            if old["result_sha256"] == new["result_sha256"]:
                verdict = "identical"
            elif not strict and close:
                verdict = "within tolerance"
            elif not strict and not gpu and not acc.get("structure"):
                verdict = OTHER_CPU  # numbers only: another kernel's rounding, amplified
            else:
                verdict = "differs"
            out.append({"experiment": exp, "cell_id": cell_id, "bundle": info.get("bundle"),
                        "device_bundle": dev_old, "device_here": dev_new,
                        "comparison": "bitwise" if strict else "tolerance", "verdict": verdict,
                        "max_abs_diff": acc.get("max_abs_diff", 0.0),
                        "seconds": new["run"].get("seconds")})
    return out


def _comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """The result part without the device named in ``meta`` (it differs by construction)."""
    result = dict(obj["result"])
    result["meta"] = {k: v for k, v in (result.get("meta") or {}).items() if k != "device"}
    return result
