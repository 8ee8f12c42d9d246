"""Rates of PTGAN's Section 4.4 on problems where the error can be computed: Theorems 2 and 3.

Theorem 2 / Lemmas 9 and 10 (an upper bound of order ``n_e^(-1/2)``). Take as the target the
uniform law ``p`` on a fixed pool of ``N`` tempered points ``(Q^alpha, t(alpha))`` of the ring
(bounded, so (A3) holds with ``B_X`` the pool's largest norm). When the generator class can
reproduce a sample (so that the approximation error is 0 and the empirical minimiser is the
empirical measure ``p_n`` itself), the estimation error of Theorem 2 is ``d_D(p, p_n)``. It is
computed by maximising ``E_p D - E_{p_n} D`` over the critic class of (A1) -- bias-free ReLU
networks with ``||W_l||_F <= M_w(l)`` -- by projected gradient ascent
(:func:`class_supremum`); the result is a value of a network of the class, so it is a lower
estimate of the supremum. The empirical Rademacher complexity of the class (Lemma 10) is
estimated the same way. Both also get a *certified upper* value: every network of the class is
``prod M_w``-Lipschitz with ``D(0) = 0``, so the supremum is at most ``prod M_w`` times the
optimal transport value of :func:`~fusionlib.ptgan.theory.distances.lipschitz_sup` (for the
estimation error, ``prod M_w W1(p, p_n)``). A bound is certified when the upper value is below
it and refuted when the lower value is above it; in between the check cannot decide.

Theorem 3 (a minimax lower bound of the same order). Its proof's hypotheses are 4-point laws
``p_u`` (u = 0, 1, 2) on ``{(q1, 1), (-q1, 1), (q1, 0), (-q1, 0)}``; for an estimator
(:func:`theorem3_probabilities` uses the empirical measure) the witness network ``D^dagger`` of
the proof gives ``d_D(p_u, p_hat) >= |E_{p_u} D^dagger - E_{p_hat} D^dagger|``, so the
probability that this witness value reaches ``C_LB / sqrt(n_e)`` is a lower estimate of the
probability in (11). Besides the empirical measure, :func:`theorem3_probabilities` takes the
three estimators that ignore the data and answer one hypothesis (``"p0"``, ``"p1"``, ``"p2"``):
the statement is about *every* estimator, and ``p1`` (the middle hypothesis) is the one the
proof's construction barely defeats, so a ``C_LB`` more than twice the proof's fails on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from fusionlib.checks import check_positive_int, check_probability
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.theory.distances import lipschitz_sup
from fusionlib.rng import numpy_rng, torch_generator

__all__ = ["BallClass", "class_supremum", "class_supremum_upper", "class_witness",
           "golowich_constant",
           "theorem2_bound", "lemma10_bound", "theorem3_constants", "theorem3_probabilities",
           "THEOREM3_ESTIMATORS", "fano_constant", "kl_hypotheses", "tempered_pool",
           "theorem2_trace"]


@dataclass(frozen=True)
class BallClass:
    """The critic class of (A1)-(A4): bias-free ReLU networks ``in_dim -> hidden -> 1`` with
    ``||W_l||_F <= radius`` for every layer (``prod M_w = radius ** depth``)."""

    in_dim: int
    hidden: tuple[int, ...] = (32, 32)
    radius: float = 1.0

    @property
    def depth(self) -> int:
        """``d``, the number of weight matrices."""
        return len(self.hidden) + 1

    @property
    def norm_product(self) -> float:
        """``prod_l M_w(l)`` (times ``prod K = 1`` for ReLU)."""
        return float(self.radius ** self.depth)


def _score(weights: list[torch.Tensor], u: torch.Tensor, radius: float) -> torch.Tensor:
    # W_l = radius V_l / ||V_l||_F: every layer on the boundary of its ball, where the supremum
    # of a positively homogeneous network's linear functional lies
    a = u
    for i, v in enumerate(weights):
        a = a @ (radius * v / torch.linalg.norm(v)).T
        if i < len(weights) - 1:
            a = torch.relu(a)
    return a[:, 0]


def class_supremum(cls: BallClass, points: np.ndarray, coef: np.ndarray, seed: object, *,
                   steps: int = 200, restarts: int = 2, lr: float = 0.02) -> float:
    """``max_D sum_i coef_i D(points_i)`` over :class:`BallClass` by gradient ascent.

    Every layer is kept on its ball's boundary (``W_l = M V_l / ||V_l||_F``; for ReLU networks
    the functional is maximised there). The class is symmetric (``-D`` is in it), so the value
    is also ``sup |.|``. Returns the best value reached over ``restarts`` random starts: the
    value of a network of the class, a lower estimate of the supremum.
    """
    check_positive_int("steps", steps)
    check_positive_int("restarts", restarts)
    u = torch.as_tensor(np.asarray(points, dtype=np.float64))
    c = torch.as_tensor(np.asarray(coef, dtype=np.float64))
    if u.ndim != 2 or u.shape[1] != cls.in_dim or c.shape != (u.shape[0],):
        raise InvalidInputError(f"points must be (n, {cls.in_dim}) and coef (n,), got "
                                f"{tuple(u.shape)} and {tuple(c.shape)}")
    widths = (cls.in_dim, *cls.hidden, 1)
    best = 0.0
    for k in range(restarts):
        g = torch_generator(seed, "restart", k)
        vs = [torch.randn(o, i, generator=g, dtype=torch.float64).requires_grad_(True)
              for i, o in zip(widths[:-1], widths[1:], strict=True)]
        opt = torch.optim.Adam(vs, lr=lr)
        for _ in range(steps):
            value = (c * _score(vs, u, cls.radius)).sum().abs()
            best = max(best, float(value.detach()))
            opt.zero_grad()
            (-value).backward()
            opt.step()
        with torch.no_grad():
            best = max(best, float((c * _score(vs, u, cls.radius)).sum().abs()))
    return best


def class_witness(cls: BallClass, points: np.ndarray, coef: np.ndarray, *,
                  directions: int = 32, seed: int = 0) -> float:
    """A lower value of ``sup_D |sum_i coef_i D(points_i)|`` over :class:`BallClass` without an
    optimiser: the single-path networks ``prod M_w relu(e . u)`` (first row ``M_w(1) e``, then
    single weights ``M_w(l)``; every layer on its ball's boundary) for unit ``e`` among the axes,
    their negatives and ``directions`` random ones."""
    u = np.asarray(points, dtype=np.float64)
    c = np.asarray(coef, dtype=np.float64)
    k = u.shape[1]
    r = np.random.default_rng(seed).normal(size=(directions, k))
    e = np.vstack([np.eye(k), -np.eye(k), r / np.linalg.norm(r, axis=1, keepdims=True)])
    return cls.norm_product * float(np.abs(np.maximum(u @ e.T, 0.0).T @ c).max())


def class_supremum_upper(cls: BallClass, points: np.ndarray, coef: np.ndarray) -> float:
    """A certified upper value of ``sup_D |sum_i coef_i D(points_i)|`` over :class:`BallClass`:
    every network of the class is ``prod M_w``-Lipschitz (ReLU, (A2)) with ``D(0) = 0``
    (bias-free), so the supremum is at most ``prod M_w`` times
    :func:`~fusionlib.ptgan.theory.distances.lipschitz_sup` (a transport cost, the same for
    ``-coef``: the class is symmetric)."""
    u = np.asarray(points, dtype=np.float64)
    c = np.asarray(coef, dtype=np.float64)
    if u.ndim != 2 or u.shape[1] != cls.in_dim or c.shape != (u.shape[0],):
        raise InvalidInputError(f"points must be (n, {cls.in_dim}) and coef (n,), got "
                                f"{u.shape} and {c.shape}")
    return cls.norm_product * lipschitz_sup(u, c)


def golowich_constant(depth: int) -> float:
    """``sqrt(2 d log 2) + 1`` of Golowich et al. (2018), which Lemma 10 replaces by
    ``sqrt(3 d)``."""
    check_positive_int("depth", depth)
    return math.sqrt(2 * depth * math.log(2)) + 1.0


def lemma10_bound(cls: BallClass, b_input: float, n: int, *, simplified: bool = True) -> float:
    """Lemma 10's bound on ``R(D)``: ``b prod M sqrt(3 d) / sqrt(n)`` (``simplified``), or with
    Golowich's ``sqrt(2 d log 2) + 1``; ``b`` bounds ``||[Q, alpha]||`` (``sqrt(B_X^2 + 1)``)."""
    c = math.sqrt(3 * cls.depth) if simplified else golowich_constant(cls.depth)
    return b_input * cls.norm_product * c / math.sqrt(n)


def theorem2_bound(cls: BallClass, b_input: float, n_e: int, eta: float = 0.05) -> float:
    """Theorem 2's right side ``C_UB sqrt(B_X^2 + 1) / sqrt(n_e)`` with
    ``C_UB = prod M prod K (4 sqrt(3 d) + 2 sqrt(log(1/eta)))`` (probability ``1 - 2 eta``)."""
    check_probability("eta", eta)
    c_ub = cls.norm_product * (4 * math.sqrt(3 * cls.depth) + 2 * math.sqrt(math.log(1 / eta)))
    return c_ub * b_input / math.sqrt(n_e)


# ----------------------------------------------------------------------------- Theorem 3
def theorem3_constants(b_x: float = 1.0, radius: float = 1.0, depth: int = 3) -> dict:
    """The witness ``D^dagger`` of SM B.8 (ReLU, ``M_w(l) = radius``) on the four support
    points, ``C_LB`` as the proof derives it (``log 2 |c(C^2) + c(B^2) - c(1-B^2) - c(-B^2)| /
    160``) and as Theorem 3 prints it (all four terms added)."""
    c_x = math.sqrt(b_x**2 + 1)

    def c(x: float) -> float:
        return radius**depth * max(x / c_x, 0.0)  # M_w(d) k(... k(M_w(1) x / C_X))

    values = {"q1,1": c(c_x**2), "-q1,1": c(1 - b_x**2), "q1,0": c(b_x**2), "-q1,0": c(-b_x**2)}
    proof = abs(values["q1,1"] + values["q1,0"] - values["-q1,1"] - values["-q1,0"])
    printed = abs(sum(values.values()))
    return {"witness": values, "c_lb_proof": math.log(2) * proof / 160,
            "c_lb_printed": math.log(2) * printed / 160}


def _hypothesis(u: int, n: int) -> np.ndarray:
    delta = math.log(2) / (80 * math.sqrt(n))
    # order of points: (q1,1), (-q1,1), (q1,0), (-q1,0)
    return np.array([0.25 - u * delta, 0.25 + u * delta, 0.25 - u * delta, 0.25 + u * delta])


def kl_hypotheses(n: int) -> dict:
    """``n KL(p_u || p_0)`` for u = 1, 2 and the proof's bound ``80 n delta^2``."""
    p0 = _hypothesis(0, n)
    kl = {u: float(n * np.sum(_hypothesis(u, n) * np.log(_hypothesis(u, n) / p0)))
          for u in (1, 2)}
    delta = math.log(2) / (80 * math.sqrt(n))
    return {"n_kl_1": kl[1], "n_kl_2": kl[2], "half_sum": 0.5 * (kl[1] + kl[2]),
            "bound": 80 * n * delta**2}


def fano_constant(kl_factor: float = 1.0) -> float:
    """The proof's final number ``sqrt(2)/(1+sqrt(2)) (39/40 - log(4)/40)``; ``kl_factor``
    multiplies the ``log(4)/40`` term (a planted fault: 2 gives 0.531, below 0.55)."""
    return math.sqrt(2) / (1 + math.sqrt(2)) * (39 / 40 - kl_factor * math.log(4) / 40)


#: the estimators :func:`theorem3_probabilities` knows: the empirical measure, and the constant
#: estimators that answer hypothesis p_0, p_1 or p_2 whatever the data
THEOREM3_ESTIMATORS: tuple[str, ...] = ("empirical", "p0", "p1", "p2")


def theorem3_probabilities(n: int, n_sim: int, seed: object, *, b_x: float = 1.0,
                           estimator: str = "empirical", c_lb_factor: float = 1.0
                           ) -> pd.DataFrame:
    """For each hypothesis ``p_u``: the probability (over ``n_sim`` samples of size ``n``) that
    the estimator's witness distance reaches ``c_lb_factor C_LB / sqrt(n)``, and the median
    witness distance. ``estimator`` is one of :data:`THEOREM3_ESTIMATORS` (a constant estimator
    gives a deterministic distance: probability 0 or 1)."""
    check_positive_int("n", n)
    if estimator not in THEOREM3_ESTIMATORS:
        raise InvalidInputError(f"estimator must be one of {THEOREM3_ESTIMATORS}, got "
                                f"{estimator!r}")
    k = theorem3_constants(b_x)
    d = np.array([k["witness"][p] for p in ("q1,1", "-q1,1", "q1,0", "-q1,0")])
    s = c_lb_factor * k["c_lb_proof"] / math.sqrt(n)
    rows = []
    for u in (0, 1, 2):
        p = _hypothesis(u, n)
        if estimator == "empirical":
            counts = numpy_rng(seed, "thm3", n, u).multinomial(n, p, size=n_sim)
            dist = np.abs((p[None, :] - counts / n) @ d)
        else:
            dist = np.full(n_sim, abs((p - _hypothesis(int(estimator[1]), n)) @ d))
        rows.append({"n": n, "u": u, "estimator": estimator, "threshold": s,
                     "prob": float((dist >= s * (1 - 1e-12)).mean()),
                     "median_distance": float(np.median(dist))})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- Theorem 2 runs
def tempered_pool(n_pool: int, seed: object, *, r: float = 0.5) -> np.ndarray:
    """``n_pool`` points ``[Q^alpha, t(alpha)]`` (n_pool, 3) from the 8-Gaussian ring, with
    ``alpha ~ r delta_1 + (1 - r) U(0, 1)`` (eq. 7): the support of the target ``p``."""
    from fusionlib.ptgan.toys.data import sample_ring

    rng = numpy_rng(seed, "pool")
    x = sample_ring(2 * n_pool, seed)
    alpha = np.where(rng.random(n_pool) < r, 1.0, rng.random(n_pool))
    q = alpha[:, None] * x[:n_pool] + (1 - alpha[:, None]) * x[n_pool:]
    return np.column_stack([q, 1.0 - 2.0 * np.abs(alpha - 0.5)])


def theorem2_trace(cls: BallClass, pool: np.ndarray, sizes, reps: int, seed: object, *,
                   steps: int = 300, eta: float = 0.05, shift: float = 0.0,
                   restarts: int = 2) -> pd.DataFrame:
    """Estimation error ``d_D(p, p_n)`` and empirical Rademacher complexity for each sample size.

    ``p`` is the uniform law on ``pool``; ``p_n`` the empirical law of ``n`` draws from it.
    Returns one row per (n, rep) with ``error`` (the better of gradient ascent and the
    single-path witnesses of :func:`class_witness`: a lower value; ``steps = 0``: the witnesses
    alone) and
    ``error_upper`` (:func:`class_supremum_upper`: a certified upper value), ``rademacher`` and
    ``rademacher_upper`` (the same for the empirical Rademacher complexity, mean over two sign
    draws), Theorem 2's bound, and Lemma 10's bound in the printed (``sqrt(3 d)``) and Golowich
    forms. ``restarts``: random starts of the error's gradient ascent (one for the complexity's
    two sign draws). ``shift`` (a planted fault) moves every drawn point's first coordinate by
    that much: a generator class that cannot reproduce the sample, whose approximation error
    the error then keeps.
    """
    pool = np.asarray(pool, dtype=np.float64)
    b_input = float(np.linalg.norm(pool, axis=1).max())
    big_n = len(pool)
    rows = []
    for n in sizes:
        for rep in range(reps):
            rng = numpy_rng(seed, "thm2", n, rep)
            idx = rng.integers(big_n, size=n)
            if shift:
                drawn = pool[idx] + np.eye(pool.shape[1])[0] * shift
                points = np.vstack([pool, drawn])
                coef = np.concatenate([np.full(big_n, 1.0 / big_n), np.full(n, -1.0 / n)])
            else:
                points = pool
                coef = np.full(big_n, 1.0 / big_n) - np.bincount(idx, minlength=big_n) / n
            err = class_witness(cls, points, coef)
            if steps > 0:
                err = max(err, class_supremum(cls, points, coef, (seed, "err", n, rep),
                                              steps=steps, restarts=restarts))
            err_up = class_supremum_upper(cls, points, coef)
            signs = [rng.choice([-1.0, 1.0], n) / n for _ in range(2)]
            rad = np.mean([max(class_witness(cls, pool[idx], e),
                               class_supremum(cls, pool[idx], e, (seed, "rad", n, rep, k),
                                              steps=steps // 2, restarts=1)
                               if steps > 1 else 0.0)
                           for k, e in enumerate(signs)])
            rad_up = np.mean([class_supremum_upper(cls, pool[idx], e) for e in signs])
            rows.append({"n": int(n), "rep": rep, "error": err, "error_upper": err_up,
                         "rademacher": float(rad), "rademacher_upper": float(rad_up),
                         "b_input": b_input,
                         "bound_thm2": theorem2_bound(cls, b_input, n, eta),
                         "bound_l10_printed": lemma10_bound(cls, b_input, n),
                         "bound_l10_golowich": lemma10_bound(cls, b_input, n,
                                                             simplified=False)})
    return pd.DataFrame(rows)
