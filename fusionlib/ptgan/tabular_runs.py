"""One S_T run (Section 5.1): train a tabular GAN and score its samples along the way.

:func:`utility_run` splits a prepared table 90/10, trains
:class:`~fusionlib.ptgan.tabular.TabularPTGAN` on D_train, and at each evaluation point draws
1,000 rows and measures the downstream AUCs (:class:`~fusionlib.ptgan.utility.DownstreamEvaluator`).
It returns tidy rows (one per evaluation point and classifier) and the wall time spent in
training and in evaluation, so that the evaluation's share can be reported.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from fusionlib.checks import check_positive_int
from fusionlib.ptgan.tabular import TabularPTGAN
from fusionlib.ptgan.tabular_data import TabularData
from fusionlib.ptgan.utility import (
    CLASSIFIERS,
    DownstreamEvaluator,
    evaluation_points,
    s_t_score,
    split_train_test,
)
from fusionlib.rng import child, numpy_rng

__all__ = ["UtilityRun", "utility_run"]


@dataclass(frozen=True)
class UtilityRun:
    """Result of one run.

    Attributes
    ----------
    curve:
        Rows ``point, iteration, classifier, auc, auc_train, single_class`` (one per evaluation
        point and classifier).
    s_t:
        ``{classifier: S_T}``.
    s_train:
        ``{classifier: AUC of the model trained on D_train}``.
    train_s, eval_s:
        Wall seconds spent in GAN training and in the evaluations (sampling + classifiers).
    """

    curve: pd.DataFrame
    s_t: dict[str, float]
    s_train: dict[str, float]
    train_s: float
    eval_s: float


def utility_run(data: TabularData, method: str, discrepancy: str, seed: object, *, n_iter: int,
                n_eval: int, n_rows: int = 1_000, real_rows: int | None = None,
                overrides: Mapping[str, object] | None = None, device: str = "cpu",
                progress: bool = False) -> UtilityRun:
    """Train ``method`` under ``discrepancy`` on ``data`` and compute S_T (module docstring).

    ``real_rows``: train the reference classifiers (S_train) on this many random rows of D_train
    (None: all of them, as the seed does); a reduced-scale shortcut, stated where it is used.
    """
    check_positive_int("n_rows", n_rows)
    train, test = split_train_test(data.frame, child(seed, "data"))
    evaluator = DownstreamEvaluator(train, test, data.target, data.discrete_columns)
    reference = train
    if real_rows is not None and real_rows < len(train):
        pick = numpy_rng(seed, "real rows").choice(len(train), real_rows, replace=False)
        reference = train.iloc[sorted(pick)]
    t0 = time.perf_counter()
    s_train = evaluator.auc(reference, child(seed, "classifiers", "real"))
    reference_s = time.perf_counter() - t0
    callback_s = 0.0
    points = evaluation_points(n_iter, n_eval)
    rows: list[dict] = []

    def evaluate(model: TabularPTGAN, iteration: int) -> None:
        nonlocal callback_s
        start = time.perf_counter()
        k = points.index(iteration) + 1
        synth = model.sample(n_rows, child(seed, "eval", k))
        single = synth[data.target].nunique() < 2
        for name, auc in evaluator.auc(synth, child(seed, "classifiers", k)).items():
            rows.append(dict(point=k, iteration=iteration, classifier=name, auc=auc,
                             auc_train=s_train[name], single_class=bool(single)))
        callback_s += time.perf_counter() - start

    model = TabularPTGAN(method, discrepancy, discrete_columns=data.discrete_columns,
                         n_iter=n_iter, overrides=overrides, seed=child(seed, "gan"),
                         device=device, progress=progress)
    t1 = time.perf_counter()
    model.fit(train, callback=evaluate, callback_at=points)
    total = time.perf_counter() - t1
    curve = pd.DataFrame(rows)
    s_t = {c: s_t_score(s_train[c], curve.loc[curve.classifier == c, "auc"].to_numpy())
           for c in CLASSIFIERS}
    return UtilityRun(curve, s_t, s_train, train_s=total - callback_s,
                      eval_s=reference_s + callback_s)
