"""The results bundles committed under bundles/ stay current: every shard they hold was computed
under this checkout's code key of its experiment.

A code key hashes an experiment's cells module and its fusionlib dependencies byte for byte
(``fusionlib.compendium.cells.store.code_key``), so an edit there (even a helper added beside
the cells) makes every committed shard of that experiment stale: ``make book`` then refuses the
bundle and the chapters lose their paper-scale numbers without any test failing. This test makes
that a conscious decision: recompute the cells (``make paper-cells ONLY=<experiment>``) and
replace the bundle, move the new code elsewhere, or list the bundle in ``KNOWN_STALE`` with the
reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fusionlib.compendium.cells import code_key
from fusionlib.compendium.cells.bundle_checks import MANIFEST, read_archive

BUNDLES = Path(__file__).resolve().parents[2] / "bundles"
#: bundle file name -> why its shards may be stale (none today)
KNOWN_STALE: dict[str, str] = {}


def _bundles() -> list[Path]:
    return sorted(BUNDLES.glob("*.tar.gz"))


def test_there_are_committed_bundles():
    assert _bundles(), f"no bundle under {BUNDLES}"


@pytest.mark.parametrize("bundle", _bundles(), ids=lambda p: p.name)
def test_committed_bundle_is_current(bundle):
    if bundle.name in KNOWN_STALE:
        pytest.skip(KNOWN_STALE[bundle.name])
    manifest = json.loads(read_archive(bundle)[MANIFEST])
    keys: dict[str, str] = {}
    stale = []
    for entry in manifest["shards"]:
        exp = entry["experiment"]
        keys.setdefault(exp, code_key(exp))
        if entry["code_key"] != keys[exp]:
            stale.append(f"{exp}/{entry['cell_id']}")
    assert not stale, (
        f"{bundle.name}: {len(stale)} of {len(manifest['shards'])} shards were computed under "
        f"another code key than this checkout's (e.g. {stale[0]}): a change to the experiment's "
        "cells module or its fusionlib dependencies made them stale. Undo it (or move new code "
        "to a module the cells do not import), recompute the cells and replace the bundle, or "
        "list the bundle in KNOWN_STALE with the reason")
