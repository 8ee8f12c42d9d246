"""Hot-deck matching: closed forms under the CIA, determinism, donor rules and bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fusionlib.data.sources import SourceSet
from fusionlib.errors import InvalidInputError, NotFittedError
from fusionlib.matching import HotDeckMatcher, frechet_cell_bounds

# rho_XY = rho_XZ = 0.7 but rho_YZ = 0: the CIA answer 0.49 is far from the truth 0
GAUSS = np.array([[1.0, 0.7, 0.7], [0.7, 1.0, 0.0], [0.7, 0.0, 1.0]])


def gaussian_sources(n: int, seed: int = 0) -> SourceSet:
    rng = np.random.default_rng(seed)
    d = rng.multivariate_normal(np.zeros(3), GAUSS, size=2 * n)
    return SourceSet({"A": pd.DataFrame(d[:n, :2], columns=["x", "y"]),
                      "B": pd.DataFrame(d[n:, [0, 2]], columns=["x", "z"])})


def categorical_sources(n: int, seed: int = 0):
    """X in {a, b, c}; Y, Z binary with known conditionals (Y and Z dependent given X)."""
    rng = np.random.default_rng(seed)
    px = np.array([0.5, 0.3, 0.2])
    py1, pz1 = np.array([0.2, 0.6, 0.9]), np.array([0.7, 0.4, 0.1])
    tables = {}
    for name, other, p1 in (("A", "y", py1), ("B", "z", pz1)):
        x = rng.choice(3, size=n, p=px)
        tables[name] = pd.DataFrame({"x": np.array(["a", "b", "c"])[x],
                                     other: np.where(rng.random(n) < p1[x], "1", "0")})
    conds = (np.c_[1 - py1, py1], np.c_[1 - pz1, pz1])
    return SourceSet(tables), px, conds


def test_nnd_matched_correlation_is_the_cia_value():
    n = 4_000
    fused = HotDeckMatcher("nnd").fit(gaussian_sources(n)).fused_
    # sample correlation sd <= 1/sqrt(n); 4 sd plus 0.02 for the residual X-distance of NND
    tol = 4 / np.sqrt(n) + 0.02
    assert fused[["y", "z"]].corr().iloc[0, 1] == pytest.approx(0.7 * 0.7, abs=tol)
    assert fused[["x", "y"]].corr().iloc[0, 1] == pytest.approx(0.7, abs=tol)
    assert fused[["x", "z"]].corr().iloc[0, 1] == pytest.approx(0.7, abs=tol)


def test_rnd_sample_correlation_is_the_cia_value():
    n = 3_000
    model = HotDeckMatcher("rnd", k=3).fit(gaussian_sources(n, seed=1))
    s = model.sample(n, seed=0)
    assert s[["y", "z"]].corr().iloc[0, 1] == pytest.approx(0.49, abs=4 / np.sqrt(n) + 0.03)


def test_random_hotdeck_cells_are_the_cia_cells():
    n = 20_000
    sources, px, (py, pz) = categorical_sources(n)
    fused = HotDeckMatcher().fit(sources).fused_
    _, cia, _ = frechet_cell_bounds(px, py, pz)
    got = pd.crosstab(fused["y"], fused["z"], normalize=True).to_numpy()
    np.testing.assert_allclose(got, cia, atol=4 * np.sqrt(0.25 / n) + 0.01)


def test_random_hotdeck_donor_is_in_the_recipients_class():
    sources, _, _ = categorical_sources(500)
    donor = sources["B"].assign(z=lambda d: d["x"] + "-" + d["z"])
    model = HotDeckMatcher("random").fit({"A": sources["A"], "B": donor})
    cls = model.fused_["z"].str.split("-").str[0]
    assert (cls == model.fused_["x"]).all()
    pd.testing.assert_frame_equal(model.fused_[["x", "y"]], sources["A"])


def test_nnd_takes_the_nearest_donor():
    a = pd.DataFrame({"x": [0.0, 10.0, 4.9], "y": [1, 2, 3]})
    b = pd.DataFrame({"x": [0.2, 9.0, 5.0, 100.0], "z": ["p", "q", "r", "s"]})
    fused = HotDeckMatcher("nnd").fit({"A": a, "B": b}).fused_
    assert fused["z"].tolist() == ["p", "q", "r"]
    assert list(fused.columns) == ["x", "y", "z"]


def test_nnd_breaks_ties_at_random():
    a = pd.DataFrame({"x": [0.0] * 400, "y": range(400)})
    b = pd.DataFrame({"x": [0.0, 0.0], "z": ["p", "q"]})
    share = (HotDeckMatcher("nnd").fit({"A": a, "B": b}).fused_["z"] == "p").mean()
    assert 0.35 < share < 0.65


def test_classes_and_distance_combined():
    a = pd.DataFrame({"g": ["u", "v"], "x": [0.0, 0.0], "y": [1, 2]})
    b = pd.DataFrame({"g": ["u", "v", "v"], "x": [5.0, 0.1, 9.0], "z": ["u5", "v0", "v9"]})
    fused = HotDeckMatcher().fit({"A": a, "B": b}).fused_
    assert fused["z"].tolist() == ["u5", "v0"]


def test_sample_determinism():
    model = HotDeckMatcher("rnd").fit(gaussian_sources(300))
    pd.testing.assert_frame_equal(model.sample(200, seed=3), model.sample(200, seed=3))
    assert not model.sample(200, seed=3).equals(model.sample(200, seed=4))
    assert model.sample(50, seed=(3, "k")).shape == (50, 3)


def test_sampling_more_rows_than_memory_holds_is_a_named_error():
    """sample(10**12) raised numpy's raw MemoryError ("Unable to allocate 7.28 TiB")."""
    model = HotDeckMatcher("random").fit(gaussian_sources(50))
    with pytest.raises(InvalidInputError, match=r"sampling n=1,000,000,000,000 rows needs more "
                       r"memory than this machine can give.*batches"):
        model.sample(10**12)
    assert model.sample(5).shape == (5, 3)  # the model is unharmed


def test_recipient_and_donor_roles():
    model = HotDeckMatcher(recipient="B").fit(gaussian_sources(100))
    assert model.donor_ == "A" and list(model.fused_.columns) == ["x", "y", "z"]
    assert len(model.fused_) == 100


@pytest.mark.parametrize("bad, match", [
    ({"A": pd.DataFrame({"x": [1.0], "y": [1]}), "B": pd.DataFrame({"w": [1.0], "z": [1]})},
     "share no column"),
    ({"A": pd.DataFrame({"x": [1.0, np.nan], "y": [1, 2]}),
      "B": pd.DataFrame({"x": [1.0], "z": [1]})}, "missing values"),
    ({"A": pd.DataFrame({"x": ["a", "b"], "y": [1, 2]}),
      "B": pd.DataFrame({"x": ["a", "a"], "z": [1, 2]})}, "one source only"),
    ({"A": pd.DataFrame({"g": ["u", "v"], "h": ["1", "2"], "y": [1, 2]}),
      "B": pd.DataFrame({"g": ["u", "v"], "h": ["2", "1"], "z": [1, 2]})}, "no donor"),
    ({"A": pd.DataFrame({"x": [1.0], "y": [1]})}, "exactly 2"),
])
def test_bad_sources_raise(bad, match):
    with pytest.raises(InvalidInputError, match=match):
        HotDeckMatcher().fit(bad)


def test_bad_options_raise():
    s = gaussian_sources(50)
    with pytest.raises(InvalidInputError, match="method"):
        HotDeckMatcher("closest").fit(s)
    with pytest.raises(InvalidInputError, match="not overlap"):
        HotDeckMatcher(match_on=("y",)).fit(s)
    with pytest.raises(InvalidInputError, match="recipient"):
        HotDeckMatcher(recipient="C").fit(s)
    with pytest.raises(InvalidInputError, match="numeric overlap"):
        HotDeckMatcher("nnd").fit(categorical_sources(50)[0])
    with pytest.raises(NotFittedError):
        HotDeckMatcher().sample(5, seed=0)
