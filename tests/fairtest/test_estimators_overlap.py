"""Independence Given Overlap and Marginal Preservation (seed 002, Sections 3.1.1-3.1.2, 3.1.4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from fusionlib.fairtest import IndependenceGivenOverlap, MarginalPreservation

# Hand-made pair. Internal (o, y), 4 rows: p1(a) = 3/4, p1(b) = 1/4;
#   p(y=1 | a) = 2/3, p(y=0 | a) = 1/3, p(y=1 | b) = 1.
# External (o, s), 4 rows: p2(a) = 1/4, p2(b) = 3/4;
#   p(s=m | a) = 1, p(s=m | b) = 1/3, p(s=f | b) = 2/3.
INTERNAL = pd.DataFrame({"o": ["a", "a", "a", "b"], "y": ["1", "1", "0", "1"]})
EXTERNAL = pd.DataFrame({"o": ["a", "b", "b", "b"], "s": ["m", "m", "f", "f"]})
CELLS = pd.DataFrame(
    {"o": ["a", "a", "b", "b", "a", "b"], "y": ["1", "0", "1", "1", "1", "0"],
     "s": ["m", "m", "m", "f", "f", "m"]}
)


def test_independence_given_overlap_exact_joint_by_hand():
    model = IndependenceGivenOverlap().fit(INTERNAL, EXTERNAL)
    # p(o) = average of proportions: a = (3/4 + 1/4) / 2 = 1/2, b = (1/4 + 3/4) / 2 = 1/2
    assert_allclose(model.overlap_proba_, [0.5, 0.5])
    expected = [
        0.5 * 2 / 3 * 1,  # (a, 1, m) = 1/3
        0.5 * 1 / 3 * 1,  # (a, 0, m) = 1/6
        0.5 * 1 * 1 / 3,  # (b, 1, m) = 1/6
        0.5 * 1 * 2 / 3,  # (b, 1, f) = 1/3
        0.0,  # (a, 1, f): s = f never occurs with o = a
        0.0,  # (b, 0, m): y = 0 never occurs with o = b
    ]
    assert_allclose(model.joint_proba(CELLS), expected, atol=1e-15)


def test_marginal_preservation_internal_exact_joint_by_hand():
    model = MarginalPreservation(keep="internal").fit(INTERNAL, EXTERNAL)
    expected = [
        3 / 4 * 2 / 3,  # (a, 1, m) = p_int(a, 1) * p(m | a) = 1/2
        3 / 4 * 1 / 3,  # (a, 0, m) = 1/4
        1 / 4 * 1 / 3,  # (b, 1, m) = 1/12
        1 / 4 * 2 / 3,  # (b, 1, f) = 1/6
        0.0,
        0.0,
    ]
    assert_allclose(model.joint_proba(CELLS), expected, atol=1e-15)


def test_marginal_preservation_external_exact_joint_by_hand():
    model = MarginalPreservation(keep="external").fit(INTERNAL, EXTERNAL)
    expected = [
        1 / 4 * 2 / 3,  # (a, 1, m) = p(1 | a) * p_ext(a, m) = 1/6
        1 / 4 * 1 / 3,  # (a, 0, m) = 1/12
        1 / 4 * 1,  # (b, 1, m) = 1 * p_ext(b, m) = 1/4
        2 / 4 * 1,  # (b, 1, f) = 1 * p_ext(b, f) = 1/2
        0.0,
        0.0,
    ]
    assert_allclose(model.joint_proba(CELLS), expected, atol=1e-15)


@pytest.mark.parametrize("keep, table, columns", [
    ("internal", INTERNAL, ["o", "y"]),
    ("external", EXTERNAL, ["o", "s"]),
])
def test_marginal_preservation_keeps_the_whole_table_joint(keep, table, columns):
    model = MarginalPreservation(keep=keep).fit(INTERNAL, EXTERNAL)
    got = model.proba_table(columns)
    empirical = table.value_counts(normalize=True).rename("proba").reset_index()
    merged = got.merge(empirical, on=columns, suffixes=("", "_emp"))
    assert len(merged) == len(got) == len(empirical)
    assert_allclose(merged["proba"], merged["proba_emp"], atol=1e-15)


def test_consistent_marginals_give_the_shared_overlap_marginal():
    # both tables show o = a in 2 of 3 rows, so the average p(o) is that shared marginal
    internal = pd.DataFrame({"o": ["a", "a", "b"], "y": ["0", "1", "1"]})
    external = pd.DataFrame({"o": ["b", "a", "a"], "s": ["f", "m", "f"]})
    model = IndependenceGivenOverlap().fit(internal, external)
    assert_allclose(model.overlap_proba_, [2 / 3, 1 / 3])


def _random_pair(seed: int, n_int: int = 400, n_ext: int = 250):
    rng = np.random.default_rng(seed)
    o1 = rng.choice(["p", "q"], n_int + n_ext)
    o2 = rng.choice(["u", "v", "w"], n_int + n_ext, p=[0.5, 0.3, 0.2])
    internal = pd.DataFrame({
        "x": np.where(rng.random(n_int) < 0.3 + 0.4 * (o1[:n_int] == "p"), "x1", "x0"),
        "o2": o2[:n_int],  # overlap columns interleaved with own columns on purpose
        "o1": o1[:n_int],
        "y": rng.choice(["0", "1", "2"], n_int),
    })
    external = pd.DataFrame({
        "o1": o1[n_int:], "s": np.where(o2[n_int:] == "u", "m", rng.choice(["m", "f"], n_ext)),
        "o2": o2[n_int:],
    })
    return internal, external


def _reference_joint(internal, external, overlap, weights: str) -> dict:
    """Independent implementation with pandas dictionaries (same formula, other code)."""
    own_i = [c for c in internal.columns if c not in overlap]
    own_e = [c for c in external.columns if c not in overlap]
    p1 = internal.groupby(overlap).size() / len(internal)
    p2 = external.groupby(overlap).size() / len(external)
    p_o = {"average": (p1 + p2) / 2, "internal": p1, "external": p2}[weights]
    cond_i = internal.groupby(overlap + own_i).size() / internal.groupby(overlap).size()
    cond_e = external.groupby(overlap + own_e).size() / external.groupby(overlap).size()
    joint = {}
    for ki, pi in cond_i.items():
        for ke, pe in cond_e.items():
            o = ki[: len(overlap)]
            if ke[: len(overlap)] == o:
                joint[(o, ki[len(overlap):], ke[len(overlap):])] = p_o[o] * pi * pe
    return joint


@pytest.mark.parametrize("model, weights", [
    (IndependenceGivenOverlap(), "average"),
    (MarginalPreservation(keep="internal"), "internal"),
    (MarginalPreservation(keep="external"), "external"),
])
def test_two_column_overlap_matches_independent_implementation(model, weights):
    internal, external = _random_pair(0)
    overlap = ["o2", "o1"]
    model.fit(internal, external)
    assert model.overlap_ == overlap
    assert model.columns_ == ["x", "o2", "o1", "y", "s"]
    ref = _reference_joint(internal, external, overlap, weights)
    rows = pd.DataFrame(
        [dict(zip(overlap, o, strict=True)) | {"x": i[0], "y": i[1], "s": e[0]}
         for (o, i, e) in ref]
    )
    assert_allclose(model.joint_proba(rows), list(ref.values()), rtol=1e-12)
    assert sum(ref.values()) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("model", [IndependenceGivenOverlap(), MarginalPreservation()])
def test_sample_frequencies_converge_to_joint_proba(model):
    internal, external = _random_pair(1)
    model.fit(internal, external)
    n = 200_000
    freq = model.sample(n, seed=3).value_counts(normalize=True).rename("freq").reset_index()
    support = model.proba_table(model.columns_)
    merged = support.merge(freq, on=model.columns_, how="outer").fillna(0.0)
    assert_allclose(support["proba"].sum(), 1.0, atol=1e-12)
    assert_allclose(model.joint_proba(support), support["proba"], rtol=1e-12)
    # binomial sd of a cell frequency <= sqrt(0.25 / n) = 0.0011; 0.006 is > 5 sd
    assert_allclose(merged["freq"], merged["proba"], atol=0.006)


def test_proba_table_of_a_pair_matches_the_joint_summed_out():
    internal, external = _random_pair(2)
    model = IndependenceGivenOverlap().fit(internal, external)
    full = model.proba_table(model.columns_)
    expected = full.groupby(["y", "s"], as_index=False)["proba"].sum()
    got = model.proba_table(["y", "s"])
    assert_allclose(got["proba"], expected["proba"], rtol=1e-12)
    assert got[["y", "s"]].equals(expected[["y", "s"]])


@pytest.mark.parametrize("model", [IndependenceGivenOverlap(), MarginalPreservation()])
def test_same_seed_same_sample_other_seed_other_sample(model):
    internal, external = _random_pair(3)
    model.fit(internal, external)
    a, b, c = model.sample(500, seed=7), model.sample(500, seed=7), model.sample(500, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert list(a.columns) == model.columns_
    assert all(isinstance(v, str) for v in a.to_numpy().ravel())


def test_marginal_preservation_drops_overlap_values_only_the_other_table_shows():
    # the combination (o1=p, o2=w) appears in the external table only: allowed for
    # keep="internal" (the kept internal marginal gives it probability 0)
    internal = pd.DataFrame({"o1": ["p", "q", "q"], "o2": ["u", "w", "u"], "y": ["0", "1", "1"]})
    external = pd.DataFrame({"o1": ["p", "p", "q", "q"], "o2": ["u", "w", "w", "u"],
                             "s": ["m", "f", "f", "m"]})
    model = MarginalPreservation(keep="internal").fit(internal, external)
    cells = pd.DataFrame({"o1": ["p"], "o2": ["w"], "y": ["0"], "s": ["f"]})
    assert_allclose(model.joint_proba(cells), [0.0])
    assert (model.sample(2000, seed=0)[["o1", "o2"]].agg("".join, axis=1) != "pw").all()
