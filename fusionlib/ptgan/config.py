"""One frozen configuration per training method, with the paper's defaults.

PTGAN defaults come from seed 001 (Sohn & Song, "Parallelly tempered GANs"):
Section 4.3 / Appendix C.1 (lambda = 100, T' = 1), Section 4.1 eq. (7) (the point mass r on
alpha = 1: 0.9 or 0.99 for images and the toys, 0.5 for tabular data), Appendix C.2 (the
interpolated reference noise Z^alpha is used by default), Appendix D (Adam, learning rate 1e-4
for both networks, betas (0.0, 0.9); minibatch 100; uniform reference noise, as assumption (A3)
of Section 2.1 suggests). The baselines share the optimiser and T' so
that only the training objective differs between methods.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from fusionlib.checks import check_choice, check_positive, check_positive_int, check_probability
from fusionlib.errors import InvalidInputError
from fusionlib.gan.losses import LOSSES
from fusionlib.gan.noise import NOISE_DISTRIBUTIONS
from fusionlib.gan.penalties import PENALTIES
from fusionlib.ptgan.tempering import ALPHA_SHARES

__all__ = ["DEFAULTS", "GANConfig", "METHODS", "TABULAR_R", "default_config"]

#: r for tabular data (Section 5.1); the toys and images use 0.9 (the default below).
TABULAR_R = 0.5


@dataclass(frozen=True)
class GANConfig:
    """Every hyperparameter of one GAN training run (validated on construction).

    Attributes
    ----------
    method: label of the method (one of :data:`METHODS`, or a custom label).
    loss: critic/generator loss, one of :data:`fusionlib.gan.losses.LOSSES`.
    penalty: critic regulariser, one of :data:`fusionlib.gan.penalties.PENALTIES`.
    penalty_weight: lambda multiplying the penalty (>= 0).
    r: share of alpha = 1 in tempered minibatches (eq. 7); r = 1 and no "cp" means no tempering.
    alpha_share: ``"fixed"`` (each minibatch holds the share r of alpha = 1 rows, as Section 4.1
        and 5.1 state) or ``"per_row"`` (each row independently; see
        :func:`fusionlib.ptgan.tempering.minibatch_alpha`).
    conditional: whether both networks receive t(alpha) as an extra input.
    interpolated_noise: use Z^alpha = alpha Z1 + (1 - alpha) Z2 as generator input (App. C.2).
    noise: reference noise law, one of ``NOISE_DISTRIBUTIONS``.
    latent_dim: dimension of Z.
    batch_size: n_b = m_b.
    n_critic: T', critic steps per generator step (on the same minibatch, as in Algorithm 3).
    lr_d, lr_g, betas: Adam settings of critic and generator.
    mixup: train the critic on Mixup points with soft labels (Mixup GAN, App. A.4).
    mixup_a, mixup_b: Beta(a, b) law of the Mixup label.
    cp_mode: how the coherency penalty differentiates ("double_backward" or "jvp").
    """

    method: str
    loss: str = "wasserstein"
    penalty: str = "none"
    penalty_weight: float = 0.0
    r: float = 1.0
    alpha_share: str = "fixed"
    conditional: bool = False
    interpolated_noise: bool = False
    noise: str = "uniform"
    latent_dim: int = 4
    batch_size: int = 100
    n_critic: int = 1
    lr_d: float = 1e-4
    lr_g: float = 1e-4
    betas: tuple[float, float] = (0.0, 0.9)
    mixup: bool = False
    mixup_a: float = 0.2
    mixup_b: float = 0.2
    cp_mode: str = "double_backward"

    def __post_init__(self) -> None:
        check_choice("loss", self.loss, LOSSES)
        check_choice("penalty", self.penalty, PENALTIES)
        check_choice("noise", self.noise, NOISE_DISTRIBUTIONS)
        check_choice("cp_mode", self.cp_mode, ("double_backward", "jvp"))
        check_choice("alpha_share", self.alpha_share, ALPHA_SHARES)
        check_probability("r", self.r)
        for name in ("latent_dim", "batch_size", "n_critic"):
            check_positive_int(name, getattr(self, name))
        check_positive("penalty_weight", self.penalty_weight, allow_zero=True)
        for name in ("lr_d", "lr_g", "mixup_a", "mixup_b"):
            # a zero learning rate freezes a network, an infinite one diverges at once;
            # Beta(a, b) needs finite a, b > 0
            check_positive(name, getattr(self, name))
        if len(self.betas) != 2 or not all(0.0 <= b < 1.0 for b in self.betas):
            raise InvalidInputError(f"betas must be two numbers in [0, 1), got {self.betas}")
        self._check_consistency()

    def _check_consistency(self) -> None:
        if self.tempered and not self.conditional:
            raise InvalidInputError(
                "tempering (r < 1 or penalty 'cp') needs conditional=True so the networks see "
                "t(alpha); set conditional=True or r=1 with another penalty")
        if self.interpolated_noise and not self.conditional:
            raise InvalidInputError("interpolated_noise needs a conditional (tempered) model")
        if self.mixup and (self.loss != "js" or self.penalty != "none" or self.tempered):
            raise InvalidInputError(
                "Mixup GAN uses the soft-label 'js' loss, no penalty and r = 1; "
                "set loss='js', penalty='none', r=1.0")
        if self.mixup and self.conditional:
            raise InvalidInputError(
                "Mixup GAN has no temperature input (its critic sees mixed points without "
                "t(alpha)); set conditional=False")

    @property
    def tempered(self) -> bool:
        """Whether minibatches are built by Algorithm 1 (r < 1 or the coherency penalty)."""
        return self.r < 1.0 or self.penalty == "cp"

    def to_dict(self) -> dict:
        """Plain-dict form (for provenance and checkpoints)."""
        return dataclasses.asdict(self)


#: the methods with paper defaults in DEFAULTS
METHODS = ("plain", "mp", "gp", "wgan-gp", "pt+mp", "pt+gp", "pt+cp", "mixup")

DEFAULTS: dict[str, GANConfig] = {
    # standard GAN (Goodfellow et al. 2014), non-saturating generator: the "plain" training
    # that collapses in Figure 1 (an unpenalised Wasserstein critic would be unbounded)
    "plain": GANConfig("plain", loss="js"),
    # Lipschitz GAN max penalty; lambda_MP = 1 as in the paper's tables (Section 5.1)
    "mp": GANConfig("mp", penalty="mp", penalty_weight=1.0),
    # WGAN-GP with its paper's lambda = 10 (Gulrajani et al. 2017), under PTGAN's shared
    # settings (one critic step, Adam betas (0, 0.9)) so that only the objective differs
    "gp": GANConfig("gp", penalty="gp", penalty_weight=10.0),
    # WGAN-GP with its own published settings (Gulrajani et al. 2017, Algorithm 1): five critic
    # steps per generator step (n_critic = 5), Adam lr 1e-4, betas (0, 0.9), lambda = 10
    "wgan-gp": GANConfig("wgan-gp", penalty="gp", penalty_weight=10.0, n_critic=5),
    # tempering with the baselines' penalties instead of the coherency penalty (Section 5.1)
    "pt+mp": GANConfig("pt+mp", penalty="mp", penalty_weight=1.0, r=0.9, conditional=True,
                       interpolated_noise=True),
    "pt+gp": GANConfig("pt+gp", penalty="gp", penalty_weight=10.0, r=0.9, conditional=True,
                       interpolated_noise=True),
    # PTGAN: Algorithm 3 with lambda = 100 (Section 4.3), r = 0.9 (toys/images), Z^alpha (C.2)
    "pt+cp": GANConfig("pt+cp", penalty="cp", penalty_weight=100.0, r=0.9, conditional=True,
                       interpolated_noise=True),
    # Mixup GAN (Zhang et al. 2018, Section 3.5; PTGAN Appendix A.4): Beta(0.2, 0.2) labels
    "mixup": GANConfig("mixup", loss="js", mixup=True, mixup_a=0.2, mixup_b=0.2),
}


def default_config(method: str, **overrides: object) -> GANConfig:
    """The defaults of ``method`` with ``overrides`` applied (unknown fields are rejected).

    Examples
    --------
    >>> default_config("pt+cp", r=TABULAR_R, latent_dim=16).penalty_weight
    100.0
    """
    check_choice("method", method, METHODS)
    fields = {f.name for f in dataclasses.fields(GANConfig)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise InvalidInputError(
            f"unknown option(s) {unknown}; allowed: {', '.join(sorted(fields - {'method'}))}")
    return dataclasses.replace(DEFAULTS[method], **overrides)
