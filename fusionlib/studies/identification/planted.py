"""Planted faults of section G's claims (the identification chapter's theory checks).

Both claims compare a method's cross-source correlation ``corr(y, z)`` with a target under the
chapter's margin of 0.05 (``compare``; the second combines designs (b) and (c) with
``all_instances``). Each counts as theory only because the same rule reads otherwise where the
statement is false; this module builds both sides from the study's own methods on its own
designs (``cells._fit_continuous``: an oracle sample of the truth and NND hot-deck matching;
no FusionGAN training, so the test runs in seconds):

- ``000-G-matching-is-cia`` (matching lands on the CIA value ``rho_xy rho_xz`` in design (b)):
  reproduced for NND matching; the fault breaks the hypothesis that ``y`` and ``z`` are never
  observed together (a method that sees them on the same records, the oracle): it lands on the
  truth -0.10, not the CIA value 0.36, differs.
- ``000-G-no-CIA-recovers-truth`` (a method learns the true ``corr(y, z)`` in designs (b) and
  (c)): the rule reads reproduced for a method that sees ``y`` and ``z`` together (the oracle)
  and differs for a method whose answer is set by an assumption (CIA matching), which is all
  that two sources that never observe ``y`` and ``z`` together allow. The chapter's verdict
  for FusionGAN is of that second kind wherever it learned.

``tests/studies/identification/test_planted.py`` asserts both sides.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from fusionlib.compendium.power import Planted, Registry
from fusionlib.compendium.verdicts import Decision, Estimate, compare
from fusionlib.ptgan.evidence import all_instances
from fusionlib.rng import child
from fusionlib.studies.identification.cells import _fit_continuous
from fusionlib.studies.identification.data import DESIGNS, make_sources, population_values

__all__ = ["REGISTRY", "PLANTED", "planted", "planted_faults", "context", "theory_ids", "MARGIN"]

#: the chapter's margin on a correlation
MARGIN: float = 0.05
_N, _SEEDS = 2_000, 4


@functools.lru_cache(maxsize=8)
def _rho(design: str, method: str) -> Estimate:
    """Mean and se over seeds of ``corr(y, z)`` of ``method`` (``"oracle"`` or
    ``"hotdeck_nnd"``) on ``design``'s sources (2,000 rows each, 4 seeds)."""
    d = DESIGNS[design]
    out = []
    for i in range(_SEEDS):
        seed = child(0, "identification-planted", i)
        table = _fit_continuous(method, make_sources(d, _N, child(seed, "sources")),
                                {"n_eval": _N}, seed, d)
        out.append(float(table["y"].corr(table["z"])))
    return Estimate.from_sample(np.array(out))


def _matching_is_cia(method: str) -> Decision:
    cia = population_values(DESIGNS["a_cia_holds"])["rho_cia"]
    return compare(float(cia), _rho("b_cia_fails", method), MARGIN)


def _recovers_truth(method: str) -> Decision:
    names = ("b_cia_fails", "c_no_information")
    parts = [compare(float(population_values(DESIGNS[n])["rho_truth"]), _rho(n, method), MARGIN)
             for n in names]
    return all_instances(parts, [DESIGNS[n].label for n in names])


_ENTRIES: tuple[Planted, ...] = (
    Planted("000-G-matching-is-cia", "theory",
            "statistical matching, which only sees the overlap x, gives corr(y, z) = rho_xy "
            "rho_xz (the CIA value) whatever the truth",
            "design (b): rho_xy = rho_xz = 0.6, truth -0.10, CIA value 0.36; NND hot-deck on "
            "2,000 rows per source, 4 seeds",
            "the hypothesis broken: a method that observes y and z on the same records (an "
            "oracle sample of the truth) lands on -0.10, not on the CIA value, differs",
            lambda: _matching_is_cia("hotdeck_nnd"), lambda: _matching_is_cia("oracle")),
    Planted("000-G-no-CIA-recovers-truth", "theory",
            "a method that makes no CIA learns the true corr(y, z) across sources",
            "designs (b) and (c) (truths -0.10 and 0.70), 2,000 rows per source, 4 seeds",
            "the statement on a method that cannot recover what the sources do not identify: "
            "CIA matching lands on 0.36 and 0 and differs, where a method that sees y and z "
            "together (the oracle) reads reproduced; FusionGAN sees the same two sources as "
            "matching",
            lambda: _recovers_truth("oracle"), lambda: _recovers_truth("hotdeck_nnd")),
)

#: the chapter's registry: its entries and their lookups
REGISTRY: Registry = Registry(_ENTRIES)
#: every section G theory claim id -> its entry
PLANTED: dict[str, Planted] = REGISTRY.by_id


def planted(claim_id: str) -> Planted:
    """The entry of ``claim_id`` (an error naming the known ids when absent)."""
    return REGISTRY.get(claim_id)


def theory_ids() -> list[str]:
    """The claim ids counted as theory (each with a planted fault)."""
    return REGISTRY.theory_ids()


def context(claim_id: str) -> str:
    """Hypothesis, instance and planted fault of ``claim_id``, for its reason."""
    return REGISTRY.context(claim_id)


def planted_faults() -> pd.DataFrame:
    """One row per claim: ``claim_id``, ``kind``, ``hypothesis``, ``instance``, ``fault``."""
    return REGISTRY.table()
