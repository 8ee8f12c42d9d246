"""PTGAN and its competitors on images: configuration and the training step.

:class:`ImageRunConfig` is the one source of truth for an image run: dataset, method (SN, MP,
GP, PT+MP, PT+GP, PT+CP), discrepancy (JSD, PD, ND), the paper's hyperparameters (SM D.2.1:
Adam 1e-4, betas (0, 0.9), minibatch 100, ``lambda_MP = 1``, ``lambda_GP = 10``,
``lambda_CP = 100``, r = 0.9, 100k iterations; CelebA-HQ: minibatch 50, r = 0.98, 70k) and the
reductions of a scale (iterations, width, training images). :func:`gan_config` turns it into the
:class:`~fusionlib.ptgan.config.GANConfig` that :class:`~fusionlib.ptgan.step.PTGANStep` runs;
the SN competitor is the untempered step with spectral normalisation in the critic and no
penalty.

:class:`ImagePTGANStep` is :class:`~fusionlib.ptgan.step.PTGANStep` with image input checks
(shape, channels, pixel range, at least one minibatch of images) and optional mixed precision
(``torch.autocast`` in bfloat16, for GPU runners). Images are flattened to ``(N, C*H*W)`` rows, so
the tempering, penalties and the trainer work unchanged.
"""

from __future__ import annotations

import dataclasses
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch

from fusionlib.checks import check_choice, check_positive, check_positive_int, check_probability
from fusionlib.data.images import IMAGE_DATASETS, check_images
from fusionlib.errors import InvalidInputError
from fusionlib.gan.step import Batch
from fusionlib.ptgan.config import GANConfig, default_config
from fusionlib.ptgan.step import PTGANStep

__all__ = ["DISCREPANCIES", "IMAGE_METHODS", "ImagePTGANStep", "ImageRunConfig", "gan_config"]

#: the paper's discrepancy names -> the package's losses (Table 1: JSD, PD, ND)
DISCREPANCIES = {"jsd": "js", "pd": "pearson", "nd": "wasserstein"}
#: the methods of Tables 1, 2, 7 and 8
IMAGE_METHODS = ("sn", "mp", "gp", "pt+mp", "pt+gp", "pt+cp")


@dataclass(frozen=True)
class ImageRunConfig:
    """Every setting of one image run (validated on construction).

    Attributes
    ----------
    dataset: one of :data:`fusionlib.data.images.IMAGE_DATASETS`.
    method: one of :data:`IMAGE_METHODS`.
    discrepancy: ``"jsd"``, ``"pd"`` or ``"nd"``.
    n_iter: training iterations T (paper: 100k; CelebA-HQ 70k).
    batch_size: n_b (paper: 100; CelebA-HQ 50).
    penalty_weight, r: None keeps the method's paper default.
    width: channel multiplier of Tables 5/6 (1.0 = the paper).
    latent_dim: None keeps the table's (128, or 256 for CelebA-HQ).
    n_train: None uses every training image; else the first ``n_train``.
    amp: bfloat16 autocast in the training step (GPU runners).
    """

    dataset: str
    method: str
    discrepancy: str = "nd"
    n_iter: int = 100_000
    batch_size: int = 100
    penalty_weight: float | None = None
    r: float | None = None
    width: float = 1.0
    latent_dim: int | None = None
    n_train: int | None = None
    amp: bool = False

    def __post_init__(self) -> None:
        check_choice("dataset", self.dataset, tuple(IMAGE_DATASETS))
        check_choice("method", self.method, IMAGE_METHODS)
        check_choice("discrepancy", self.discrepancy, tuple(DISCREPANCIES))
        check_positive_int("n_iter", self.n_iter)
        check_positive_int("batch_size", self.batch_size)
        check_positive("width", self.width)
        if self.penalty_weight is not None:
            check_positive("penalty_weight", self.penalty_weight, allow_zero=True)
        if self.r is not None:
            check_probability("r", self.r)
        if self.latent_dim is not None:
            check_positive_int("latent_dim", self.latent_dim)
        if self.n_train is not None:
            check_positive_int("n_train", self.n_train)
        if self.method == "sn" and self.r not in (None, 1.0):
            raise InvalidInputError("the SN competitor is untempered; leave r unset")

    @property
    def channels(self) -> int:
        return IMAGE_DATASETS[self.dataset][0]

    @property
    def image_size(self) -> int:
        return IMAGE_DATASETS[self.dataset][1]

    @property
    def latent(self) -> int:
        return self.latent_dim or (256 if self.image_size == 256 else 128)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def gan_config(run: ImageRunConfig) -> GANConfig:
    """The :class:`GANConfig` of an image run (paper defaults unless overridden)."""
    common = dict(loss=DISCREPANCIES[run.discrepancy], latent_dim=run.latent,
                  batch_size=run.batch_size)
    if run.method == "sn":
        return GANConfig("sn", penalty="none", **common)
    extra = {}
    if run.penalty_weight is not None:
        extra["penalty_weight"] = float(run.penalty_weight)
    if run.r is not None:
        extra["r"] = float(run.r)
    return default_config(run.method, **common, **extra)


class ImagePTGANStep(PTGANStep):
    """:class:`PTGANStep` on images ``(N, C, H, W)`` in [-1, 1], optionally under autocast."""

    def __init__(self, config: GANConfig, generator: torch.nn.Module,
                 critic: torch.nn.Module, *, amp: bool = False) -> None:
        super().__init__(config, generator, critic)
        self.amp = bool(amp)
        self.image_shape = tuple(generator.image_shape)
        if tuple(critic.image_shape) != self.image_shape:
            raise InvalidInputError(f"generator makes {self.image_shape} images but the critic "
                                    f"takes {tuple(critic.image_shape)}")

    def signature(self) -> dict:
        return {**super().signature(), "amp": self.amp, "image_shape": list(self.image_shape)}

    def prepare(self, data: object, device: str) -> Batch:
        x = data.detach().cpu().numpy() if isinstance(data, torch.Tensor) else np.asarray(data)
        check_images(x, self.image_shape[0], self.image_shape[1])
        if len(x) < self.config.batch_size:
            raise InvalidInputError(
                f"{len(x)} images are fewer than one minibatch of {self.config.batch_size}; "
                "give more images or lower batch_size")
        flat = torch.as_tensor(x.reshape(len(x), -1), dtype=torch.float32)
        return super().prepare(flat, device)

    def generate(self, inputs) -> torch.Tensor:
        # under autocast the generator returns bfloat16; the penalties mix its output with
        # float32 data, so it is cast back (the critic's convolutions still run in bfloat16)
        return super().generate(inputs).float()

    def iteration(self, data: Batch, rng: torch.Generator,
                  optimizers: dict[str, torch.optim.Optimizer]) -> dict[str, torch.Tensor]:
        device_type = data[0].device.type
        ctx = (torch.autocast(device_type, dtype=torch.bfloat16) if self.amp
               else nullcontext())
        with ctx:
            return super().iteration(data, rng, optimizers)

    @torch.no_grad()
    def sample_images(self, n: int, rng: torch.Generator, *, alpha: float = 1.0) -> torch.Tensor:
        """``n`` images ``(n, C, H, W)`` in [-1, 1] at level ``alpha``."""
        flat = (self.sample(n, rng, alpha=alpha) if self.config.conditional
                else self.sample(n, rng))
        return flat.float().reshape(n, *self.image_shape)
