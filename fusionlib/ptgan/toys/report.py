"""Measures, claims and table helpers of the toy chapter (``notebooks/ptgan_toys.md``).

The ring runs are cells (:mod:`fusionlib.ptgan.toys.cells`, :mod:`fusionlib.ptgan.toys.runs`);
this module is read by the notebook only (it is part of no cell's code key): the bridge shares
of Figure 3, the mode count of Figure 10, the Proposition 3 and mode-coverage claims.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fusionlib.compendium.verdicts import LEVEL, Decision, Estimate, binomial
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.evidence import THEORY_MARGIN, relative_estimate

__all__ = ["off_mode", "share_gap", "n_modes", "sigma_star_note", "prop3_claim", "all_modes",
           "coverage_claim", "coverage_tolerance", "count_text"]


def off_mode(points: np.ndarray, centers: np.ndarray, radius: float) -> float:
    """Share of ``points`` (n, d) farther than ``radius`` from every row of ``centers`` (k, d)."""
    points, centers = np.asarray(points, dtype=float), np.asarray(centers, dtype=float)
    if points.ndim != 2 or centers.ndim != 2 or points.shape[1] != centers.shape[1]:
        raise InvalidInputError(f"points {points.shape} and centers {centers.shape} must be "
                                "2-d with the same number of columns")
    dist = np.linalg.norm(points[:, None, :] - centers[None], axis=2).min(axis=1)
    return float(np.mean(dist > radius))


def share_gap(a: float, b: float, n: int) -> Estimate:
    """``a - b`` of two shares, each from ``n`` independent draws, with the binomial standard
    error ``sqrt(a(1-a)/n + b(1-b)/n)``.

    Shares of 0 or 1 on both sides give a standard error of 0, which is no evidence of an exact
    value: the estimate carries the ``n`` draws and their resolution ``1 / n``, so the verdict
    rules take half of it as the standard error (:meth:`Estimate.spread`)."""
    if n < 1:
        raise InvalidInputError(f"n must be >= 1, got {n}")
    se = np.sqrt(a * (1 - a) / n + b * (1 - b) / n)
    return Estimate(a - b, float(se), int(n), resolution=1.0 / n)


def n_modes(sample, bins: int = 100, prominence: float = 0.1) -> int:
    """Modes of the histogram of ``sample`` (``bins`` bins): local maxima whose prominence is
    at least ``prominence`` times the highest bin (the histogram is padded with an empty bin on
    each side, so a maximum at an edge counts)."""
    from scipy.signal import find_peaks

    h, _ = np.histogram(sample, bins=bins)
    return len(find_peaks(np.concatenate([[0], h, [0]]), prominence=prominence * h.max())[0])


def sigma_star_note(row) -> str:
    """How far the simulation lies from the printed and the derived sigma*, in standard errors
    (``row``: a row of the Proposition 3 table, with ``sigma_star_mc``, ``sigma_star_paper``,
    ``sigma_star_derived`` and ``sigma_se``)."""
    z_paper = (row.sigma_star_mc - row.sigma_star_paper) / row.sigma_se
    z_derived = (row.sigma_star_mc - row.sigma_star_derived) / row.sigma_se
    return (f"Monte Carlo minus printed: {z_paper:+.1f} SE; minus derived 2/3 form: "
            f"{z_derived:+.1f} SE")


def prop3_claim(run, cid: str, quantity: str, closed: float, mc: float, se: float,
                kind: str = "theory", why: str = "") -> None:
    """Register a Proposition 3 claim on ``run``: Monte Carlo / closed form against 1, under the
    relative margin ``THEORY_MARGIN``."""
    run.claim(cid, "001", "Proposition 3", quantity + " (Monte Carlo / closed form)", 1.0,
              relative_estimate(mc, se, closed), kind=kind, tolerance=THEORY_MARGIN, why=why)


def all_modes(table: pd.DataFrame, method: str) -> tuple[int, int]:
    """(seeds with all modes covered, seeds) of ``method`` in a coverage table
    (:func:`fusionlib.ptgan.toys.runs.coverage_table`)."""
    rows = table.set_index("method")
    if method not in rows.index:
        raise InvalidInputError(f"method {method!r} not in the coverage table")
    row = rows.loc[method]
    return int(row.seeds_all_modes), int(row.n_seeds)


def coverage_tolerance(paper_runs: int = 10) -> float:
    """The margin of a success rate read from ``paper_runs`` runs that all went the same way:
    ``1 - 0.05 ** (1 / paper_runs)`` (0.259 for 10 runs), how far the paper's own 10 of 10 (or
    0 of 10) leaves its rate at the one-sided 95 % level."""
    if paper_runs < 1:
        raise InvalidInputError(f"paper_runs must be >= 1, got {paper_runs}")
    return float(1 - (1 - LEVEL) ** (1 / paper_runs))


def coverage_claim(run, cid: str, where: str, quantity: str, paper: str, k: int, n: int, *,
                   paper_rate: float, fail: str, reduction: str, paper_runs: int = 10,
                   kind: str = "result", produced_by_reduction: str | None = None,
                   scale: str | None = None) -> Decision:
    """Register a mode-coverage claim on ``run``: ``k`` of our ``n`` seeds against the paper's
    rate ``paper_rate`` (1: every seed covers all modes, 0: none does), decided by the exact
    binomial rule (:func:`~fusionlib.compendium.verdicts.binomial`) within
    :func:`coverage_tolerance` of ``paper_runs``. A success and a failure are decided by the
    same interval, so a few seeds leave both inconclusive; ``produced_by_reduction`` (a reason)
    makes the claim "not comparable" when the reduction of this scale alone produces the
    outcome (a plain GAN that covers few modes after a shortened run). ``fail`` and
    ``reduction`` (how our runs are smaller) make the reason. ``scale``: the scale of the runs
    counted, when not the chapter's (a cpu page reading the paper scale's cells). Returns the
    decision."""
    tol = coverage_tolerance(paper_runs)
    d = binomial(int(k), int(n), paper_rate, tolerance=tol, reason=f"{fail} ({reduction})",
                 not_comparable=produced_by_reduction)
    run.claim(cid, "001", where, quantity, paper, f"{k}/{n}", kind=kind, decision=d,
              tolerance=round(tol, 4), scale=scale)
    return d


def count_text(flags: pd.Series) -> str:
    """``"k/n"``: how many of the boolean ``flags`` are true, of how many."""
    return f"{int(flags.sum())}/{len(flags)}"
