"""Tests of the association measures of seed 002 (fusionlib.metrics.association)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from fusionlib.errors import InvalidInputError
from fusionlib.metrics.association import (
    cramers_v,
    cramers_v_matrix,
    dcc_matrix,
    mutual_information,
    plot_dcc_heatmaps,
)
from fusionlib.metrics.fidelity import JointKL
from tests.fairtest.conftest import frame as _frame


def test_cramers_v_hand_worked_two_by_two():
    # table [[3, 1], [1, 3]]: V = phi = |ad - bc| / sqrt(r1 r2 c1 c2) = (9 - 1) / sqrt(4^4) = 0.5
    x = pd.Series(["a"] * 4 + ["b"] * 4)
    y = pd.Series(["u", "u", "u", "v", "u", "v", "v", "v"])
    assert cramers_v(x, y) == pytest.approx(0.5)


def test_cramers_v_matches_chi_square_formula():
    from scipy.stats import chi2_contingency

    df = _frame(400, 20, shift=0.3)
    table = pd.crosstab(df["a"], df["b"]).to_numpy()
    chi2 = chi2_contingency(table, correction=False)[0]
    expected = np.sqrt(chi2 / (table.sum() * (min(table.shape) - 1)))
    assert cramers_v(df["a"], df["b"]) == pytest.approx(expected, rel=1e-12)


def test_cramers_v_extremes_and_constant_column():
    x = pd.Series(list("abcabc"))
    assert cramers_v(x, x.map({"a": "1", "b": "2", "c": "3"})) == pytest.approx(1.0)
    assert cramers_v(pd.Series(list("aabb")), pd.Series(list("uvuv"))) == pytest.approx(0.0)
    assert cramers_v(x, pd.Series(["k"] * 6)) == 0.0


def test_dcc_is_zero_for_identical_data_and_symmetric():
    real, syn = _frame(300, 9), _frame(300, 10, shift=0.6)
    assert_allclose(dcc_matrix(real, real).to_numpy(), 0.0, atol=1e-12)
    d = dcc_matrix(real, syn)
    assert_allclose(d.to_numpy(), d.to_numpy().T)
    assert (d.to_numpy() >= 0).all() and (d.to_numpy() <= 1).all()
    expected = abs(cramers_v(syn["a"], syn["b"]) - cramers_v(real["a"], real["b"]))
    assert d.loc["a", "b"] == pytest.approx(expected)
    assert_allclose(np.diag(cramers_v_matrix(real)), 1.0)


def test_plot_dcc_heatmaps_returns_one_axis_per_method():
    real = _frame(100, 0)
    fig = plot_dcc_heatmaps({"m1": dcc_matrix(real, _frame(100, 1)),
                             "m2": dcc_matrix(real, _frame(100, 2))}, ncols=2)
    assert sum(ax.get_visible() for ax in fig.axes) == 3  # two heatmaps + colour bar


# ---------------------------------------------------------------- mutual information
def test_mutual_information_hand_worked_value():
    df = pd.DataFrame({"A": ["u", "u", "p", "p"], "Y": ["0", "0", "0", "1"]})
    # p(u,0) = .5, p(p,0) = .25, p(p,1) = .25; p(u) = p(p) = .5; p(0) = .75, p(1) = .25
    # I = .5 ln(.5 / (.5 * .75)) + .25 ln(.25 / (.5 * .75)) + .25 ln(.25 / (.5 * .25))
    #   = .5 ln(4/3) + .25 ln(2/3) + .25 ln 2 = .143841 - .101366 + .173287 = 0.215762 nats
    expected = 0.5 * np.log(4 / 3) + 0.25 * np.log(2 / 3) + 0.25 * np.log(2)
    assert mutual_information(df, "A", "Y") == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(0.215762, abs=1e-6)


def test_mutual_information_properties_and_scikit_learn():
    from sklearn.metrics import mutual_info_score

    df = _frame(500, 21, shift=0.3)
    i_ab = mutual_information(df, "a", "b")
    assert i_ab == pytest.approx(mutual_information(df, "b", "a"), rel=1e-12)  # symmetric
    assert i_ab == pytest.approx(mutual_info_score(df["a"], df["b"]), rel=1e-10)  # nats
    freq = df["a"].value_counts(normalize=True).to_numpy()
    entropy_a = float(-(freq * np.log(freq)).sum())
    assert 0.0 < i_ab <= entropy_a + 1e-12  # 0 <= I(A; B) <= H(A)
    product = pd.DataFrame({"A": list("uupp"), "Y": list("0101")})  # joint = product of marginals
    assert mutual_information(product, "A", "Y") == pytest.approx(0.0, abs=1e-15)


def test_mutual_information_approximates_kl_of_the_independent_product():
    # weak association: KL(p_A p_Y || p_AY) (JointKL of an exact independent model) and
    # I(A; Y) = KL(p_AY || p_A p_Y) agree to second order in the dependence
    rng = np.random.default_rng(22)
    a = rng.choice(["u", "p"], 20_000)
    y = np.where(rng.random(20_000) < 0.3 + 0.05 * (a == "p"), "1", "0")
    real = pd.DataFrame({"A": a, "Y": y})
    pa, py = real["A"].value_counts(normalize=True), real["Y"].value_counts(normalize=True)
    n = 100_000  # cell counts of the product table, to 1e-5
    cells = [(va, vy) for va in pa.index for vy in py.index]
    counts = [int(round(n * pa[va] * py[vy])) for va, vy in cells]
    product = pd.DataFrame(np.repeat(np.array(cells, dtype=object), counts, axis=0),
                           columns=["A", "Y"])
    kl = JointKL("A", "Y", epsilon=0.0).compute(real, product)
    assert kl == pytest.approx(mutual_information(real, "A", "Y"), rel=0.05)


def test_mutual_information_rejects_bad_columns():
    df = pd.DataFrame({"A": ["u", "p"], "Y": ["0", None]})
    with pytest.raises(InvalidInputError, match="not in the table"):
        mutual_information(df, "race", "Y")
    with pytest.raises(InvalidInputError, match="missing values"):
        mutual_information(df, "A", "Y")
    with pytest.raises(InvalidInputError, match="different columns"):
        mutual_information(df, "A", "A")


@pytest.mark.parametrize("x, y, match", [
    ("abc", "abd", "1-D sequence"), (3, [1, 2], "1-D sequence"),
    ([1, 2, 1], [1, 2], "equal lengths"), ([], [], "empty"),
    (pd.Series(["a", None, "b"]), pd.Series(["u", "v", "v"]), "missing"),
])
def test_cramers_v_bad_input_is_an_input_error(x, y, match):
    with pytest.raises(InvalidInputError, match=match):
        cramers_v(x, y)


def test_cramers_v_accepts_lists_as_series():
    x, y = ["a", "b", "a", "b"], [1, 2, 1, 1]
    assert cramers_v(x, y) == cramers_v(pd.Series(x), pd.Series(y))


def test_cramers_v_matrix_needs_a_frame_and_its_columns():
    with pytest.raises(InvalidInputError, match="df must be a pandas DataFrame"):
        cramers_v_matrix([[1, 2]])
    with pytest.raises(InvalidInputError, match=r"columns \['nope'\] are not in the table"):
        cramers_v_matrix(pd.DataFrame({"a": [1, 2], "b": [1, 1]}), ["a", "nope"])
