"""Repeated fits of the stochastic generators (fusionlib.fairtest.repeated_fits): fit 0 is the
protocol's own fit, the others differ, and the same seed repeats everything."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from fusionlib.fairtest.repeated_fits import fit_seeds, latent_fits
from fusionlib.rng import child

from .conftest import FAST


@pytest.fixture(scope="module")
def fits(compas_result):
    cfg = dataclasses.replace(FAST, latent_fits=3)
    return latent_fits(compas_result.prepared, cfg, seed=0)


def test_fit_zero_has_the_protocols_seeds():
    assert fit_seeds(5, "Latent", "score", 0) == (child(5, "fit", "Latent", "score"),
                                                  child(5, "sample", "Latent", "score"))
    assert fit_seeds(5, "CTGAN", "", 0)[0] == child(5, "fit", "CTGAN", "-")
    assert fit_seeds(5, "Latent", "score", 1) != fit_seeds(5, "Latent", "score", 0)


def test_fit_zero_is_the_protocols_latent_set(compas_result, fits):
    scores, diffs = fits
    assert sorted(scores["fit"].unique()) == [0, 1, 2]
    assert len(scores) == 3 * len(compas_result.prepared.spec.overlaps)
    proto = compas_result.fidelity.set_index(["method", "overlap"])
    first = scores[scores["fit"] == 0].set_index("overlap")
    for overlap, row in first.iterrows():
        for m in ("1-TVD", "CS", "KL (race)", "KL (sex)"):
            assert row[m] == proto.loc[("Latent", overlap), m], (overlap, m)
    t9 = compas_result.table9.set_index(["overlap", "attribute", "metric"])
    d0 = diffs[diffs["fit"] == 0].set_index(["overlap", "attribute", "metric"])
    lat = t9[t9["method"] == "Latent"]["abs_diff"]
    pd.testing.assert_series_equal(d0["abs_diff"].sort_index(), lat.sort_index(),
                                   check_names=False)


def test_other_fits_differ_and_the_same_seed_repeats(compas_result, fits):
    scores, _ = fits
    by_fit = scores.groupby("fit")["1-TVD"].apply(tuple)
    assert len(set(by_fit)) == 3  # three different EM starts, three different sets
    again = latent_fits(compas_result.prepared, dataclasses.replace(FAST, latent_fits=3), seed=0)
    pd.testing.assert_frame_equal(scores, again[0])
    other = latent_fits(compas_result.prepared, dataclasses.replace(FAST, latent_fits=3), seed=1)
    assert not scores["1-TVD"].equals(other[0]["1-TVD"])
