"""The one training loop of the package: it runs any :class:`~fusionlib.gan.step.TrainingStep`.

The trainer owns the loop, the optimisers, callbacks, the progress bar, checkpoints with a bitwise
resume, torch threads, the device, and the stop at the first non-finite loss; a method only
supplies its step.

Determinism: every random draw of training comes from one :class:`torch.Generator` on the stream
``rng.torch_generator(seed, "train")``; its state is checkpointed with the modules and optimisers,
so on CPU a resumed run is bitwise identical to an uninterrupted one.

Stacked steps (R repetitions as one model, :mod:`fusionlib.gan.stacked`; they have ``n_reps``)
get a :class:`~fusionlib.gan.stacked.GeneratorBank`: repetition r draws from
``rng.torch_generator(seed[r], "train")`` (one seed gives ``child(seed, "rep", r)``). Their
losses have shape (R,): a repetition whose loss turns non-finite is recorded in ``diverged_``
(index: iteration) and the others train on; training stops only when every one has diverged.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import logging
import math
import os
import pickle
import time
import zipfile
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path

import torch
from tqdm import tqdm

from fusionlib import rng as rng_mod
from fusionlib.checks import (
    check_device,
    check_nonneg_int,
    check_positive_int,
    memory_error_as_input_error,
)
from fusionlib.errors import InvalidInputError, NotFittedError, TrainingDivergedError
from fusionlib.gan.stacked import GeneratorBank
from fusionlib.gan.step import Batch, TrainingStep
from fusionlib.io import atomic_write

__all__ = ["Trainer", "Callback", "torch_threads", "PROGRESS_SECONDS"]

logger = logging.getLogger(__name__)
#: seconds between two progress lines of a training run in the log (``logging``, level INFO):
#: a long cell on a cluster is never silent for long. ``FUSIONLIB_PROGRESS_SECONDS`` overrides
PROGRESS_SECONDS = 60.0


class _ProgressLog:
    """Progress lines at a steady interval: iteration, last losses, elapsed, time left."""

    def __init__(self, name: str, start: int, total: int) -> None:
        env = os.environ.get("FUSIONLIB_PROGRESS_SECONDS", "")
        self.every = float(env) if env.replace(".", "", 1).isdigit() else PROGRESS_SECONDS
        self.name, self.start, self.total = name, start, total
        self.t0 = self.last = time.monotonic()

    def update(self, iteration: int, losses: dict[str, float], *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.every:
            return
        self.last = now
        done, elapsed = iteration - self.start, now - self.t0
        left = elapsed / done * (self.total - iteration) if done > 0 else float("nan")
        shown = " ".join(f"{k}={_loss_text(v)}" for k, v in losses.items())
        logger.info("%s: iteration %d/%d (%.1f%%), losses %s, elapsed %s, about %s left",
                    self.name, iteration, self.total, 100.0 * iteration / self.total,
                    shown or "-", _clock(elapsed), _clock(left))


def _loss_text(value: object) -> str:
    """A loss for a progress line: one number, or the mean over repetitions of a stacked step."""
    if isinstance(value, (list, tuple)):
        finite = [float(v) for v in value if math.isfinite(float(v))]
        mean = sum(finite) / len(finite) if finite else float("nan")
        return f"{mean:.4g} (mean of {len(value)})"
    return f"{float(value):.4g}"


def _clock(seconds: float) -> str:
    return str(_dt.timedelta(seconds=round(seconds))) if math.isfinite(seconds) else "?"

Callback = Callable[["Trainer", int], None]
_FORMAT = 2


@contextmanager
def torch_threads(n: int | None, *, cpu_only: bool = False):
    """Run with ``n`` torch intra-op threads, restoring the previous number afterwards.

    ``n=None`` leaves the number as it is; with ``cpu_only`` it is also left as it is when a
    CUDA device is present (small networks run fastest on one CPU thread, which is the reason
    the experiments' cells ask for one).
    """
    previous = torch.get_num_threads()
    if n is not None and not (cpu_only and torch.cuda.is_available()):
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _fingerprint(data: Batch) -> str:
    h = hashlib.sha256()
    for t in data:
        h.update(str(tuple(t.shape)).encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def _plain(seed: object) -> object:
    if isinstance(seed, list):
        return [_plain(s) for s in seed]
    return list(seed) if isinstance(seed, tuple) else seed


def _reps(step: TrainingStep) -> int | None:
    """The number of repetitions of a stacked step, None for an unstacked one."""
    return getattr(step, "n_reps", None)


class Trainer:
    """Trains a :class:`~fusionlib.gan.step.TrainingStep`.

    Parameters
    ----------
    step:
        The method (its modules, one iteration, sampling).
    seed:
        Root of every random draw in training (an int, or a tuple from :func:`fusionlib.rng.child`);
        for a stacked step, the list of its R repetitions' seeds (or one seed, whose children
        ``(seed, "rep", r)`` are used).
    device:
        Torch device string; bitwise reproducibility is guaranteed on CPU only.
    n_threads:
        Torch intra-op threads during ``fit``; 1 is fastest for small MLPs on a CPU
        (``benchmarks/bench_ptgan.py``); None keeps the current setting.
    checkpoint_path, checkpoint_every:
        Save an atomic checkpoint every ``checkpoint_every`` iterations and at the end; ``fit``
        resumes from an existing checkpoint and refuses one made with other settings.
    log_every:
        Record losses in ``history_`` every ``log_every`` iterations (0: never).
    progress:
        Show a progress bar (interactive use). Whatever its value, ``fit`` also logs a progress
        line (iteration, last losses, elapsed, estimated time left) every
        :data:`PROGRESS_SECONDS` to the logger ``fusionlib.gan.trainer`` at level INFO, and one
        at the end: the log of a long job on a cluster says where it is.
    """

    def __init__(self, step: TrainingStep, *, seed: object, device: str = "cpu",
                 n_threads: int | None = 1,
                 checkpoint_path: str | os.PathLike[str] | None = None,
                 checkpoint_every: int = 0, log_every: int = 10, progress: bool = False) -> None:
        self.step, self.seed, self.device, self.n_threads = step, seed, device, n_threads
        self.checkpoint_path, self.checkpoint_every = checkpoint_path, checkpoint_every
        self.log_every, self.progress = log_every, progress

    # ------------------------------------------------------------------ setup
    def _check_settings(self) -> None:
        if not isinstance(self.step, TrainingStep):
            raise InvalidInputError(
                f"step must be a TrainingStep, got {type(self.step).__name__}")
        check_device("device", self.device)
        reps = _reps(self.step)
        if isinstance(self.seed, list):
            if reps is None or len(self.seed) != reps:
                raise InvalidInputError(
                    f"a list of {len(self.seed)} seeds needs a stacked step of as many "
                    f"repetitions (this step has {reps or 'none'}); pass one seed otherwise")
            for s in self.seed:
                rng_mod.child(s)  # validates each seed
        else:
            rng_mod.child(self.seed)  # validates the seed
        check_nonneg_int("checkpoint_every", self.checkpoint_every)
        check_nonneg_int("log_every", self.log_every)
        if self.checkpoint_every and self.checkpoint_path is None:
            raise InvalidInputError(
                "checkpoint_every > 0 needs a checkpoint_path; pass one or set checkpoint_every=0")
        if self.n_threads is not None:
            check_positive_int("n_threads", self.n_threads)

    def _setup(self, data: Batch) -> None:
        modules = self.step.modules()
        for m in modules.values():
            m.to(self.device).train()
        self.optimizers_ = {k: spec.build(modules) for k, spec in self.step.optimizers().items()}
        self.rng_ = self._stream(self.seed, "train")
        self.iteration_, self.history_, self.diverged_ = 0, [], {}
        self._data_sha = _fingerprint(data)

    def _stream(self, seed: object, key: str) -> torch.Generator | GeneratorBank:
        """The generator on ``(seed, key)``; a bank of one per repetition for a stacked step."""
        reps = _reps(self.step)
        if reps is None:
            return rng_mod.torch_generator(seed, key, device=self.device)
        seeds = seed if isinstance(seed, list) else [rng_mod.child(seed, "rep", r)
                                                     for r in range(reps)]
        return GeneratorBank.from_seeds(seeds, key, device=self.device)

    def _signature(self) -> dict:
        return {"format": _FORMAT, "step": type(self.step).__name__,
                "hyperparameters": self.step.signature(), "seed": _plain(self.seed),
                "data_sha256": self._data_sha}

    # ------------------------------------------------------------------ training
    def fit(self, data: object, n_iter: int, *, callback: Callback | None = None,
            callback_at: Iterable[int] = ()) -> Trainer:
        """Train until ``n_iter`` iterations in total (continuing a fitted or checkpointed run).

        ``callback(trainer, iteration)`` runs after each iteration listed in ``callback_at``
        (1-based); callbacks must not draw from ``trainer.rng_``. A fitted trainer only continues
        on the data it was fitted on. A non-finite loss stops training with
        :class:`~fusionlib.errors.TrainingDivergedError` naming the iteration; the last
        checkpoint written before it is kept.
        """
        self._check_settings()
        check_positive_int("n_iter", n_iter)
        batch = self.step.prepare(data, self.device)
        if not hasattr(self, "iteration_"):
            self._setup(batch)
            try:
                self._maybe_resume(n_iter)
            except BaseException:  # not set up: the next fit() checks the checkpoint again
                del self.iteration_
                raise
        elif _fingerprint(batch) != self._data_sha:
            raise InvalidInputError(
                f"this trainer was fitted on other data (it is at iteration {self.iteration_}); "
                "fit continues a run on the same data only. Build a new Trainer (with fresh "
                "networks) to train on these data")
        at = set(callback_at)
        log = _ProgressLog(self.step.name, self.iteration_, n_iter)
        with torch_threads(self.n_threads):
            bar = tqdm(total=n_iter, initial=self.iteration_, disable=not self.progress,
                       desc=self.step.name, leave=False)
            try:
                while self.iteration_ < n_iter:
                    self._one(batch)
                    bar.update(1)
                    log.update(self.iteration_, self.last_losses_)
                    if callback is not None and self.iteration_ in at:
                        callback(self, self.iteration_)
                    if self.checkpoint_every and self.iteration_ % self.checkpoint_every == 0:
                        self.save_checkpoint()
            finally:
                bar.close()
        log.update(self.iteration_, getattr(self, "last_losses_", {}), force=True)
        if self.checkpoint_path is not None:
            self.save_checkpoint()
        return self

    def _one(self, batch: Batch) -> None:
        losses = self.step.iteration(batch, self.rng_, self.optimizers_)
        if _reps(self.step) is not None:
            values = self._check_reps(losses)
        else:
            values = {k: float(v) for k, v in losses.items()}
            bad = sorted(k for k, v in values.items() if not math.isfinite(v))
            if bad:
                raise TrainingDivergedError(
                    f"non-finite loss {bad} = {[values[k] for k in bad]} at iteration "
                    f"{self.iteration_ + 1}; training stopped and {self._kept()}. Lower the "
                    "learning rate, check the data scale, or raise the penalty weight")
        self.iteration_ += 1
        self.last_losses_ = values
        if self.log_every and self.iteration_ % self.log_every == 0:
            self.history_.append({"iteration": self.iteration_, **values})

    def _kept(self) -> str:
        return (f"the last checkpoint ({self.checkpoint_path}) is kept"
                if self.checkpoint_path is not None else "no checkpoint was written")

    def _check_reps(self, losses: dict[str, torch.Tensor]) -> dict[str, list[float]]:
        """Per-repetition losses as lists; record repetitions that turned non-finite."""
        names = list(losses)
        table = torch.stack([losses[k].detach().reshape(-1) for k in names]).cpu()
        finite = torch.isfinite(table).all(dim=0).tolist()
        for r, ok in enumerate(finite):
            if not ok and r not in self.diverged_:
                self.diverged_[r] = self.iteration_ + 1
        if len(self.diverged_) == len(finite):
            raise TrainingDivergedError(
                f"every repetition has a non-finite loss (first iterations "
                f"{dict(sorted(self.diverged_.items()))}); training stopped at iteration "
                f"{self.iteration_ + 1} and {self._kept()}. Lower the learning rate, check the "
                "data scale, or raise the penalty weight")
        return dict(zip(names, table.tolist(), strict=True))

    # ------------------------------------------------------------------ checkpoints
    def save_checkpoint(self) -> Path:
        """Write the full training state atomically to ``checkpoint_path``."""
        if self.checkpoint_path is None:
            raise InvalidInputError("no checkpoint_path was given to the trainer")
        if not hasattr(self, "iteration_"):
            raise NotFittedError("nothing to checkpoint before fit()")
        state = {**self._signature(), "iteration": self.iteration_, "history": self.history_,
                 "modules": {k: m.state_dict() for k, m in self.step.modules().items()},
                 "optimizers": {k: o.state_dict() for k, o in self.optimizers_.items()},
                 "rng_state": self.rng_.get_state(), "diverged": dict(self.diverged_)}
        return atomic_write(self.checkpoint_path, lambda p: torch.save(state, p))

    def _load(self) -> dict:
        path = self.checkpoint_path
        if Path(path).is_dir():
            raise InvalidInputError(f"checkpoint_path {path} is a folder; give a file path")
        try:
            state = torch.load(path, map_location=self.device, weights_only=True)
        except (RuntimeError, EOFError, OSError, pickle.UnpicklingError, zipfile.BadZipFile,
                ValueError, KeyError, AttributeError) as exc:
            raise InvalidInputError(
                f"checkpoint {path} cannot be read as a trainer checkpoint (truncated, or another "
                f"kind of file: {type(exc).__name__}); delete it, or use another checkpoint_path "
                "to start afresh") from None
        if not isinstance(state, dict) or state.get("format") != _FORMAT:
            raise InvalidInputError(
                f"checkpoint {path} is not a checkpoint of this trainer (format "
                f"{state.get('format') if isinstance(state, dict) else '?'}, expected {_FORMAT}); "
                "delete it, or use another checkpoint_path")
        return state

    def _maybe_resume(self, n_iter: int) -> None:
        if self.checkpoint_path is None or not Path(self.checkpoint_path).exists():
            return
        state, mine = self._load(), self._signature()
        differ = sorted(k for k in mine if state.get(k) != mine[k])
        if differ:
            raise InvalidInputError(
                f"checkpoint {self.checkpoint_path} was made with different {differ}; "
                "delete it or use another checkpoint_path to start afresh")
        if int(state["iteration"]) > n_iter:
            raise InvalidInputError(
                f"checkpoint {self.checkpoint_path} is at iteration {state['iteration']}, past "
                f"n_iter={n_iter}; ask for at least {state['iteration']} iterations or delete it")
        for k, m in self.step.modules().items():
            m.load_state_dict(state["modules"][k])
        for k, o in self.optimizers_.items():
            o.load_state_dict(state["optimizers"][k])
        self.rng_.set_state(state["rng_state"].cpu())  # generator states are CPU byte tensors
        self.iteration_, self.history_ = int(state["iteration"]), list(state["history"])
        self.diverged_ = {int(k): int(v) for k, v in state.get("diverged", {}).items()}

    # ------------------------------------------------------------------ sampling
    def sample(self, n: int, *, seed: object = 0, **options: object) -> torch.Tensor:
        """Draw ``n`` samples on CPU on the stream ``(seed, "sample")``.

        Sampling has its own generator, so it never changes the training state; ``options``
        go to the step's ``sample`` (e.g. ``alpha`` for PTGAN). A stacked step samples every
        repetition, shape (R, n, ...), repetition r on ``(seed[r], "sample")`` for a list of
        seeds (else on ``(seed, "rep", r, "sample")``).
        """
        if not hasattr(self, "iteration_"):
            raise NotFittedError("call fit(data, n_iter) before sample()")
        check_positive_int("n", n)
        with memory_error_as_input_error(f"sampling n={n:,} rows"):
            return self.step.sample(n, self._stream(seed, "sample"), **options).cpu()
