"""The conventions users bring from scikit-learn and SDV.

* ``fusionlib.errors.NotFittedError`` is scikit-learn's too: an unfitted estimator of fusionlib
  is caught by ``except sklearn.exceptions.NotFittedError``.
* Estimators and synthesizers that take hyperparameters follow scikit-learn's contract:
  ``get_params`` / ``set_params`` name every constructor argument and ``sklearn.base.clone``
  copies them (``seed`` instead of ``random_state``: streams are derived from it by key,
  :mod:`fusionlib.rng`).
* Every synthesizer's ``sample(n)`` works without a seed, as SDV's does: the default is the
  documented stream 0, so ``sample(n) == sample(n, seed=0)``.
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pandas as pd
import pytest
import sklearn.base
import sklearn.exceptions

from fusionlib.data.sources import SourceSet

#: (module, class, hyperparameters other than the defaults)
ESTIMATORS = [
    ("fusionlib.encoding", "IndicatorEncoder", {"handle_unknown": "ignore"}),
    ("fusionlib.encoding", "TabularEncoder", {"discrete_columns": ("a",)}),
    ("fusionlib.matching.hotdeck", "HotDeckMatcher", {"k": 3, "seed": 4}),
    ("fusionlib.ptgan.tabular.model", "TabularPTGAN", {"n_iter": 7, "seed": 2}),
    ("fusionlib.fusion.synthesizer", "FusionGAN", {"epochs": 3}),
    ("fusionlib.fairtest.estimators.latent_nb", "LatentNaiveBayes", {"n_latent": 3}),
    ("fusionlib.fairtest.estimators.baselines", "IndependentModel", {}),
    ("fusionlib.fairtest.estimators.baselines", "CTGANBaseline", {"epochs": 2}),
]
#: synthesizers: classes with ``sample(n, seed)``
SYNTHESIZERS = [e for e in ESTIMATORS if hasattr(
    getattr(importlib.import_module(e[0]), e[1]), "sample")]


def _cls(module: str, name: str) -> type:
    return getattr(importlib.import_module(module), name)


def test_not_fitted_error_is_scikit_learns():
    from fusionlib.errors import FusionlibError, NotFittedError

    assert issubclass(NotFittedError, sklearn.exceptions.NotFittedError)
    assert issubclass(NotFittedError, FusionlibError)
    assert issubclass(NotFittedError, AttributeError) and issubclass(NotFittedError, ValueError)
    import fusionlib

    assert fusionlib.NotFittedError is NotFittedError


@pytest.mark.parametrize("module, name, params", ESTIMATORS, ids=[e[1] for e in ESTIMATORS])
def test_hyperparameters_follow_the_scikit_learn_contract(module, name, params):
    cls = _cls(module, name)
    est = cls(**params)
    got = est.get_params()
    named = {k for k, v in inspect.signature(cls.__init__).parameters.items()
             if k != "self" and v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD)}
    assert set(got) == named
    assert {k: got[k] for k in params} == params
    twin = sklearn.base.clone(est)
    assert type(twin) is cls and twin is not est
    assert twin.get_params().keys() == got.keys()
    assert {k: twin.get_params()[k] for k in params} == params
    if params:
        key = next(iter(params))
        assert cls().set_params(**{key: params[key]}).get_params()[key] == params[key]


@pytest.mark.parametrize("module, name, params", SYNTHESIZERS,
                         ids=[e[1] for e in SYNTHESIZERS])
def test_sample_needs_no_seed_and_an_unfitted_one_raises_scikit_learns_error(module, name,
                                                                             params):
    cls = _cls(module, name)
    assert inspect.signature(cls.sample).parameters["seed"].default == 0
    with pytest.raises(sklearn.exceptions.NotFittedError):
        cls(**params).sample(5)


def test_an_unfitted_encoder_raises_scikit_learns_error():
    from fusionlib.encoding import IndicatorEncoder, TabularEncoder

    frame = pd.DataFrame({"a": ["x", "y"]})
    for enc in (IndicatorEncoder(), TabularEncoder(discrete_columns=("a",))):
        with pytest.raises(sklearn.exceptions.NotFittedError):
            enc.transform(frame)


def test_sample_without_a_seed_is_the_default_stream():
    from fusionlib.matching.hotdeck import HotDeckMatcher

    rng = np.random.default_rng(0)
    sources = SourceSet({"A": pd.DataFrame({"x": rng.normal(size=40), "y": rng.normal(size=40)}),
                         "B": pd.DataFrame({"x": rng.normal(size=30), "z": rng.normal(size=30)})})
    m = HotDeckMatcher().fit(sources)
    pd.testing.assert_frame_equal(m.sample(25), m.sample(25, seed=0))
    assert not m.sample(25).equals(m.sample(25, seed=1))
