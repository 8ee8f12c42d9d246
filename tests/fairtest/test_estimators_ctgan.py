"""CTGAN baseline wrapper: tiny runs only (1 epoch on 50 rows; a few seconds in all)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.fairtest import CTGANBaseline

pytest.importorskip("ctgan")
torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def complete() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    a = rng.choice(["x", "y"], 50)
    return pd.DataFrame({"a": a, "b": np.where(a == "x", "1", rng.choice(["0", "1"], 50)),
                         "c": rng.choice(["p", "q", "r"], 50)})


@pytest.fixture(scope="module")
def fitted(complete) -> CTGANBaseline:
    return CTGANBaseline(epochs=1, batch_size=50, enable_gpu=False, seed=0).fit(complete)


def test_ctgan_samples_all_columns_as_strings(fitted, complete):
    out = fitted.sample(40, seed=0)
    assert list(out.columns) == list(complete.columns)
    assert len(out) == 40
    for col in out.columns:
        assert set(out[col]) <= set(complete[col])
        assert all(isinstance(v, str) for v in out[col])


def test_ctgan_same_seed_same_sample_other_seed_other_sample(fitted):
    pd.testing.assert_frame_equal(fitted.sample(50, seed=1), fitted.sample(50, seed=1))
    assert not fitted.sample(50, seed=1).equals(fitted.sample(50, seed=2))


def test_ctgan_training_is_seeded_and_leaves_global_rng_alone(complete):
    np_state, torch_state = np.random.get_state()[1].copy(), torch.get_rng_state().clone()
    a = CTGANBaseline(epochs=1, batch_size=50, enable_gpu=False, seed=3).fit(complete)
    b = CTGANBaseline(epochs=1, batch_size=50, enable_gpu=False, seed=3).fit(complete)
    pd.testing.assert_frame_equal(a.sample(50, seed=0), b.sample(50, seed=0))
    assert np.array_equal(np.random.get_state()[1], np_state)
    assert torch.equal(torch.get_rng_state(), torch_state)


def test_ctgan_other_training_seed_gives_another_model(complete):
    a = CTGANBaseline(epochs=1, batch_size=50, enable_gpu=False, seed=3).fit(complete)
    b = CTGANBaseline(epochs=1, batch_size=50, enable_gpu=False, seed=4).fit(complete)
    weights_a = [w.detach().clone() for w in a.model_._generator.parameters()]
    weights_b = [w.detach().clone() for w in b.model_._generator.parameters()]
    assert any(not torch.equal(wa, wb) for wa, wb in zip(weights_a, weights_b, strict=True))
    # the same sampling seed on the two models: other draws
    assert not a.sample(50, seed=0).equals(b.sample(50, seed=0))


def test_ctgan_errors():
    with pytest.raises(NotFittedError, match="fit"):
        CTGANBaseline().sample(10, seed=0)
    with pytest.raises(InvalidInputError, match="multiple of pac = 10"):
        CTGANBaseline(batch_size=55).fit(pd.DataFrame({"a": ["x"]}))
    with pytest.raises(InvalidInputError, match="unknown CTGAN settings"):
        CTGANBaseline(settings={"lr": 1e-3}).fit(pd.DataFrame({"a": ["x"]}))
    with pytest.raises(InvalidInputError, match="missing values"):
        CTGANBaseline(epochs=1).fit(pd.DataFrame({"a": ["x", None]}))
    with pytest.raises(TypeError):
        CTGANBaseline(epoch=3)  # misspelled option is rejected, not ignored


def test_ctgan_trains_with_the_published_settings_read_back_from_the_model(fitted):
    """Every published hyperparameter reaches ctgan.CTGAN (read back from the trained model),
    whatever the package's own defaults are; only the two set in the fixture differ."""
    from fusionlib.fairtest.estimators.baselines import CTGAN_DEFAULTS, CTGAN_HYPERPARAMETERS

    published = {k: getattr(CTGAN_DEFAULTS, k) for k in CTGAN_HYPERPARAMETERS}
    assert published | {"epochs": 1, "batch_size": 50} == fitted.settings_
    assert (CTGAN_DEFAULTS.epochs, CTGAN_DEFAULTS.batch_size, CTGAN_DEFAULTS.pac) == (300, 500, 10)
    assert (CTGAN_DEFAULTS.generator_lr, CTGAN_DEFAULTS.discriminator_lr) == (2e-4, 2e-4)
    assert fitted.steps_ == 1 and len(fitted.losses_) == 1


def test_ctgan_settings_change_one_hyperparameter(complete):
    m = CTGANBaseline(epochs=1, batch_size=50, settings={"generator_lr": 1e-3},
                      enable_gpu=False, seed=0).fit(complete)
    assert m.settings_["generator_lr"] == 1e-3 and m.settings_["pac"] == 10
