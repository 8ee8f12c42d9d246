"""Seed 002's Algorithm 1 (EM for the latent naive Bayes) as printed, beside our implementation.

The chapter checks :class:`~fusionlib.fairtest.estimators.latent_nb.LatentNaiveBayes` against the
algorithm *as the paper prints it* on a small instance worked by hand, step by step: every
E-step output ``q1(t)``, ``q2(t)`` and every M-step output ``theta(t)`` of the first iterations.

- :func:`em_as_printed` is Algorithm 1 written literally, with loops over rows and latent
  states: the E-steps (34) and (35) from ``theta(t-1)``, then the M-steps of Appendix A.3.3
  (``pi``), A.3.4 (``p1``, ``p2``, ``p4``) and A.3.5 (``p3``). It shares no code with the
  estimator. One misprint is read, not copied: the update of ``p2`` sums over ``n = 1..N2``
  with ``q1``, but ``x2`` is a column of ``D1``, so the sum runs over ``D1``'s ``N1`` rows.
- :func:`em_implementation_trace` runs the estimator's own E- and M-steps
  (``LatentNaiveBayes._posteriors``, ``_e_step``, ``_m_step``) from the same ``theta(0)`` and
  records the same quantities, mapping its grouped rows back to the input rows.
- :func:`compare_traces` gives the largest absolute difference of each quantity per iteration.

Notation: ``D1`` holds ``(x1, x2, x3)`` (the internal table, ``x3`` the overlap), ``D2`` holds
``(x3, x4)`` (the external table). ``theta`` is a dict: ``"pi"`` (K,) and ``"p1"``..``"p4"``,
each of shape (M_i, K) with ``p_i[m, k] = p(X_i = m | Z = k)``; values are integer codes.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.estimators import LatentNaiveBayes
from fusionlib.fairtest.estimators.validation import validate_pair

__all__ = ["HAND_INSTANCE", "em_as_printed", "em_implementation_trace", "compare_traces"]

#: the chapter's hand-worked instance: five D1 rows, four D2 rows, binary variables, K = 2
HAND_INSTANCE: dict[str, object] = {
    "D1": [(0, 0, 0), (0, 1, 0), (1, 1, 1), (1, 0, 1), (0, 0, 1)],
    "D2": [(0, 0), (1, 1), (1, 0), (0, 1)],
    "theta0": {"pi": [0.6, 0.4], "p1": [[0.7, 0.2], [0.3, 0.8]],
               "p2": [[0.6, 0.3], [0.4, 0.7]], "p3": [[0.8, 0.4], [0.2, 0.6]],
               "p4": [[0.5, 0.1], [0.5, 0.9]]},
}


def _theta(theta: dict) -> dict[str, np.ndarray]:
    out = {k: np.array(v, dtype=float) for k, v in theta.items()}
    if set(out) != {"pi", "p1", "p2", "p3", "p4"}:
        raise InvalidInputError(f"theta needs pi and p1..p4, got {sorted(out)}")
    return out


def em_as_printed(d1: list[tuple[int, int, int]], d2: list[tuple[int, int]], theta0: dict,
                  n_iter: int) -> list[dict]:
    """Algorithm 1, literally. One dict per iteration ``t = 1..n_iter``: ``q1`` (N1, K),
    ``q2`` (N2, K), ``theta`` (theta(t)) and ``loglik`` (log p(D1) + log p(D2) at theta(t-1))."""
    th = _theta(theta0)
    k_states, n1, n2 = len(th["pi"]), len(d1), len(d2)
    steps = []
    for _ in range(n_iter):
        pi, p1, p2, p3, p4 = (th[k] for k in ("pi", "p1", "p2", "p3", "p4"))
        q1, q2, loglik = np.zeros((n1, k_states)), np.zeros((n2, k_states)), 0.0
        for n, (x1, x2, x3) in enumerate(d1):  # E-step 1, eq. (34)
            joint = [p1[x1, k] * p2[x2, k] * p3[x3, k] * pi[k] for k in range(k_states)]
            loglik += math.log(sum(joint))
            for k in range(k_states):
                q1[n, k] = joint[k] / sum(joint)
        for n, (x3, x4) in enumerate(d2):  # E-step 2, eq. (35)
            joint = [p3[x3, k] * p4[x4, k] * pi[k] for k in range(k_states)]
            loglik += math.log(sum(joint))
            for k in range(k_states):
                q2[n, k] = joint[k] / sum(joint)
        new = {"pi": np.zeros(k_states)}
        for c in range(k_states):  # A.3.3
            new["pi"][c] = (q1[:, c].sum() + q2[:, c].sum()) / (n1 + n2)
        for name, rows, col, q in (("p1", d1, 0, q1), ("p2", d1, 1, q1), ("p4", d2, 1, q2)):
            table = np.zeros_like(th[name])  # A.3.4 (p2 over D1's rows, see the module)
            for m in range(table.shape[0]):
                for c in range(k_states):
                    num = sum(q[n, c] for n, row in enumerate(rows) if row[col] == m)
                    den = sum(q[n, c] for n in range(len(rows)))
                    table[m, c] = num / den
            new[name] = table
        new["p3"] = np.zeros_like(p3)
        for m in range(p3.shape[0]):  # A.3.5: soft counts of x3 from both tables
            for c in range(k_states):
                num = (sum(q1[n, c] for n, row in enumerate(d1) if row[2] == m)
                       + sum(q2[n, c] for n, row in enumerate(d2) if row[0] == m))
                new["p3"][m, c] = num / (q1[:, c].sum() + q2[:, c].sum())
        th = new
        steps.append({"q1": q1, "q2": q2, "theta": {k: v.copy() for k, v in th.items()},
                      "loglik": loglik})
    return steps


def _tables(d1: list, d2: list) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The instance as the estimator's (internal, external) tables of string codes."""
    internal = pd.DataFrame(d1, columns=["x1", "x2", "x3"]).astype(str)
    external = pd.DataFrame(d2, columns=["x3", "x4"]).astype(str)
    return internal, external


def em_implementation_trace(d1: list, d2: list, theta0: dict, n_iter: int) -> list[dict]:
    """The estimator's E- and M-steps from ``theta0``, recorded like :func:`em_as_printed`."""
    th = _theta(theta0)
    internal, external = _tables(d1, d2)
    model = LatentNaiveBayes(n_latent=len(th["pi"]), max_iter=n_iter, n_restarts=1)
    pair = validate_pair(internal, external)
    model.columns_ = list(pair.columns)  # x1, x2, x3, x4: the internal table first
    tables = model._prepare(pair)
    for name, col in (("p1", "x1"), ("p2", "x2"), ("p3", "x3"), ("p4", "x4")):
        codes = [int(v) for v in pair.categories[col]]
        if codes != list(range(len(th[name]))):
            raise InvalidInputError(f"every value of {col} must occur in the instance")
    log_pi = np.log(th["pi"])
    log_theta = np.log(np.vstack([th[f"p{i}"] for i in range(1, 5)]))
    n_rows = sum(t.w.sum() for t in tables)
    steps = []
    for _ in range(n_iter):
        q = [model._posteriors(t, log_pi, log_theta)[1][t.inverse] for t in tables]
        loglik, counts, z_counts = model._e_step(tables, log_pi, log_theta)
        log_pi, log_theta = model._m_step(counts, z_counts, n_rows)
        split = np.cumsum(model._sizes)[:-1]
        blocks = np.split(np.exp(log_theta), split)
        steps.append({"q1": q[0], "q2": q[1], "loglik": loglik,
                      "theta": {"pi": np.exp(log_pi),
                                **{f"p{i + 1}": b for i, b in enumerate(blocks)}}})
    return steps


def compare_traces(printed: list[dict], implemented: list[dict]) -> pd.DataFrame:
    """Largest absolute difference per iteration and quantity (q1, q2, pi, p1..p4, loglik)."""
    rows = []
    for t, (a, b) in enumerate(zip(printed, implemented, strict=True), start=1):
        for name in ("q1", "q2"):
            rows.append({"t": t, "quantity": name, "max_abs_diff": float(
                np.abs(a[name] - b[name]).max())})
        for name in ("pi", "p1", "p2", "p3", "p4"):
            rows.append({"t": t, "quantity": name, "max_abs_diff": float(
                np.abs(a["theta"][name] - b["theta"][name]).max())})
        rows.append({"t": t, "quantity": "loglik",
                     "max_abs_diff": abs(a["loglik"] - b["loglik"])})
    return pd.DataFrame(rows)
