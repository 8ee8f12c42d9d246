"""Conditional generation on a group column (Appendix I, planned extension 3)."""

import numpy as np
import pandas as pd
import pytest
import torch

from fusionlib.encoding.tabular import Span
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.fusion.conditional import (
    ConditionalGenerator,
    allocate,
    conditional_fusion_step,
    group_codes,
)
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.synthesizer import FusionGAN
from fusionlib.rng import numpy_rng, torch_generator

LEVELS = np.array(["lo", "mid", "hi"])
SHIFT = np.array([-2.0, 0.0, 2.0])
SMALL = FusionConfig(batch_size=32, hidden=16, latent_dim=8)
FAST = FusionConfig(batch_size=32, hidden=32, latent_dim=8, lr_g=1e-3, lr_d=1e-3)


def sources(n=300, seed=0, both=False) -> dict[str, pd.DataFrame]:
    """A sees (g, x) (x shifts with g by -2, 0, 2, sd 0.5); B sees (x, y) (or (g, x, y) with
    ``both``); group shares 0.5 / 0.3 / 0.2."""
    r = numpy_rng(seed, "fusion-conditional-sources")
    ca, cb = r.choice(3, n, p=(0.5, 0.3, 0.2)), r.choice(3, n, p=(0.5, 0.3, 0.2))
    a = pd.DataFrame({"g": LEVELS[ca], "x": SHIFT[ca] + r.normal(0, 0.5, n)})
    b = pd.DataFrame({"x": SHIFT[cb] + r.normal(0, 0.5, n), "y": r.normal(0, 1, n)})
    if both:
        b.insert(0, "g", LEVELS[cb])
    return {"A": a, "B": b}


def model(**kw) -> FusionGAN:
    return FusionGAN(**{"epochs": 1, "config": SMALL, "iterations_per_epoch": 20,
                        "condition": "g", **kw})


@pytest.fixture(scope="module")
def fitted() -> FusionGAN:
    return model().fit(sources())


def test_requested_group_and_shares_are_met_exactly(fitted):
    assert fitted.sample(50, seed=0, group="mid")["g"].eq("mid").all()
    out = fitted.sample(1000, seed=0, shares={"lo": 0.2, "mid": 0.3, "hi": 0.5})
    assert out["g"].value_counts().to_dict() == {"lo": 200, "mid": 300, "hi": 500}
    only = fitted.sample(10, seed=0, shares={"hi": 1.0})
    assert only["g"].eq("hi").all() and list(only.columns) == ["g", "x", "y"]


def test_unconditional_samples_follow_the_pooled_training_shares(fitted):
    shares = fitted.group_shares_
    train = fitted.train_["A"]["g"].value_counts(normalize=True)
    assert all(np.isclose(shares[g], train[g]) for g in LEVELS)
    got = fitted.sample(4000, seed=3)["g"].value_counts(normalize=True)
    assert all(abs(got[g] - shares[g]) < 0.03 for g in LEVELS)


def test_same_seed_same_output_other_seed_other_output(fitted):
    again = model().fit(sources())
    kw = dict(shares={"lo": 0.5, "hi": 0.5})
    pd.testing.assert_frame_equal(fitted.sample(200, seed=1, **kw),
                                  again.sample(200, seed=1, **kw))
    assert not fitted.sample(200, seed=1, **kw).equals(fitted.sample(200, seed=2, **kw))
    other = model(seed=1).fit(sources())
    assert not other.sample(200, seed=1, **kw).equals(fitted.sample(200, seed=1, **kw))


@pytest.mark.parametrize("kw, match", [
    (dict(group="nope"), "unknown group 'nope'"),
    (dict(shares={"lo": 0.5, "nope": 0.5}), "unknown group 'nope'"),
    (dict(shares={"lo": -0.1, "hi": 1.1}), "finite number >= 0"),
    (dict(shares={"lo": 0.0}), "all zero"),
    (dict(shares=[0.5, 0.5]), "must be a dict"),
    (dict(group="lo", shares={"lo": 1.0}), "not both"),
])
def test_bad_sampling_requests_raise(fitted, kw, match):
    with pytest.raises(InvalidInputError, match=match):
        fitted.sample(10, seed=0, **kw)


def test_bad_conditions_raise():
    with pytest.raises(InvalidInputError, match="condition column 'h' is in no source"):
        model(condition="h").fit(sources())
    with pytest.raises(InvalidInputError, match="condition must be a column name"):
        model(condition=3).fit(sources())
    plain = FusionGAN(epochs=1, config=SMALL, iterations_per_epoch=5).fit(
        {k: v.drop(columns="g", errors="ignore") for k, v in sources().items()})
    with pytest.raises(InvalidInputError, match="need a conditional model"):
        plain.sample(10, group="lo")
    with pytest.raises(NotFittedError):
        model().sample(10, group="lo")


def test_generator_writes_the_condition_into_its_record():
    gen = ConditionalGenerator(5, Span("g", "discrete", 1, 4), latent_dim=4, hidden=8)
    cond = torch.eye(3)[[0, 2, 1, 1]]
    out = gen(torch.randn(4, 4, generator=torch_generator(0, "z")), cond)
    assert out.shape == (4, 5) and torch.equal(out[:, 1:4], cond)
    assert gen.inner.net[0].in_features == 4 + 3 and gen.inner.out_dim == 2


def test_step_conditions_come_from_real_rows_or_from_the_shares():
    # schema g (3 one-hot), x, y: A observes g and x, B observes x and y
    step = conditional_fusion_step(SMALL, 5, [[0, 1, 2, 3], [3, 4]],
                                   Span("g", "discrete", 0, 3), [1.0, 0.0, 3.0])
    real = torch.tensor([[0.0, 1.0, 0.0, 0.3]] * 4)
    assert torch.equal(step.conditions(0, real, torch_generator(0, "c")), real[:, :3])
    drawn = step.conditions(1, torch.zeros(4000, 2), torch_generator(0, "c"))
    assert drawn[:, 1].sum() == 0 and abs(float(drawn[:, 2].mean()) - 0.75) < 0.03
    with pytest.raises(InvalidInputError, match="whole condition block"):
        conditional_fusion_step(SMALL, 5, [[0, 1, 3], [2, 3, 4]],
                                Span("g", "discrete", 0, 3), [1.0, 1.0, 1.0])


def test_the_group_shifts_the_generated_records():
    """Trained briefly, the records of each group sit near that group's mean of x (-2, 0, 2)
    in both designs: the condition seen by one source (A) or by both."""
    for both in (False, True):
        m = FusionGAN(epochs=1, config=FAST, iterations_per_epoch=400, condition="g",
                      seed=0).fit(sources(n=600, both=both))
        means = [m.sample(500, seed=0, group=g)["x"].mean() for g in LEVELS]
        assert means[0] < means[1] < means[2], means
        assert abs(means[2] - means[0] - 4.0) < 1.5, means


@pytest.mark.parametrize("n, shares, expected", [
    (10, [0.5, 0.3, 0.2], [5, 3, 2]), (7, [1, 1, 1], [3, 2, 2]), (1, [0.2, 0.8], [0, 1]),
    (1000, [0.1, 0.0, 0.9], [100, 0, 900])])
def test_allocate(n, shares, expected):
    assert allocate(n, shares).tolist() == expected


def test_group_codes_are_shuffled_and_exact():
    codes = group_codes(["a", "b"], 10, shares={"a": 0.3, "b": 0.7}, seed=0)
    assert np.bincount(codes).tolist() == [3, 7] and codes.tolist() != sorted(codes.tolist())
    assert group_codes(["a", "b"], 10) is None


def test_resume_from_checkpoint_is_bitwise(tmp_path):
    path = tmp_path / "conditional.pt"
    whole = model(epochs=2).fit(sources())
    model(epochs=1, checkpoint_path=path).fit(sources())
    resumed = model(epochs=2, checkpoint_path=path).fit(sources())
    for a, b in zip(whole.trainer_.step.generator.parameters(),
                    resumed.trainer_.step.generator.parameters(), strict=True):
        assert torch.equal(a, b)
    kw = dict(seed=4, shares={"lo": 0.5, "mid": 0.5})
    pd.testing.assert_frame_equal(whole.sample(50, **kw), resumed.sample(50, **kw))


def test_a_continuous_condition_column_is_refused():
    """A float column would give one group per distinct value."""
    with pytest.raises(InvalidInputError,
                       match=r"condition column 'x' is continuous.*\d+ distinct.*pd\.cut"):
        model(condition="x", discrete_columns=["g"]).fit(sources())


def test_conditional_sampling_beyond_memory_is_a_clear_error(fitted):
    with pytest.raises(InvalidInputError, match="n=1,000,000,000,000 rows.*memory"):
        fitted.sample(10**12)
