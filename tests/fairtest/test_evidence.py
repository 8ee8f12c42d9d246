"""Our values as estimates (fusionlib.fairtest.evidence): which uncertainty each set gets."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fusionlib.compendium.verdicts import Estimate
from fusionlib.fairtest.evidence import (
    ctgan_reduction,
    difference,
    fidelity_estimates,
    kl_margin,
    lookup,
    mean_estimate,
    table9_estimates,
    with_estimates,
)
from fusionlib.fairtest.protocol.records import DatasetSummary


def _summary() -> DatasetSummary:
    fid = pd.DataFrame([
        {"dataset": "d", "method": m, "overlap": o, "1-TVD": 0.9, "1-TVD se": 0.01, "CS": 0.8,
         "CS se": 0.02, "DM": 0.6, "DM sd": 0.05, "DM n": 5, "DCC": 0.1, "DCC se": 0.003,
         "KL (a)": 0.01, "KL (a) se": 0.004}
        for m, o in (("IGO", "o"), ("Latent", "o"), ("CTGAN", ""), ("Indep", ""))])
    t9 = pd.DataFrame([{"dataset": "d", "method": "IGO", "overlap": "o", "attribute": "a",
                        "metric": "DI", "abs_diff": 0.1, "sd_synthetic": 0.03,
                        "sd_real": 0.04}])
    latent = pd.DataFrame([{"dataset": "d", "method": "Latent", "overlap": "o", "fit": f,
                            "1-TVD": v, "CS": v, "DM": v, "DCC": v, "KL (a)": v}
                           for f, v in enumerate([0.1, 0.2, 0.3])])
    ctgan = pd.DataFrame([{"dataset": "d", "method": "CTGAN", "overlap": "", "run": 0,
                           "1-TVD": 0.7, "CS": 0.6, "DM": 0.8, "DCC": 0.2, "KL (a)": 0.1}])
    return DatasetSummary("d", "run", fidelity=fid, table9=t9, protected=("a",),
                          latent_fit_scores=latent, ctgan_runs=ctgan)


def test_each_kind_of_set_gets_its_uncertainty():
    est = fidelity_estimates(_summary())
    igo = lookup(est, method="IGO", metric="CS")
    assert (igo.value, igo.se, igo.n) == (0.8, 0.02, None)  # bootstrap se
    dm = lookup(est, method="IGO", metric="DM")
    assert dm.value == 0.6 and dm.se == pytest.approx(0.05 / math.sqrt(5)) and dm.df == 4
    lat = lookup(est, method="Latent", metric="1-TVD")  # mean over fits, not the table row
    assert lat.value == pytest.approx(0.2) and lat.se == pytest.approx(0.1 / math.sqrt(3))
    ct = lookup(est, method="CTGAN", metric="DM")  # one training run: spread unknown
    assert ct.value == 0.8 and ct.se is None and ct.n == 1
    t9 = lookup(table9_estimates(_summary()), method="IGO", metric="DI")
    assert t9.se == pytest.approx(0.05)  # root-sum-square of the two bootstrap sds


def test_tables_show_the_estimates_values():
    s = _summary()
    out = with_estimates(s.fidelity, fidelity_estimates(s), ["dataset", "method", "overlap"])
    assert out.loc[out["method"] == "Latent", "CS"].item() == pytest.approx(0.2)
    assert out.loc[out["method"] == "IGO", "CS"].item() == 0.8


def test_combinations_and_margins():
    m = mean_estimate([Estimate(1.0, 0.1), Estimate(3.0, 0.3)])
    assert (m.value, m.se) == (2.0, pytest.approx(0.2))
    assert mean_estimate([Estimate(1.0, 0.1), Estimate(2.0, None)]).se is None
    d = difference(Estimate(1.0, 0.3), Estimate(0.5, 0.4))
    assert (d.value, d.se) == (0.5, pytest.approx(0.5))
    assert difference(Estimate(1.0, None), Estimate(0.5, 0.4)).se is None
    assert kl_margin(0.002) == pytest.approx(0.0015)
    assert np.isnan(lookup(fidelity_estimates(_summary()), method="x", metric="CS").value)


def test_ctgan_reduction_names_the_reduction():
    assert ctgan_reduction({"epochs": 300, "max_rows": None}, 700) is None
    assert ctgan_reduction({"epochs": 30, "max_rows": None}, 31655) == (
        "CTGAN trained 30 of its published 300 epochs")
    assert ctgan_reduction({"epochs": 300, "max_rows": 4000}, 31655) == (
        "on 4,000 of the 31,655 training rows")


def test_two_forests_with_the_same_accuracy_stay_an_unknown_spread_when_combined():
    # issue 29 item 2: DM of two forests with identical accuracy has sd 0 over n = 2; the
    # difference and the mean of estimates must not turn it into an exact value (se 0)
    s = _summary()
    s.fidelity.loc[s.fidelity["method"] == "IGO", ["DM sd", "DM n"]] = [0.0, 2]
    est = fidelity_estimates(s)
    dm = lookup(est, method="IGO", metric="DM")
    assert dm.se == 0.0 and dm.n == 2 and dm.spread()[0] is None
    base = lookup(est, method="Indep", metric="DM")
    assert difference(base, dm).se is None
    assert mean_estimate([dm, base]).se is None
    # a bootstrap se of 0 (every replicate equal) is an unknown spread too
    s.fidelity.loc[s.fidelity["method"] == "IGO", "CS se"] = 0.0
    assert lookup(fidelity_estimates(s), method="IGO", metric="CS").se is None
