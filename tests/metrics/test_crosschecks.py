"""fusionlib's metrics against the libraries that define them, where one exists: PRDC against
the authors' ``prdc`` package (Naeem et al. 2020) and DI / AOD / EOD against fairlearn's
per-group rates. Both libraries are pinned in requirements.lock (the ``test`` extra), so these
run in CI; elsewhere they are skipped with the reason."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from fusionlib.metrics.fairness import fairness_metrics
from fusionlib.metrics.prdc import prdc
from fusionlib.rng import numpy_rng


@pytest.mark.parametrize("seed, k", [(0, 3), (1, 5), (2, 10)])
def test_prdc_agrees_with_the_authors_package(seed, k):
    reference = pytest.importorskip("prdc", reason="the authors' prdc package (pip install prdc)")
    rng = numpy_rng(seed, "crosscheck-prdc")
    real = rng.normal(size=(300, 4))
    fake = rng.normal(loc=0.3, scale=1.2, size=(250, 4))
    ours = prdc(real, fake, k)
    theirs = reference.compute_prdc(real_features=real, fake_features=fake, nearest_k=k)
    assert_allclose([ours.precision, ours.recall, ours.density, ours.coverage],
                    [theirs["precision"], theirs["recall"], theirs["density"],
                     theirs["coverage"]], rtol=1e-12, atol=0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_di_aod_eod_agree_with_fairlearn_group_rates(seed):
    fm = pytest.importorskip("fairlearn.metrics", reason="fairlearn (pip install fairlearn)")
    rng = numpy_rng(seed, "crosscheck-fairness")
    n = 2_000
    privileged = rng.random(n) < 0.4
    y_true = (rng.random(n) < np.where(privileged, 0.5, 0.3)).astype(int)
    y_pred = (rng.random(n) < 0.25 + 0.5 * y_true - 0.1 * (~privileged)).astype(int)
    frame = fm.MetricFrame(
        metrics={"sel": fm.selection_rate, "tpr": fm.true_positive_rate,
                 "fpr": fm.false_positive_rate},
        y_true=y_true, y_pred=y_pred,
        sensitive_features=pd.Series(np.where(privileged, "p", "u"), name="group"))
    g = frame.by_group
    want = {"DI": g.loc["u", "sel"] / g.loc["p", "sel"],
            "AOD": 0.5 * ((g.loc["u", "fpr"] - g.loc["p", "fpr"])
                          + (g.loc["u", "tpr"] - g.loc["p", "tpr"])),
            "EOD": g.loc["u", "tpr"] - g.loc["p", "tpr"]}
    got = fairness_metrics(y_true, y_pred, privileged)
    assert_allclose([got[m] for m in want], list(want.values()), rtol=1e-12, atol=1e-15)
