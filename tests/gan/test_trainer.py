import math

import numpy as np
import pytest
import torch

from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.gan.networks import tabular_networks, toy_networks
from fusionlib.gan.trainer import Trainer
from fusionlib.ptgan.config import METHODS, default_config
from fusionlib.ptgan.step import ptgan_trainer

DATA = np.random.default_rng(0).normal(size=(300, 2)).astype(np.float32)


def make(method: str = "pt+cp", seed: int = 0, net_seed: int = 0, **kw) -> Trainer:
    cfg = default_config(method, batch_size=32)
    g, c = toy_networks("small", conditional=cfg.conditional, seed=net_seed)
    return ptgan_trainer(cfg, g, c, seed=seed, log_every=1, **kw)


def weights(tr: Trainer) -> list[torch.Tensor]:
    nets = (tr.step.generator, tr.step.critic)
    return [p.detach().clone() for net in nets for p in net.parameters()]


def same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("method", METHODS)
def test_every_method_trains_with_finite_losses(method):
    tr = make(method).fit(DATA, 5)
    assert tr.iteration_ == 5 and len(tr.history_) == 5
    assert all(math.isfinite(v) for h in tr.history_ for v in h.values())
    assert torch.isfinite(tr.sample(20)).all()


def test_same_seed_same_result_other_seed_different():
    a, b, c = make(seed=1).fit(DATA, 15), make(seed=1).fit(DATA, 15), make(seed=2).fit(DATA, 15)
    assert same(weights(a), weights(b))
    assert not same(weights(a), weights(c))
    assert torch.equal(a.sample(10, seed=3), b.sample(10, seed=3))


class Interrupted(Exception):
    """Raised by a callback to simulate a crash in the middle of training."""


def crash(trainer: Trainer, iteration: int) -> None:
    raise Interrupted(iteration)


def test_resume_from_checkpoint_equals_uninterrupted_run(tmp_path):
    path = tmp_path / "ckpt.pt"
    # checkpoints at 5 and 10; the run "crashes" after iteration 12, between two checkpoints
    with pytest.raises(Interrupted):
        make(checkpoint_path=path, checkpoint_every=5).fit(DATA, 20, callback=crash,
                                                           callback_at=(12,))
    assert torch.load(path, weights_only=True)["iteration"] == 10
    # a fresh process: networks with ANOTHER init seed, so only a real resume can match
    executed: list[int] = []
    resumed = make(net_seed=123, checkpoint_path=path, checkpoint_every=5).fit(
        DATA, 20, callback=lambda tr, it: executed.append(it), callback_at=range(1, 21))
    straight = make().fit(DATA, 20)
    assert executed == list(range(11, 21))  # the first iteration run is checkpoint + 1
    assert same(weights(resumed), weights(straight))
    assert resumed.history_ == straight.history_
    assert [h["iteration"] for h in resumed.history_] == list(range(1, 21))


def test_fit_on_other_data_after_fitting_raises():
    tr = make().fit(DATA, 3)
    with pytest.raises(InvalidInputError, match="other data.*new Trainer"):
        tr.fit(DATA[::-1].copy(), 6)
    assert tr.iteration_ == 3  # nothing was reset


def test_fit_continues_an_in_memory_run_bitwise():
    tr = make().fit(DATA, 8)
    tr.fit(DATA, 16)
    assert same(weights(tr), weights(make().fit(DATA, 16)))


def test_resume_refuses_other_hyperparameters(tmp_path):
    path = tmp_path / "ckpt.pt"
    make(checkpoint_path=path).fit(DATA, 3)
    cfg = default_config("pt+cp", batch_size=32, penalty_weight=10.0)
    g, c = toy_networks("small", conditional=True, seed=0)
    with pytest.raises(InvalidInputError, match="hyperparameters"):
        ptgan_trainer(cfg, g, c, seed=0, checkpoint_path=path).fit(DATA, 6)
    with pytest.raises(InvalidInputError, match="seed"):
        make(seed=9, checkpoint_path=path).fit(DATA, 6)


def test_checkpoint_file_is_complete_after_fit(tmp_path):
    path = tmp_path / "sub" / "ckpt.pt"
    make(checkpoint_path=path).fit(DATA, 4)
    state = torch.load(path, weights_only=True)
    assert state["iteration"] == 4 and not list(path.parent.glob(".*tmp"))


def test_sample_same_seed_same_points_other_seed_other():
    tr = make().fit(DATA, 3)
    assert torch.equal(tr.sample(10, alpha=0.7, seed=3), tr.sample(10, alpha=0.7, seed=3))
    assert not torch.equal(tr.sample(10, alpha=0.7, seed=3), tr.sample(10, alpha=0.7, seed=4))


def test_sampling_does_not_change_training():
    a = make().fit(DATA, 6)
    a.sample(50, alpha=0.5, seed=1)
    a.fit(DATA, 12)
    assert same(weights(a), weights(make().fit(DATA, 12)))


def test_callbacks_run_at_requested_iterations():
    seen = []
    make().fit(DATA, 10, callback=lambda tr, it: seen.append((it, tr.iteration_)),
               callback_at=(1, 5, 10, 99))
    assert seen == [(1, 1), (5, 5), (10, 10)]


def test_thread_setting_is_restored():
    before = torch.get_num_threads()
    make(n_threads=1).fit(DATA, 2)
    assert torch.get_num_threads() == before


def test_batch_norm_generator_trains_and_samples_in_eval_mode():
    cfg = default_config("pt+cp", r=0.5, latent_dim=16, batch_size=16)
    g, c = tabular_networks(6, conditional=True, seed=0)
    data = np.random.default_rng(1).uniform(-1, 1, size=(100, 6))
    tr = ptgan_trainer(cfg, g, c, seed=0).fit(data, 3)
    assert tr.step.generator.training
    assert torch.equal(tr.sample(7, seed=1), tr.sample(7, seed=1))


def test_sample_before_fit_raises():
    with pytest.raises(NotFittedError, match="fit"):
        make().sample(5)


def test_unconditional_generator_cannot_sample_tempered_levels():
    with pytest.raises(InvalidInputError, match="alpha = 1"):
        make("gp").fit(DATA, 1).sample(5, alpha=0.5)


def test_bad_inputs_raise():
    with pytest.raises(InvalidInputError, match="NaN"):
        make().fit(np.array([[0.0, np.nan]]), 2)
    with pytest.raises(InvalidInputError, match="n_iter"):
        make().fit(DATA, 0)
    cfg = default_config("pt+cp")
    g, c = toy_networks("small", conditional=False, seed=0)
    with pytest.raises(InvalidInputError, match="conditional"):
        ptgan_trainer(cfg, g, c, seed=0).fit(DATA, 1)
    with pytest.raises(InvalidInputError, match="checkpoint_path"):
        make().fit(DATA, 1).save_checkpoint()


def test_infinite_learning_rate_is_refused_before_training():
    with pytest.raises(InvalidInputError, match="lr_d must be a finite number"):
        default_config("gp", lr_d=float("inf"))


def test_non_finite_loss_stops_training_naming_the_iteration_and_keeps_last_checkpoint(tmp_path):
    from fusionlib.errors import TrainingDivergedError

    path = tmp_path / "ckpt.pt"

    def poison(tr, it):  # the critic's weights turn NaN after iteration 3
        with torch.no_grad():
            for p in tr.step.critic.parameters():
                p.fill_(float("nan"))

    with pytest.raises(TrainingDivergedError, match=r"iteration 4;.*last checkpoint"):
        make("gp", checkpoint_path=path, checkpoint_every=2).fit(
            DATA, 20, callback=poison, callback_at=(3,))
    state = torch.load(path, weights_only=True)
    assert state["iteration"] == 2
    assert all(torch.isfinite(v).all() for v in state["modules"]["critic"].values())


def test_truncated_or_foreign_checkpoint_is_refused_without_suggesting_weights_only(tmp_path):
    path = tmp_path / "ckpt.pt"
    make(checkpoint_path=path).fit(DATA, 2)
    path.write_bytes(path.read_bytes()[:100])  # truncated
    with pytest.raises(InvalidInputError, match="cannot be read") as err:
        make(checkpoint_path=path).fit(DATA, 4)
    assert "weights_only" not in str(err.value)
    torch.save({"something": 1}, path)  # a foreign torch file
    with pytest.raises(InvalidInputError, match="not a checkpoint of this trainer"):
        make(checkpoint_path=path).fit(DATA, 4)


def test_checkpoint_past_n_iter_is_refused(tmp_path):
    path = tmp_path / "ckpt.pt"
    make(checkpoint_path=path).fit(DATA, 6)
    with pytest.raises(InvalidInputError, match="past n_iter=3"):
        make(checkpoint_path=path).fit(DATA, 3)


def test_settings_are_checked_before_training_starts():
    seen = []
    with pytest.raises(InvalidInputError, match="checkpoint_path"):
        make(checkpoint_every=5).fit(DATA, 3, callback=lambda tr, it: seen.append(it),
                                     callback_at=(1,))
    assert seen == []


def test_data_width_is_checked_against_the_networks():
    with pytest.raises(InvalidInputError, match="3 columns but the critic was built for 2"):
        make().fit(np.zeros((50, 3), dtype=np.float32), 2)


def test_a_refused_checkpoint_stays_refused_and_untouched_on_the_next_fit(tmp_path):
    """fit() refusing a checkpoint must not leave the trainer half set up: the next fit() used
    to train from scratch and overwrite the checkpoint."""
    path = tmp_path / "ckpt.pt"
    make(checkpoint_path=path).fit(DATA, 6)
    before = path.read_bytes()
    other = make(seed=9, checkpoint_path=path)
    for _ in range(2):
        with pytest.raises(InvalidInputError, match="different.*seed"):
            other.fit(DATA, 8)
    short = make(checkpoint_path=path)
    for _ in range(2):
        with pytest.raises(InvalidInputError, match="past n_iter=3"):
            short.fit(DATA, 3)
    assert path.read_bytes() == before and not hasattr(other, "iteration_")
    resumed = short.fit(DATA, 8)  # the same trainer still resumes once asked correctly
    assert resumed.iteration_ == 8 and len(resumed.history_) == 8
    assert same(weights(resumed), weights(make().fit(DATA, 8)))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only message")
def test_cuda_device_on_a_cpu_only_torch_names_the_fix():
    with pytest.raises(InvalidInputError, match="device='cuda'.*no CUDA.*device='cpu'"):
        make(device="cuda").fit(DATA, 2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_trains_where_there_is_a_gpu_and_an_absent_index_is_refused():
    assert torch.isfinite(make(device="cuda").fit(DATA, 2).sample(5)).all()
    count = torch.cuda.device_count()
    with pytest.raises(InvalidInputError, match=f"torch sees {count} CUDA device"):
        make(device=f"cuda:{count}").fit(DATA, 2)


@pytest.mark.parametrize("device", ["gpu", "", 3])
def test_a_device_that_torch_does_not_know_is_refused(device):
    with pytest.raises(InvalidInputError, match="device.*'cpu' or 'cuda'"):
        make(device=device).fit(DATA, 2)


def test_sampling_more_rows_than_memory_holds_is_a_clear_error():
    tr = make().fit(DATA, 2)
    with pytest.raises(InvalidInputError, match="n=1,000,000,000,000 rows.*memory.*fewer rows"):
        tr.sample(10**12)
    assert tr.sample(5).shape == (5, 2)


def test_a_training_run_logs_progress_at_a_steady_interval(monkeypatch, caplog):
    """Progress lines (iteration, losses, elapsed, time left) go to the module's logger, so the
    log of a long job says where it is; with the interval at 0 s every iteration reports, with
    the default (60 s) a short run reports once, at its end. Training is not changed."""
    import logging

    caplog.set_level(logging.INFO, logger="fusionlib.gan.trainer")
    quiet = make().fit(DATA, 6)
    lines = [r.getMessage() for r in caplog.records if r.name == "fusionlib.gan.trainer"]
    assert len(lines) == 1 and "iteration 6/6 (100.0%)" in lines[0]
    caplog.clear()
    monkeypatch.setenv("FUSIONLIB_PROGRESS_SECONDS", "0")
    chatty = make().fit(DATA, 6)
    lines = [r.getMessage() for r in caplog.records if r.name == "fusionlib.gan.trainer"]
    assert len(lines) == 7  # every iteration, then the end
    assert "iteration 3/6 (50.0%)" in lines[2] and "elapsed" in lines[2] and "left" in lines[2]
    assert "losses " in lines[2] and "=" in lines[2].split("losses ")[1]
    assert same(weights(quiet), weights(chatty))
