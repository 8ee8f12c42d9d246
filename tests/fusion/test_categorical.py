"""FusionGAN with categorical columns (Appendix I, planned extension 2)."""

import numpy as np
import pandas as pd
import pytest
import torch

from fusionlib.errors import InvalidInputError
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.synthesizer import FusionGAN
from fusionlib.fusion.weighting import compute_weights
from fusionlib.gan.heads import TabularHead
from fusionlib.rng import child, numpy_rng

LEVELS, SHARES = np.array(["a", "b", "c"]), (0.5, 0.3, 0.2)
# a faster discriminator, as in test_synthesizer's learning-signal test
FAST = FusionConfig(batch_size=32, hidden=32, latent_dim=8, lr_g=2e-4, lr_d=1e-3)
SMALL = FusionConfig(batch_size=32, hidden=16, latent_dim=8)


def sources(n=300, seed=0, levels=LEVELS) -> dict[str, pd.DataFrame]:
    """A sees (g, x), B sees (g, y); g has 3 levels with shares 0.5 / 0.3 / 0.2, x and y shift
    with g (means -0.5, 0, 1 and their negatives, sd 1: overlapping, so x and y are unimodal;
    with well-separated modes the BCE game collapses onto one of them, categories included)."""
    r = numpy_rng(seed, "fusion-categorical-sources")
    shift = np.array([-0.5, 0.0, 1.0])
    ca, cb = r.choice(3, n, p=SHARES), r.choice(3, n, p=SHARES)
    return {"A": pd.DataFrame({"g": levels[ca], "x": shift[ca] + r.normal(0, 1, n)}),
            "B": pd.DataFrame({"g": levels[cb], "y": -shift[cb] + r.normal(0, 1, n)})}


def model(**kw) -> FusionGAN:
    return FusionGAN(**{"epochs": 1, "config": SMALL, "iterations_per_epoch": 20,
                        "discrete_columns": ["g"], **kw})


def trained(seed=0) -> FusionGAN:
    return FusionGAN(epochs=1, config=FAST, iterations_per_epoch=300, discrete_columns=["g"],
                     seed=seed).fit(sources())


@pytest.fixture(scope="module")
def fitted() -> FusionGAN:
    return trained()


def test_encoding_networks_and_samples(fitted):
    m = fitted
    enc = m.encoder_
    assert m.schema_ == ("g", "x", "y") and enc.discrete == ("g",)
    assert [(s.column, s.kind, s.start, s.stop) for s in enc.spans] == [
        ("g", "discrete", 0, 3), ("x", "continuous", 3, 4), ("y", "continuous", 4, 5)]
    assert enc.categories["g"].tolist() == ["a", "b", "c"] and m.scaler_.columns == ("x", "y")
    step = m.trainer_.step
    assert isinstance(step.generator.head, TabularHead) and step.indices == ((0, 1, 2, 3),
                                                                             (0, 1, 2, 4))
    assert [d.in_dim for d in step.discriminators] == [4, 4]
    out = m.sample(4000, seed=0)
    assert list(out.columns) == ["g", "x", "y"]
    assert out["g"].dtype == object and (out[["x", "y"]].dtypes == np.float64).all()
    assert set(out["g"]) == {"a", "b", "c"}
    real = pd.concat([m.train_["A"]["g"], m.train_["B"]["g"]]).value_counts(normalize=True)
    synth = out["g"].value_counts(normalize=True)
    # seeds 0-7 at 300 iterations: largest share error 0.04 (median), 0.094 (max); 0.05 here
    assert ((synth - real).abs() < 0.12).all(), synth


def test_real_rows_are_encoded_like_the_generator_output(fitted):
    m = fitted
    x_a = m.trainer_.step.prepare(tuple(v for name in m.sources_ for v in (
        m.encoder_.transform(m.train_[name]), None)), "cpu")[0].numpy()
    g = m.train_["A"]["g"].to_numpy()
    assert np.array_equal(x_a[:, :3], (g[:, None] == LEVELS).astype(np.float32))
    x = m.train_["A"]["x"]
    np.testing.assert_allclose(x_a[:, 3], (x - m.scaler_.mean[0]) / m.scaler_.scale[0],
                               rtol=1e-5)
    decoded = m.encoder_.inverse(np.c_[x_a, np.zeros(len(x_a))])
    assert decoded["g"].tolist() == g.tolist()
    np.testing.assert_allclose(decoded["x"], x, rtol=1e-5)


def test_same_seed_same_samples(fitted):
    again = trained()
    pd.testing.assert_frame_equal(fitted.sample(300, seed=1), again.sample(300, seed=1))
    assert not fitted.sample(300, seed=1).equals(fitted.sample(300, seed=2))


def test_resume_from_checkpoint_is_bitwise(tmp_path):
    path = tmp_path / "fusion.pt"
    whole = model(epochs=2).fit(sources())
    model(epochs=1, checkpoint_path=path).fit(sources())
    resumed = model(epochs=2, checkpoint_path=path).fit(sources())
    assert resumed.trainer_.iteration_ == whole.trainer_.iteration_ == 40
    for a, b in zip(whole.trainer_.step.generator.parameters(),
                    resumed.trainer_.step.generator.parameters(), strict=True):
        assert torch.equal(a, b)
    pd.testing.assert_frame_equal(whole.sample(50, seed=4), resumed.sample(50, seed=4))


@pytest.mark.parametrize("levels, dtype", [
    (np.array([3, 1, 2]), np.int64), (np.array(["a", "b", "c"]), object),
    (pd.Categorical(["lo", "mid", "hi"]), "category")])
def test_original_dtype_is_restored(levels, dtype):
    src = sources(n=100, levels=levels)
    if dtype == "category":
        src = {k: v.assign(g=v["g"].astype("category")) for k, v in src.items()}
    out = model().fit(src).sample(200, seed=0)
    assert out["g"].dtype == src["A"]["g"].dtype
    assert set(out["g"]) <= set(src["A"]["g"]) | set(src["B"]["g"])


def test_a_category_seen_in_one_source_only_joins_the_union():
    src = sources(n=100)
    src["B"].loc[src["B"].index[:30], "g"] = "d"  # only B has level d
    m = model().fit(src)
    assert m.encoder_.categories["g"].tolist() == ["a", "b", "c", "d"]
    assert [d.in_dim for d in m.trainer_.step.discriminators] == [5, 5]
    x_a = m.encoder_.transform(m.train_["A"])
    assert x_a[:, 3].sum() == 0  # A's real rows never show d; B's do
    assert m.encoder_.transform(m.train_["B"])[:, 3].sum() > 0
    assert set(m.sample(500, seed=0)["g"]) <= {"a", "b", "c", "d"}


def test_a_single_level_column_is_allowed_and_sampled_as_its_level():
    src = sources(n=100)
    src["A"]["s"] = 7  # one level: a width-1 block, softmax always 1
    m = model(discrete_columns=["g", "s"]).fit(src)
    assert m.encoder_.span("s").stop - m.encoder_.span("s").start == 1
    out = m.sample(50, seed=0)
    assert out["s"].dtype == np.int64 and set(out["s"]) == {7}


def test_weights_are_computed_on_the_encoded_rows():
    cfg = FusionConfig(batch_size=32, hidden=16, latent_dim=8, weighting="cluster")
    m = model(config=cfg, weighting_options={"k": 3}).fit(sources(n=100))
    x_a = m.encoder_.transform(m.train_["A"]).astype(np.float64)
    assert x_a.shape == (80, 4)
    expected = compute_weights(x_a, "cluster", seed=child(0, "weights", "A"), k=3)
    np.testing.assert_array_equal(m.weights_["A"], expected)


def test_without_discrete_columns_the_network_is_appendix_a():
    src = sources(n=100)
    src = {k: v.drop(columns="g").assign(u=np.arange(100.0)) for k, v in src.items()}
    step = model(discrete_columns=()).fit(src).trainer_.step
    assert step.generator.head is None and not step.generator.stochastic


@pytest.mark.parametrize("kw, change, match", [
    ({"discrete_columns": ["g", "q"]}, None, r"discrete column\(s\) \['q'\] are in no source"),
    ({"discrete_columns": []}, None, "'g' of source 'A' is not numeric.*list it in "
                                     "discrete_columns"),
    ({"discrete_columns": "g"}, None, r"list of column names.*discrete_columns=\['g'\]"),
    ({"discrete_columns": 3}, None, "list of column names"),
    ({"discrete_columns": ["g", 1]}, None, "strings"),
    ({"tau": 0}, None, "tau"), ({"hard": "yes"}, None, "hard"),
    ({}, lambda s: s["B"].assign(g=[None] + list(s["B"]["g"][1:])),
     r"'B' has missing values in discrete column\(s\) \['g'\]"),
])
def test_bad_categorical_input(kw, change, match):
    src = sources(n=100)
    if change is not None:
        src["B"] = change(src)
    with pytest.raises(InvalidInputError, match=match):
        model(**kw).fit(src)


@pytest.mark.parametrize("other", [lambda g: g.map({"a": 1, "b": 2, "c": 3}),
                                   lambda g: g.map({"a": "1", "b": "2", "c": 3})])
def test_a_discrete_column_coded_as_numbers_and_as_text_is_refused(other):
    """1 and '1' would be two categories of one column."""
    src = sources(n=100, levels=np.array(["1", "2", "3"]))
    src["B"] = src["B"].assign(g=other(src["B"]["g"].map({"1": "a", "2": "b", "3": "c"})))
    with pytest.raises(InvalidInputError,
                       match=r"discrete column 'g' is coded as text.*and as numbers.*astype"):
        model().fit(src)
