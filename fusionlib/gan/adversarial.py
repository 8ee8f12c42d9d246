"""One-critic GAN training steps: plain GAN, WGAN-GP and the Lipschitz GAN (max penalty).

:class:`AdversarialStep` is the iteration every one-critic method shares (Algorithm 3 of PTGAN
with r = 1): draw a minibatch and noise, run the generator once, take ``n_critic`` critic steps
on the same fake points, then one generator step with the critic frozen. A subclass changes how
inputs are drawn and which objectives are minimised (PTGAN's tempering does,
:class:`fusionlib.ptgan.step.PTGANStep`), never the loop.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from fusionlib.checks import check_choice, check_matrix, check_positive, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.gan.losses import LOSSES, critic_loss, generator_loss
from fusionlib.gan.networks import eval_mode
from fusionlib.gan.noise import NOISE_DISTRIBUTIONS, base_noise
from fusionlib.gan.penalties import gradient_penalty, max_penalty, random_interpolates
from fusionlib.gan.step import Batch, OptimizerSpec, TrainingStep

__all__ = ["AdversarialConfig", "AdversarialInputs", "AdversarialStep", "STEP_DEFAULTS",
           "adversarial_config"]


@dataclass(frozen=True)
class AdversarialConfig:
    """Hyperparameters of a one-critic GAN step (validated on construction).

    ``penalty`` is ``"none"``, ``"mp"`` (Lipschitz GAN: lambda max ||grad D||^2 at random
    interpolates) or ``"gp"`` (WGAN-GP: lambda E(||grad D|| - 1)^2).
    """

    loss: str = "wasserstein"
    penalty: str = "none"
    penalty_weight: float = 0.0
    latent_dim: int = 4
    batch_size: int = 100
    n_critic: int = 1
    lr_d: float = 1e-4
    lr_g: float = 1e-4
    betas: tuple[float, float] = (0.0, 0.9)
    noise: str = "uniform"

    def __post_init__(self) -> None:
        check_choice("loss", self.loss, LOSSES)
        check_choice("penalty", self.penalty, ("none", "mp", "gp"))
        check_choice("noise", self.noise, NOISE_DISTRIBUTIONS)
        for name in ("latent_dim", "batch_size", "n_critic"):
            check_positive_int(name, getattr(self, name))
        check_positive("penalty_weight", self.penalty_weight, allow_zero=True)
        check_positive("lr_d", self.lr_d)
        check_positive("lr_g", self.lr_g)

    def to_dict(self) -> dict:
        """Plain-dict form (provenance, checkpoints)."""
        return dataclasses.asdict(self)


#: The published settings of the one-critic baselines. WGAN-GP (Gulrajani et al. 2017, Alg. 1):
#: lambda 10, five critic steps, Adam(1e-4, betas (0, 0.9)); Lipschitz GAN max penalty: lambda 1.
STEP_DEFAULTS: dict[str, AdversarialConfig] = {
    "plain": AdversarialConfig(loss="js"),
    "wgan-gp": AdversarialConfig(penalty="gp", penalty_weight=10.0, n_critic=5),
    "mp": AdversarialConfig(penalty="mp", penalty_weight=1.0),
}


def adversarial_config(method: str, **overrides: object) -> AdversarialConfig:
    """The published defaults of ``method`` (``plain``, ``wgan-gp``, ``mp``) with overrides."""
    check_choice("method", method, tuple(STEP_DEFAULTS))
    fields = {f.name for f in dataclasses.fields(AdversarialConfig)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise InvalidInputError(f"unknown option(s) {unknown}; allowed: {sorted(fields)}")
    return dataclasses.replace(STEP_DEFAULTS[method], **overrides)


@dataclass(frozen=True)
class AdversarialInputs:
    """The random inputs of one iteration: real rows (n, d) and generator noise (n, latent)."""

    real: torch.Tensor
    z: torch.Tensor


class AdversarialStep(TrainingStep):
    """A generator/critic pair trained by one critic loss and one generator loss.

    Parameters
    ----------
    config:
        An :class:`AdversarialConfig` (or a richer config with the same fields).
    generator, critic:
        Modules that only define ``forward`` (see :mod:`fusionlib.gan.networks`).
    """

    name = "gan"

    def __init__(self, config, generator: torch.nn.Module, critic: torch.nn.Module) -> None:
        self.config, self.generator, self.critic = config, generator, critic
        self.name = getattr(config, "method", type(self).name)

    def modules(self) -> dict[str, torch.nn.Module]:
        return {"generator": self.generator, "critic": self.critic}

    def optimizers(self) -> dict[str, OptimizerSpec]:
        cfg = self.config
        return {"generator": OptimizerSpec(("generator",), cfg.lr_g, tuple(cfg.betas)),
                "critic": OptimizerSpec(("critic",), cfg.lr_d, tuple(cfg.betas))}

    def signature(self) -> dict:
        return {"config": self.config.to_dict(), "generator": repr(self.generator),
                "critic": repr(self.critic)}

    # ------------------------------------------------------------------ data
    def prepare(self, data: object, device: str) -> Batch:
        x = torch.as_tensor(data, dtype=torch.float32) if not isinstance(data, torch.Tensor) \
            else data.float()
        check_matrix("data", x)
        self._check_width(x.shape[1])
        latent = getattr(self.generator, "latent_dim", self.config.latent_dim)
        if latent != self.config.latent_dim:
            raise InvalidInputError(
                f"generator latent_dim {latent} != config latent_dim {self.config.latent_dim}")
        return (x.to(device),)

    def _check_width(self, d: int) -> None:
        for name, net, attr in (("critic", self.critic, "in_dim"),
                                ("generator", self.generator, "out_dim")):
            width = getattr(net, attr, None)
            if width is not None and width != d:
                raise InvalidInputError(
                    f"the data have {d} columns but the {name} was built for {width}; build the "
                    "networks with data_dim equal to the number of encoded columns")

    # ------------------------------------------------------------------ one iteration
    def draw_inputs(self, data: torch.Tensor, rng: torch.Generator) -> AdversarialInputs:
        """A uniform minibatch (with replacement) of data rows and generator noise."""
        n, cfg = self.config.batch_size, self.config
        real = data[torch.randint(data.shape[0], (n,), generator=rng, device=data.device)]
        z = base_noise((n, cfg.latent_dim), cfg.noise, rng, data.device)
        return AdversarialInputs(real=real, z=z)

    def generate(self, inputs) -> torch.Tensor:
        """The generator's output for this iteration's inputs."""
        return self.generator(inputs.z)

    def critic_objective(self, fake: torch.Tensor, inputs, rng: torch.Generator
                         ) -> tuple[torch.Tensor, dict]:
        """Critic loss plus lambda times the penalty, and its detached parts."""
        cfg, real = self.config, inputs.real
        scores = self.critic(torch.cat([real, fake]))
        loss = critic_loss(scores[: len(real)], scores[len(real):], cfg.loss)
        if cfg.penalty == "none":
            penalty = torch.zeros((), device=real.device)
        else:
            fn = max_penalty if cfg.penalty == "mp" else gradient_penalty
            penalty = fn(self.critic, random_interpolates(real, fake, rng), None)
        return loss + cfg.penalty_weight * penalty, {"d_loss": loss.detach(),
                                                     "penalty": penalty.detach()}

    def generator_objective(self, fake: torch.Tensor, inputs) -> torch.Tensor:
        """Generator loss from generator outputs ``fake`` with their graph."""
        return generator_loss(self.critic(fake), self.config.loss)

    def iteration(self, data: Batch, rng: torch.Generator,
                  optimizers: dict[str, torch.optim.Optimizer]) -> dict[str, torch.Tensor]:
        inputs = self.draw_inputs(data[0], rng)
        # the critic steps and the generator step are evaluated at the same G^(t) and z
        # (Algorithm 3), so one generator forward pass serves both
        fake = self.generate(inputs)
        opt_d, opt_g = optimizers["critic"], optimizers["generator"]
        for _ in range(self.config.n_critic):
            d_total, parts = self.critic_objective(fake.detach(), inputs, rng)
            opt_d.zero_grad(set_to_none=True)
            d_total.backward()
            opt_d.step()
        self.critic.requires_grad_(False)  # no critic weight-gradients in the generator step
        try:
            g_loss = self.generator_objective(fake, inputs)
            opt_g.zero_grad(set_to_none=True)
            g_loss.backward()
            opt_g.step()
        finally:
            self.critic.requires_grad_(True)
        return {"d_loss": parts["d_loss"], "g_loss": g_loss.detach(),
                "penalty": parts["penalty"]}

    # ------------------------------------------------------------------ sampling
    @torch.no_grad()
    def sample(self, n: int, rng: torch.Generator, **options: object) -> torch.Tensor:
        """``n`` generator outputs in eval mode (batch-norm running statistics)."""
        if options:
            raise InvalidInputError(f"unknown sample option(s) {sorted(options)}")
        device = next(self.generator.parameters()).device
        z = base_noise((n, self.config.latent_dim), self.config.noise, rng, device)
        return self._eval(lambda: self.generator(z))

    def _eval(self, fn):
        with eval_mode(self.generator):
            return fn()
