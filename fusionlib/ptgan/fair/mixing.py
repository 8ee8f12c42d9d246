"""FairPTGAN (seed 001, Section 5.2, Algorithm 2, Appendix D.3): tempering *across groups*.

PTGAN's tempered variable mixes two data points at random (Algorithm 1). FairPTGAN mixes a point
of group ``A = 0`` with a point of group ``A = 1`` (Algorithm 2):
``x_check = alpha x^(0) + (1 - alpha) x^(1)`` and its mirror ``(1 - alpha) x^(0) + alpha x^(1)``,
half of the minibatch each. The generator learns every level ``alpha`` at once; at ``alpha = 1``
it reproduces the groups (an *equal* mixture of the two, whatever their sizes in the data), at
``alpha = 0.5`` every synthetic row is the midpoint of a pair across the groups, so the sensitive
attribute carries no information. One trained model yields every fairness level by varying
``alpha`` at sampling time.

:func:`group_mixed_minibatch` is Algorithm 2 as a pure, seeded function returning the same
:class:`~fusionlib.ptgan.tempering.TemperedBatch` as Algorithm 1, so the objectives of Algorithm 3
(:mod:`fusionlib.ptgan.objectives`, coherency penalty included) apply unchanged.
:class:`GroupMixing` plugs it into :class:`~fusionlib.ptgan.tabular.model.TabularPTGAN` (its
``minibatch`` hook): FairPTGAN is ``TabularPTGAN("pt+cp", overrides={"r": 0.2,
"batch_size": 200}, minibatch=GroupMixing("race", "White"))``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from fusionlib.checks import check_positive_int, check_probability
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.tempering import TemperedBatch

__all__ = ["FAIR_R", "GroupMixing", "check_groups", "group_column", "group_mixed_minibatch"]

#: r of FairPTGAN (Section 5.2: "r = 0.2 is set to encourage the generator to learn the
#: intermediate (fair) distributions more effectively")
FAIR_R = 0.2


def check_groups(n0: int, n1: int, batch_size: int) -> None:
    """Algorithm 2's requirement ``n_b / 2 < n_0, n_1`` (and an even minibatch).

    Each half of the minibatch draws ``n_b / 2`` rows from one group; the paper asks for more
    rows than that in each group so that a minibatch is not dominated by repeats of few rows.
    """
    check_positive_int("batch_size", batch_size)
    if batch_size % 2:
        raise InvalidInputError(
            f"batch_size must be even for Algorithm 2 (half the minibatch per mirror), got "
            f"{batch_size}")
    half = batch_size // 2
    small = {name: n for name, n in (("A=0", n0), ("A=1", n1)) if n <= half}
    if small:
        raise InvalidInputError(
            f"group(s) {small} have at most n_b/2 = {half} rows; Algorithm 2 needs "
            f"n_b/2 < n_0, n_1. Use a smaller batch_size (below {2 * min(n0, n1)}) or more data")


def group_mixed_minibatch(x: torch.Tensor, rows0: torch.Tensor, rows1: torch.Tensor,
                          batch_size: int, r: float, generator: torch.Generator) -> TemperedBatch:
    """Algorithm 2: a tempered minibatch that mixes rows of group 0 with rows of group 1.

    Parameters
    ----------
    x:
        (N, d) encoded training rows.
    rows0, rows1:
        (n_0,) and (n_1,) integer indices of the rows of ``x`` with ``A = 0`` and ``A = 1``.
    batch_size:
        n_b (even); ``n_b / 2`` pairs per mirror.
    r:
        Point mass of ``p_alpha`` at 1 (eq. 7).
    generator:
        Source of every random draw (rows with replacement, alpha1, alpha2, nu).

    Returns
    -------
    TemperedBatch
        ``q1 = [alpha1 x0 + (1-alpha1) x1 ; (1-alpha1) x0 + alpha1 x1]`` (n_b, d), ``q2`` likewise
        from an independent pair of rows with ``alpha2 ~ U(0, 1)``, ``q~ = nu q1 + (1-nu) q2``;
        ``alpha1``/``alpha2`` (n_b,) repeat the n_b/2 draws for the mirror half (the networks
        see ``t(alpha) = t(1 - alpha)``, so the mirror's level is the same), ``nu`` has n_b
        independent draws and ``alpha~ = nu alpha1 + (1 - nu) alpha2``. Rows are drawn with
        replacement, as this package's Algorithm 1 does.
    """
    if not isinstance(x, torch.Tensor) or x.ndim != 2:
        raise InvalidInputError(f"x must be a tensor of shape (N, d), got "
                                f"{getattr(x, 'shape', type(x).__name__)}")
    check_groups(len(rows0), len(rows1), batch_size)
    r = check_probability("r", r)
    half, dev = batch_size // 2, x.device
    i0 = rows0[torch.randint(len(rows0), (2 * half,), generator=generator, device=dev)]
    i1 = rows1[torch.randint(len(rows1), (2 * half,), generator=generator, device=dev)]
    a0, a0p = x[i0[:half]], x[i0[half:]]  # x^(0) and x'^(0)
    b1, b1p = x[i1[:half]], x[i1[half:]]  # x^(1) and x'^(1)
    u = torch.rand(3, half, generator=generator, device=dev)
    alpha1 = torch.where(u[0] < r, 1.0, u[1])  # p_alpha = r delta_1 + (1 - r) U(0, 1)
    alpha2 = u[2]
    nu = torch.rand(batch_size, generator=generator, device=dev)
    q1 = torch.cat([torch.lerp(b1, a0, alpha1.unsqueeze(1)),     # alpha1 x0 + (1-alpha1) x1
                    torch.lerp(a0, b1, alpha1.unsqueeze(1))])    # (1-alpha1) x0 + alpha1 x1
    q2 = torch.cat([torch.lerp(b1p, a0p, alpha2.unsqueeze(1)),
                    torch.lerp(a0p, b1p, alpha2.unsqueeze(1))])
    alpha1, alpha2 = alpha1.repeat(2), alpha2.repeat(2)
    return TemperedBatch(q1=q1, q2=q2, q_tilde=torch.lerp(q2, q1, nu.unsqueeze(1)),
                         alpha1=alpha1, alpha2=alpha2, nu=nu,
                         alpha_tilde=torch.lerp(alpha2, alpha1, nu))


def group_column(encoder: object, sensitive: str, privileged: object) -> int:
    """Index of the encoded one-hot column of ``sensitive == privileged`` (that is, ``A = 1``).

    The sensitive attribute must be a discrete column with exactly two levels.
    """
    spans = {s.column: s for s in getattr(encoder, "spans_", ())}
    if sensitive not in spans:
        raise InvalidInputError(
            f"unknown sensitive column {sensitive!r}; encoded columns: {sorted(spans)}")
    span = spans[sensitive]
    if span.kind != "discrete":
        raise InvalidInputError(f"the sensitive attribute {sensitive!r} must be a discrete column "
                                "(list it in discrete_columns)")
    levels = [str(v) for v in encoder.categories_[sensitive]]
    if len(levels) != 2:
        raise InvalidInputError(
            f"the sensitive attribute {sensitive!r} must be binary, it has levels {levels}; "
            "binarise it first (e.g. race -> White / Non-white)")
    if str(privileged) not in levels:
        raise InvalidInputError(f"privileged level {privileged!r} is not a level of "
                                f"{sensitive!r}; levels: {levels}")
    return span.start + levels.index(str(privileged))


class GroupMixing:
    """FairPTGAN's minibatch builder for :class:`~fusionlib.ptgan.tabular.model.TabularPTGAN`.

    ``GroupMixing(sensitive, privileged)(encoder, x)`` splits the encoded training rows ``x``
    by the sensitive attribute once and returns ``fn(x, batch_size, r, generator)`` that draws
    Algorithm 2's minibatches (``A = 1``: ``sensitive == privileged``).
    """

    def __init__(self, sensitive: str, privileged: object) -> None:
        self.sensitive, self.privileged = sensitive, privileged

    def __call__(self, encoder: object, x: np.ndarray) -> Callable[..., TemperedBatch]:
        col = group_column(encoder, self.sensitive, self.privileged)
        ones = np.asarray(x)[:, col] > 0.5
        rows = {0: torch.as_tensor(np.flatnonzero(~ones)), 1: torch.as_tensor(np.flatnonzero(ones))}
        if not len(rows[0]) or not len(rows[1]):
            raise InvalidInputError(
                f"the sensitive attribute {self.sensitive!r} has an empty group "
                f"(A=0: {len(rows[0])} rows, A=1: {len(rows[1])} rows); both groups need rows")
        on_device: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

        def group_mixed(data: torch.Tensor, batch_size: int, r: float,
                        generator: torch.Generator) -> TemperedBatch:
            key = str(data.device)
            if key not in on_device:
                on_device[key] = (rows[0].to(data.device), rows[1].to(data.device))
            r0, r1 = on_device[key]
            return group_mixed_minibatch(data, r0, r1, batch_size, r, generator)

        return group_mixed
