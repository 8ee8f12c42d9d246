"""Tables, claims and summary phrases of the gradient-variance chapter
(``notebooks/ptgan_variance.md``).

The chapter's training runs are cells (:mod:`fusionlib.ptgan.variance.cells`); what this module
holds is read by the notebook only: the Proposition 5 Monte Carlo table and its identity claims,
and the phrases of the chapter's closing summary. Nothing here is part of a cell's code key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from fusionlib.compendium.verdicts import Decision, compare
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.evidence import THEORY_MARGIN, all_instances, relative_estimate
from fusionlib.ptgan.variance.collapse import sample_two_modes
from fusionlib.ptgan.variance.linear import Prop5Result, prop5_monte_carlo
from fusionlib.rng import seed_int

__all__ = ["two_modes", "left_mode", "prop5_table", "identity_claim", "span", "sd_phrase",
           "said"]

Sampler = Callable[[int, torch.Generator], torch.Tensor]


def two_modes(mu: float, sd: float = 0.1) -> Sampler:
    """A sampler ``(n, generator) -> (n, 1)`` of ``N(-mu, sd^2)/2 + N(mu, sd^2)/2``."""
    return lambda n, g: sample_two_modes(n, mu, sd, g)


def left_mode(mu: float, sd: float = 0.1) -> Sampler:
    """A sampler ``(n, generator) -> (n, 1)`` of the left mode ``N(-mu, sd^2)`` alone (a
    generator collapsed on it)."""
    return lambda n, g: -mu + sd * torch.randn(n, 1, generator=g)


def prop5_table(mu: float, rs: Sequence[float], pairings: Sequence[str], seed0: int,
                n_batches: int) -> tuple[pd.DataFrame, list[Prop5Result]]:
    """Proposition 5's closed form against Monte Carlo on the two-mode toy (modes at ``±mu``,
    sd 0.1, the generator collapsed on the left mode, ``n_b = m_b = 10``).

    Parameters
    ----------
    mu : float
        Distance of each mode from 0.
    rs : sequence of float
        The values of ``r``; every ``r`` is run for every pairing.
    pairings : sequence of str
        ``"independent"`` and/or ``"shared"`` temperatures.
    seed0 : int
        Root seed; the ``k``-th (pairing, r) uses ``seed_int(seed0, "prop5", k)``.
    n_batches : int
        Independent minibatches per (pairing, r).

    Returns
    -------
    (pandas.DataFrame, list of Prop5Result)
        One row per (pairing, r), pairings outermost, and the results in the same order.
    """
    rows, results = [], []
    for k, (r, pairing) in enumerate([(r, p) for p in pairings for r in rs]):
        res = prop5_monte_carlo(two_modes(mu), left_mode(mu), trace_cov_x=mu**2 + 0.01,
                                trace_cov_g=0.01, r=r, n_b=10, m_b=10, n_batches=n_batches,
                                seed=seed_int(seed0, "prop5", k), pairing=pairing)
        results.append(res)
        rows.append({"pairing": pairing, "r": r,
                     "closed form (tempered)": res.cf_tempered,
                     "Monte Carlo (tempered)": res.mc_tempered, "SE": res.se_tempered,
                     "z": res.z_tempered,
                     "closed form (r = 1)": res.cf_untempered,
                     "Monte Carlo (r = 1)": res.mc_untempered, "z (r = 1)": res.z_untempered})
    return pd.DataFrame(rows), results


def identity_claim(run, cid: str, results: Sequence[Prop5Result], pairing: str, kind: str,
                   n_batches: int) -> Decision:
    """Register claim ``cid``: every Monte Carlo trace of ``pairing`` (both sides, tempered and
    ``r = 1``) divided by its closed form is within ``THEORY_MARGIN`` of 1.

    ``run`` is the chapter's :class:`~fusionlib.compendium.run.Run`; returns the combined
    decision. Raises :class:`~fusionlib.errors.InvalidInputError` when no result has that
    pairing.
    """
    rows = [r for r in results if r.pairing == pairing]
    if not rows:
        raise InvalidInputError(f"no Proposition 5 result with pairing {pairing!r}")
    decisions, labels = [], []
    for res in rows:
        for side, cf, mc, se in (("tempered", res.cf_tempered, res.mc_tempered, res.se_tempered),
                                 ("r = 1", res.cf_untempered, res.mc_untempered,
                                  res.se_untempered)):
            decisions.append(compare(1.0, relative_estimate(mc, se, cf), THEORY_MARGIN))
            labels.append(f"r = {res.r:g}, {side}")
    d = all_instances(decisions, labels)
    worst = max(abs(x.gap) for x in decisions)
    run.claim(cid, "001", "Proposition 5",
              f"Monte Carlo / closed form of tr Cov of the minibatch gradient, {pairing} "
              f"temperatures, r in {{{', '.join(f'{r.r:g}' for r in rows)}}}, both sides "
              f"(linear critic, 2-mode toy, {n_batches:,} minibatches each), within "
              f"{THEORY_MARGIN:.0%} of 1", "identity (exact)",
              f"largest |ratio - 1|: {worst:.2%}", kind=kind, decision=d,
              tolerance=THEORY_MARGIN)
    return d


def span(values, fmt: str = ".2f") -> str:
    """``"lo to hi"`` of ``values`` (NaN ignored) in format ``fmt``; one number when both
    round to the same text."""
    v = np.asarray(values, dtype=float)
    lo, hi = f"{np.nanmin(v):{fmt}}", f"{np.nanmax(v):{fmt}}"
    return lo if lo == hi else f"{lo} to {hi}"


def sd_phrase(late_w: pd.DataFrame, sig: float) -> str:
    """How the across-run spread of late log W1 at noise level ``sig`` compares with
    ``sigma = 0`` (``late_w``: one row per sigma, one column per run)."""
    if late_w.shape[1] < 2:
        return "with a single run, so no spread to compare"
    ratio = float(late_w.loc[sig].std() / late_w.loc[0.0].std())
    more = "more" if ratio > 1 else "no more"
    return f"with {more} spread across runs (sd of late log W1 {ratio:.2f} times that at sigma = 0)"


def said(claims: pd.DataFrame, cid: str) -> str:
    """The verdict of claim ``cid`` in ``claims`` (a run's claims table), as the summary states
    it (in italics)."""
    verdicts = claims.set_index("claim_id")["verdict"]
    if cid not in verdicts.index:
        raise InvalidInputError(f"no claim {cid!r} registered")
    return f"*{verdicts[cid]}*"
