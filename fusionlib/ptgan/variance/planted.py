"""Planted faults of Proposition 5's claims (the variance chapter's theory checks).

Proposition 5 gives ``tr Cov`` of the critic's minibatch gradient under tempered minibatches in
closed form, for independent temperatures of the real and the fake rows, and SM A.3 concludes
that tempering lowers it whenever ``tr Cov X + tr Cov G >= 3 Var(alpha)``. The chapter checks
the identity (Monte Carlo / closed form within ``THEORY_MARGIN`` of 1, every instance) and the
condition (the log of the tempered/untempered ratio below 0 where the printed condition holds).
Each counts as theory only because the same rule reads otherwise where the statement is false
(``tests/ptgan/variance/test_planted.py`` asserts both sides):

- ``001-P5-identity``: the hypothesis of independent temperatures broken (Algorithm 3's shared
  temperatures in the simulation, the independent closed form): the ``Var(alpha)`` term is
  missing from the simulation and the tempered side differs.
- ``001-P5-condition``: the check's own finding. Where the exact condition holds too (modes at
  +-1.5, trace sum 2.26) the ratio is below 1 and the rule reads reproduced; at the chapter's
  counterexample (modes at +-0.6, trace sum 0.38, the printed condition met) it differs.
"""

from __future__ import annotations

import functools

import pandas as pd

from fusionlib.compendium.power import Planted, Registry
from fusionlib.compendium.verdicts import Decision, compare, direction
from fusionlib.ptgan.evidence import (
    THEORY_MARGIN,
    all_instances,
    log_ratio_estimate,
    relative_estimate,
)
from fusionlib.ptgan.variance.linear import prop5_closed_form, prop5_monte_carlo
from fusionlib.ptgan.variance.report import left_mode, two_modes

__all__ = ["REGISTRY", "PLANTED", "planted", "planted_faults", "context", "theory_ids"]

_R, _BATCHES = 0.5, 200_000


@functools.lru_cache(maxsize=4)
def _mc(mu: float, pairing: str):
    return prop5_monte_carlo(two_modes(mu), left_mode(mu), trace_cov_x=mu**2 + 0.01,
                             trace_cov_g=0.01, r=_R, n_b=10, m_b=10, n_batches=_BATCHES,
                             seed=0, pairing=pairing)


def _identity(simulated: str) -> Decision:
    """The chapter's rule, the independent closed form against a simulation with
    ``simulated`` temperatures (modes at +-1.5, r = 0.5, 200,000 minibatches)."""
    res = _mc(1.5, simulated)
    cf = prop5_closed_form(1.5**2 + 0.01, 0.01, _R, 10, 10, pairing="independent")
    parts = [compare(1.0, relative_estimate(res.mc_tempered, res.se_tempered, cf["tempered"]),
                     THEORY_MARGIN),
             compare(1.0, relative_estimate(res.mc_untempered, res.se_untempered,
                                            cf["untempered"]), THEORY_MARGIN)]
    return all_instances(parts, ["tempered", "r = 1"])


def _condition(mu: float) -> Decision:
    """The chapter's rule: the log of the tempered/untempered variance ratio below 0
    (independent temperatures, r = 0.5, modes at ``+-mu``)."""
    res = _mc(mu, "independent")
    return direction(log_ratio_estimate(res.mc_tempered, res.se_tempered, res.mc_untempered,
                                        res.se_untempered), "<0")


_ENTRIES: tuple[Planted, ...] = (
    Planted("001-P5-identity", "theory",
            "with independent temperatures of the real and the fake rows, tr Cov of the "
            "tempered gradient = (2/3 + r/3) tr Cov(untempered) + Var(alpha)(1/n_b + 1/m_b)",
            "linear critic, modes at +-1.5, generator on the left mode, r = 0.5, n_b = m_b = "
            "10, 200,000 minibatches; Monte Carlo / closed form within 1 % of 1",
            "the hypothesis broken: the simulation shares each row's temperature between real "
            "and fake rows (Algorithm 3), so the Var(alpha) term is absent and the tempered "
            "side differs",
            lambda: _identity("independent"), lambda: _identity("shared")),
    Planted("001-P5-condition", "theory",
            "tempering lowers the variance (ratio <= 1) wherever tr Cov X + tr Cov G >= "
            "3 Var(alpha)",
            "modes at +-0.6 (trace sum 0.38: the printed condition holds, the exact 1/2 + 3r/2 "
            "does not), independent temperatures",
            "the check's own finding: at modes +-0.6 the ratio exceeds 1 and the rule differs; "
            "where the exact condition holds as well (modes at +-1.5, trace sum 2.26, r = 0.5) "
            "it reads reproduced",
            lambda: _condition(1.5), lambda: _condition(0.6)),
)

#: the chapter's registry: its entries and their lookups
REGISTRY: Registry = Registry(_ENTRIES)
#: every Proposition 5 theory claim id -> its entry
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
