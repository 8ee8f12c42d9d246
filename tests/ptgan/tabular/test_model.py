"""TabularPTGAN: encoding round trip, sampling at any alpha, hooks, bad input, determinism."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.ptgan.tabular.model import DISCREPANCIES, TabularPTGAN, tabular_config
from fusionlib.ptgan.tempering import tempered_minibatch


def _table(n: int = 120, seed: int = 0) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": g.integers(18, 70, n),
        "score": g.normal(0.0, 1.0, n),
        "colour": g.choice(["red", "green", "blue"], n),
        "const": ["x"] * n,  # a discrete column with one level
        "y": g.integers(0, 2, n).astype(str),
    })


DISC = ("colour", "const", "y")


def _fit(method="pt+cp", n_iter=4, seed=0, **kw) -> TabularPTGAN:
    return TabularPTGAN(method, discrete_columns=DISC, n_iter=n_iter, seed=seed,
                        overrides={"batch_size": 16}, **kw).fit(_table())


def test_tabular_config_uses_table9_latent_and_r_half():
    cfg = tabular_config("pt+cp", "jsd")
    assert (cfg.latent_dim, cfg.r, cfg.loss, cfg.penalty_weight) == (16, 0.5, "js", 100.0)
    mp = tabular_config("mp", "pd", {"penalty_weight": 10.0})
    # PD: the critic objective the paper prints (labels 0/1); Mao et al.'s labels stay available
    assert (mp.r, mp.loss, mp.penalty_weight, mp.conditional) == (1.0, "pearson01", 10.0, False)
    assert tabular_config("mp", "pd-mao").loss == "pearson"
    assert set(DISCREPANCIES) == {"nd", "jsd", "pd", "pd-mao"}


def test_samples_decode_to_the_table_schema():
    df = _table()
    out = _fit().sample(200, seed=1)
    assert list(out.columns) == list(df.columns)
    assert (out.dtypes == df.dtypes).all()
    assert set(out["colour"]) <= {"red", "green", "blue"}
    assert set(out["const"]) == {"x"}
    assert out["age"].between(df["age"].min(), df["age"].max()).all()


def test_gumbel_sampling_draws_several_categories():
    # the noiseless softmax would give one (modal) category for every row of an untrained net
    out = _fit(n_iter=1).sample(300, seed=2)
    assert out["colour"].nunique() > 1


@pytest.mark.parametrize("disc", sorted(DISCREPANCIES))
@pytest.mark.parametrize("method", ["pt+cp", "mp"])
def test_every_method_and_discrepancy_trains(method, disc):
    m = TabularPTGAN(method, disc, discrete_columns=DISC, n_iter=3,
                     overrides={"batch_size": 16}).fit(_table())
    assert m.trainer_.iteration_ == 3
    assert np.isfinite(m.sample_encoded(10, 0)).all()


def test_same_seed_same_samples_other_seed_other_samples():
    a, b = _fit(seed=3), _fit(seed=3)
    pd.testing.assert_frame_equal(a.sample(50, 0), b.sample(50, 0))
    assert not np.allclose(a.sample_encoded(50, 0), a.sample_encoded(50, 1))
    assert not np.allclose(_fit(seed=4).sample_encoded(50, 0), a.sample_encoded(50, 0))


def test_sampling_does_not_disturb_training():
    a = _fit(n_iter=6)
    b = TabularPTGAN("pt+cp", discrete_columns=DISC, n_iter=6, overrides={"batch_size": 16})
    b.fit(_table(), callback=lambda m, it: m.sample(20, it), callback_at=[2, 4])
    np.testing.assert_array_equal(a.sample_encoded(30, 0), b.sample_encoded(30, 0))


def test_sample_at_any_alpha_for_pt_and_only_one_for_mp():
    pt = _fit()
    x = pt.sample_encoded(40, 0, alpha=0.5)
    assert x.shape == (40, pt.encoder_.n_features_out_)
    with pytest.raises(InvalidInputError, match="alpha"):
        _fit("mp").sample(10, 0, alpha=0.5)
    for bad in (-0.1, 1.5):
        with pytest.raises(InvalidInputError):
            pt.sample(10, 0, alpha=bad)


def test_only_continuous_and_only_discrete_tables_work():
    df = _table()
    cont = TabularPTGAN("mp", n_iter=2, overrides={"batch_size": 16}).fit(df[["age", "score"]])
    assert list(cont.sample(5, 0).columns) == ["age", "score"]
    disc = TabularPTGAN("pt+cp", discrete_columns=("colour", "y"), n_iter=2,
                        overrides={"batch_size": 16}).fit(df[["colour", "y"]])
    assert set(disc.sample(30, 0)["y"]) <= {"0", "1"}


def test_bad_input_raises():
    df = _table()
    with pytest.raises(NotFittedError):
        TabularPTGAN().sample(5, 0)
    with pytest.raises(InvalidInputError, match="nope"):
        TabularPTGAN(discrete_columns=("nope",), n_iter=1).fit(df)
    with pytest.raises(InvalidInputError, match="list of column names"):
        TabularPTGAN(discrete_columns="colour", n_iter=1).fit(df)
    with pytest.raises(InvalidInputError, match="missing values"):
        TabularPTGAN(discrete_columns=DISC, n_iter=1).fit(df.assign(score=np.nan))
    with pytest.raises(InvalidInputError, match="not numeric"):
        TabularPTGAN(discrete_columns=("colour",), n_iter=1).fit(df)
    with pytest.raises(InvalidInputError):
        TabularPTGAN("nope").fit(df)
    with pytest.raises(InvalidInputError):
        TabularPTGAN(discrepancy="wasserstein").fit(df)
    with pytest.raises(InvalidInputError):
        TabularPTGAN().fit(df.to_numpy())


def test_custom_minibatch_replaces_algorithm_1():
    calls = {"build": 0, "draw": 0}

    def builder(encoder, x):
        calls["build"] += 1
        assert x.shape[1] == encoder.n_features_out_

        def fn(data, batch_size, r, generator):
            calls["draw"] += 1
            return tempered_minibatch(data, batch_size, r, generator)
        return fn

    TabularPTGAN(discrete_columns=DISC, n_iter=3, overrides={"batch_size": 16},
                 minibatch=builder).fit(_table())
    assert calls == {"build": 1, "draw": 3}


def test_custom_minibatch_is_checked():
    def wrong(encoder, x):
        return lambda data, b, r, g: tempered_minibatch(data, b + 1, r, g)
    with pytest.raises(InvalidInputError, match="TemperedBatch"):
        TabularPTGAN(discrete_columns=DISC, n_iter=1, overrides={"batch_size": 16},
                     minibatch=wrong).fit(_table())
    with pytest.raises(InvalidInputError, match="tempered"):
        TabularPTGAN("mp", discrete_columns=DISC, n_iter=1,
                     minibatch=lambda e, x: tempered_minibatch).fit(_table())


def test_generator_term_is_added_and_can_start_later():
    seen = []

    def builder(encoder):
        def term(fake, inputs):
            seen.append(fake.shape)
            return 10.0 * fake.mean().abs()
        return term

    plain = _fit(n_iter=2)
    with_term = _fit(n_iter=2)
    with_term.fit_more(4, generator_term=builder)
    plain.fit_more(4)
    assert len(seen) == 2 and seen[0][0] == 16
    assert not np.allclose(plain.sample_encoded(20, 0), with_term.sample_encoded(20, 0))
    with pytest.raises(InvalidInputError, match="at least"):
        with_term.fit_more(2)


def test_generator_sees_t_alpha_only_when_tempered():
    pt, mp = _fit("pt+cp"), _fit("mp")
    first = pt.step_.critic.net[0]
    assert first.in_features == pt.encoder_.n_features_out_ + 1
    assert mp.step_.critic.net[0].in_features == mp.encoder_.n_features_out_
    assert pt.step_.generator.body[0].in_features == 17
    assert isinstance(pt.step_.sample(5, torch.Generator().manual_seed(0)), torch.Tensor)
