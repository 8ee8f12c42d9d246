"""Metadata of a results bundle for a deposit (Zenodo, RO-Crate), read from ``CITATION.cff``.

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.
:func:`~fusionlib.compendium.cells.bundle.export_bundle` puts :func:`bundle_metadata` into the
manifest's ``metadata``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from fusionlib.compendium.cells.store import REPO

__all__ = ["CITATION", "bundle_metadata"]

#: the citation file whose title, version, licence, authors, keywords and references go into a
#: bundle's ``metadata``
CITATION = REPO / "CITATION.cff"
_RESOURCE_TYPES = {"article": "publication-article", "conference-paper":
                   "publication-conferencepaper", "book": "publication-book", "software":
                   "software", "data": "dataset", "report": "publication-report"}


def _scheme(value: str) -> str:
    low = value.lower()
    return ("doi" if low.startswith("10.") or "doi.org/" in low else "arxiv"
            if low.startswith("arxiv:") else "url" if low.startswith(("http://", "https://"))
            else "other")


def _identifiers(item: dict[str, Any]) -> list[str]:
    """Identifiers of a CITATION.cff work: its ``doi``, ``url``, ``repository-code`` and
    ``identifiers`` values."""
    found = [item.get(k) for k in ("doi", "url", "repository-code")]
    found += [i.get("value") for i in item.get("identifiers") or [] if isinstance(i, dict)]
    return [str(v) for v in found if v]


def _creator(author: Any) -> dict[str, str] | None:
    if not isinstance(author, dict):
        return None
    name = author.get("name") or ", ".join(
        str(author[k]) for k in ("family-names", "given-names") if author.get(k))
    if not name:
        return None
    out = {"name": str(name)}
    if author.get("affiliation"):
        out["affiliation"] = str(author["affiliation"])
    if author.get("orcid"):
        out["orcid"] = str(author["orcid"]).removeprefix("https://orcid.org/")
    return out


def bundle_metadata(scale: str, seed: int, commit: str, *,
                    citation: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Metadata for depositing a bundle (Zenodo's deposit fields; RO-Crate maps them): title,
    version, license, creators, keywords, description and related identifiers (the works that
    ``CITATION.cff`` references: ``references``; the software itself: ``isSupplementTo``), read
    from ``citation`` (default :data:`CITATION`) with PyYAML. Without a readable citation file
    the metadata says so (``note``) instead of failing."""
    path = Path(citation) if citation is not None else CITATION
    out: dict[str, Any] = {
        "upload_type": "dataset", "source": path.name, "scale": scale, "seed": seed,
        "commit": commit,
        "description": f"Results bundle of the compendium at scale {scale}, root seed {seed}, "
                       f"commit {commit[:12]}: one JSON shard per cell and manifest.json"}
    if not path.is_file():
        return {**out, "source": None, "note": f"no {path.name} in this checkout: title, "
                "version, licence and creators unknown; fill them in by hand when depositing"}
    import yaml

    try:
        cff = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(cff, dict):
            raise ValueError(f"a YAML {type(cff).__name__}, not a mapping")
    except (OSError, ValueError, yaml.YAMLError) as exc:
        why = " ".join(str(exc).split())[:160]
        return {**out, "note": f"{path.name} is unreadable ({type(exc).__name__}: {why}); fill "
                "the title, version, licence and creators in by hand when depositing"}
    related, seen = [], set()
    for relation, items in (("isSupplementTo", [cff]),
                            ("references", [r for r in cff.get("references") or []
                                            if isinstance(r, dict)])):
        for item in items:
            kind = _RESOURCE_TYPES.get(str(item.get("type")), "other")
            for ident in _identifiers(item):
                if ident not in seen:
                    seen.add(ident)
                    related.append({"identifier": ident, "relation": relation,
                                    "scheme": _scheme(ident), "resource_type": kind})
    licence = cff.get("license")
    title = cff.get("title") or "fusionlib compendium"
    out.update(
        title=f"{title}: results at scale {scale}, seed {seed}",
        version=None if cff.get("version") is None else str(cff["version"]),
        license=", ".join(map(str, licence)) if isinstance(licence, list) else licence,
        creators=[c for c in map(_creator, cff.get("authors") or []) if c],
        keywords=[str(k) for k in cff.get("keywords") or []],
        related_identifiers=related)
    return json.loads(json.dumps(out, default=str))  # dates of the YAML as text
