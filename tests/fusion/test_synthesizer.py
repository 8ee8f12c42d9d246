import numpy as np
import pandas as pd
import pytest
import torch

from fusionlib.data.sources import SourceSet
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.fusion.config import FusionConfig
from fusionlib.fusion.synthesizer import FusionGAN
from fusionlib.rng import numpy_rng

SMALL = FusionConfig(batch_size=32, hidden=16, latent_dim=8)


def sources(n=200, seed=0) -> dict[str, pd.DataFrame]:
    """A sees (x, y) with y = 2x + noise, B sees (x, z) with z = -x + noise; x ~ N(5, 2)."""
    r = numpy_rng(seed, "fusion-test-sources")
    xa, xb = r.normal(5, 2, n), r.normal(5, 2, n)
    return {"A": pd.DataFrame({"x": xa, "y": 2 * xa + r.normal(0, 0.5, n)}),
            "B": pd.DataFrame({"x": xb, "z": -xb + r.normal(0, 0.5, n)})}


def model(**kw) -> FusionGAN:
    return FusionGAN(**{"epochs": 2, "config": SMALL, **kw})


def generator_weights(m: FusionGAN) -> list[torch.Tensor]:
    return [p.detach().clone() for p in m.trainer_.step.generator.parameters()]


@pytest.fixture(scope="module")
def fitted() -> FusionGAN:
    return model().fit(sources())


def test_fit_sets_the_fitted_attributes(fitted):
    m = fitted
    assert m.sources_ == ("A", "B") and m.schema_ == ("x", "y", "z")
    assert {k: len(v) for k, v in m.holdout_.items()} == {"A": 40, "B": 40}
    assert {k: len(v) for k, v in m.train_.items()} == {"A": 160, "B": 160}
    for name, df in sources().items():  # a partition of the rows, each part in original order
        parts = m.train_[name].index.append(m.holdout_[name].index)
        assert sorted(parts) == list(df.index) and m.train_[name].index.is_monotonic_increasing
    assert m.iterations_per_epoch_ == 5 and m.n_iter_ == 10 and m.trainer_.iteration_ == 10
    assert all(np.allclose(w, 1.0) and w.shape == (160,) for w in m.weights_.values())
    # no discrete_columns: every column continuous, Appendix A's generator (no Gumbel head)
    assert m.encoder_.discrete == () and m.scaler_.columns == ("x", "y", "z")
    assert m.trainer_.step.generator.head is None
    assert [h["iteration"] for h in m.history_] == [10]
    out = m.sample(25, seed=3)
    assert list(out.columns) == ["x", "y", "z"] and out.shape == (25, 3)
    assert (out.dtypes == np.float64).all() and np.isfinite(out.to_numpy()).all()


def test_pooled_standardisation_and_constant_columns():
    src = sources()
    src["B"] = src["B"].assign(c=3.0)
    m = model(epochs=1, standardize=True).fit(SourceSet(src))
    pooled_x = pd.concat([m.train_["A"]["x"], m.train_["B"]["x"]])
    sc = m.scaler_
    assert sc.mean[0] == pytest.approx(pooled_x.mean()) and sc.scale[0] == pytest.approx(
        pooled_x.std(ddof=0))
    assert sc.mean[1] == pytest.approx(m.train_["A"]["y"].mean())
    assert (sc.mean[3], sc.scale[3]) == (3.0, 1.0)
    assert m.schema_ == ("x", "y", "z", "c")
    raw = model(epochs=1).fit(src).scaler_  # the default: raw values, as the appendix has it
    assert np.all(raw.mean == 0) and np.all(raw.scale == 1)


def test_same_seed_same_samples_other_seed_different(fitted):
    again = model().fit(sources())
    assert all(torch.equal(a, b) for a, b in zip(generator_weights(fitted),
                                                 generator_weights(again), strict=True))
    pd.testing.assert_frame_equal(fitted.sample(30, seed=1), again.sample(30, seed=1))
    assert not fitted.sample(30, seed=1).equals(fitted.sample(30, seed=2))
    other = model(seed=1).fit(sources())
    assert not fitted.sample(30, seed=1).equals(other.sample(30, seed=1))


def test_resume_from_checkpoint_is_bitwise(tmp_path):
    path = tmp_path / "fusion.pt"
    whole = model(epochs=2).fit(sources())
    model(epochs=1, checkpoint_path=path).fit(sources())
    resumed = model(epochs=2, checkpoint_path=path).fit(sources())
    assert resumed.trainer_.iteration_ == whole.trainer_.iteration_ == 10
    assert all(torch.equal(a, b) for a, b in zip(generator_weights(whole),
                                                 generator_weights(resumed), strict=True))
    pd.testing.assert_frame_equal(whole.sample(20, seed=4), resumed.sample(20, seed=4))


def test_weighting_strategy_and_iterations_per_epoch_are_passed_through():
    cfg = FusionConfig(batch_size=32, hidden=16, latent_dim=8, weighting="cluster")
    m = model(epochs=1, config=cfg, weighting_options={"k": 3}, iterations_per_epoch=3)
    m.fit(sources())
    assert m.n_iter_ == 3
    for w in m.weights_.values():
        assert w.sum() == pytest.approx(160) and not np.allclose(w, 1.0)


def test_learning_signal_marginals_and_cross_source_correlations():
    # a faster discriminator (lr_d = 5 lr_g) makes 400 iterations enough on every one of the 8
    # seeds tried (max |mean error| <= 0.31 sd, sd ratios 0.78-1.4, |corr| >= 0.97); with the
    # Appendix C rates the BCE game collapses for ~1500 iterations before it spreads out
    cfg = FusionConfig(batch_size=32, hidden=32, latent_dim=8, lr_g=2e-4, lr_d=1e-3)
    m = FusionGAN(epochs=1, config=cfg, iterations_per_epoch=400, seed=0).fit(sources(300))
    out = m.sample(2000, seed=0)
    real = pd.concat([m.train_["A"], m.train_["B"]])
    assert ((out.mean() - real.mean()).abs() / real.std() < 0.5).all(), out.mean()
    assert (out.std() / real.std()).between(0.6, 1.6).all(), out.std()
    corr = out.corr()  # y and z were never observed together: the link goes through x
    assert corr.loc["x", "y"] > 0.8 and corr.loc["x", "z"] < -0.8
    assert corr.loc["y", "z"] < -0.6


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("change, match", [
    (lambda s: {"A": s["A"]}, "at least 2 source"),
    (lambda s: {**s, "C": pd.DataFrame(index=range(50))}, "'C' has no columns"),
    (lambda s: {"A": s["A"], "B": s["B"].rename(columns={"x": "w"})}, "share no column"),
    (lambda s: {**s, "C": pd.DataFrame({"u": [1.0] * 50, "v": 2.0})},
     r"\['C'\] share no column"),
    (lambda s: {**s, "B": s["B"].assign(g="a")}, "'g' of source 'B' is not numeric.*encode"),
    (lambda s: {**s, "A": s["A"].assign(y=np.r_[np.nan, s["A"]["y"][1:]])}, "NaN or inf.*'y'"),
    (lambda s: {**s, "B": s["B"].assign(z=np.r_[np.inf, s["B"]["z"][1:]])}, "NaN or inf.*'z'"),
    (lambda s: {**s, "B": s["B"].iloc[:30]}, r"'B' has 24 training rows.*lower batch_size"),
    (lambda s: [s["A"], s["B"]], "SourceSet")])
def test_fit_rejects_bad_sources(change, match):
    with pytest.raises(InvalidInputError, match=match):
        model().fit(change(sources()))


@pytest.mark.parametrize("kw, match", [
    ({"epochs": 0}, "epochs"), ({"config": {"batch_size": 32}}, "FusionConfig"),
    ({"iterations_per_epoch": 0}, "iterations_per_epoch"), ({"seed": -1}, "seed"),
    ({"weighting_options": 3}, "weighting_options"), ({"standardize": "yes"}, "standardize"),
    ({"checkpoint_every": 5}, "checkpoint_path")])
def test_fit_rejects_bad_settings(kw, match):
    with pytest.raises(InvalidInputError, match=match):
        model(**kw).fit(sources())


def test_sample_rejects_bad_n_and_needs_fit(fitted):
    for n in (0, -3, 2.5, "10"):
        with pytest.raises(InvalidInputError, match="positive int"):
            fitted.sample(n)
    with pytest.raises(NotFittedError, match=r"call fit\(sources\)"):
        model().sample(5)
    with pytest.raises(NotFittedError):
        model().history_  # noqa: B018


def test_failed_refit_leaves_the_model_unfitted():
    m = model(epochs=1).fit(sources())
    with pytest.raises(InvalidInputError):
        m.fit({"A": sources()["A"]})
    with pytest.raises(NotFittedError):
        m.sample(3)


def test_a_constant_continuous_column_is_sampled_as_its_value():
    src = sources()
    src["B"] = src["B"].assign(c=3.0)
    out = model(epochs=1).fit(src).sample(50, seed=1)
    assert (out["c"] == 3.0).all()  # not 3 + the generator's output on a unit scale
    assert out["x"].nunique() == 50


@pytest.mark.parametrize("standardize", [True, False])
def test_finite_values_too_large_to_encode_are_refused_not_sampled_as_inf(standardize):
    src = sources()
    src["A"] = src["A"].assign(y=src["A"]["y"] * 1e299)  # finite, up to about 1e301
    with pytest.raises(InvalidInputError, match=r"column 'y'.*too large.*rescale"):
        model(epochs=1, standardize=standardize).fit(src)


def test_sampling_more_rows_than_memory_holds_is_a_clear_error(fitted):
    with pytest.raises(InvalidInputError, match="n=1,000,000,000,000 rows.*memory"):
        fitted.sample(10**12)
