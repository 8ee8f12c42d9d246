"""Utility and fairness of synthetic data through downstream classifiers (seed 001, Section 5.2,
Appendix D.3): AUC, statistical parity at the Youden cut-off, Pareto frontiers and the statistic
of Tables 4 and 12.

The protocol, for one synthetic data set:

1. train a classifier ``h`` (random forest, SVM or logistic regression, as in Section 5.1) on the
   synthetic covariates ``C`` and label ``Y`` (the sensitive attribute ``A`` is *not* an input:
   ``h : C -> [0, 1]``, Section 5.2);
2. score the real test rows; the utility is the AUC of the scores (the area under the ROC curve,
   threshold-free, as in Section 5.1);
3. the cut-off ``tau`` of ``Yhat = 1(h(C) > tau)`` is "chosen to maximize AUC": the point of the
   ROC curve that maximises Youden's ``TPR - FPR``, which is the cut-off at which the AUC of the
   *thresholded* prediction, ``(TPR + TNR) / 2``, is largest. This is what the authors' earlier
   fairness code does (Sohn et al. 2024, ``jwsohn612/fairSBP``, ``utils/utils.py``: "Find
   threshold that maximizes AUC", ``argmax(tpr - fpr)``, with ``roc_auc_score`` of the scores
   reported as the AUC);
4. ``SP = |E[Yhat | A = 1] - E[Yhat | A = 0]|`` on the real test rows at that cut-off.

Tables 4 and 12 report, per method and classifier, the mean (and standard deviation) of the 10
smallest SP among all sets whose AUC is at least a threshold (0.85 / 0.70 for Adult).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionlib.checks import check_array, check_choice, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.metrics.fairness import confusion_counts
from fusionlib.rng import seed_int

__all__ = ["CLASSIFIERS", "SetScore", "evaluate_set", "make_classifier", "pareto_front",
           "smallest_sp", "smallest_sp_table", "statistical_parity", "youden_cutoff"]

#: the downstream classifiers of Sections 5.1 and 5.2, in the tables' column order
CLASSIFIERS: tuple[str, ...] = ("RF", "SVM", "LR")


def _binary_vector(name: str, values: object) -> np.ndarray:
    arr = check_array(name, values, ndim=1)
    if not np.isin(arr, (0.0, 1.0)).all():
        raise InvalidInputError(f"{name} must be binary 0/1; map the labels first")
    return arr.astype(np.int64)


def statistical_parity(y_pred: object, group: object) -> float:
    """``|E[Yhat | A = 1] - E[Yhat | A = 0]|`` for binary predictions and groups.

    Raises :class:`InvalidInputError` when a group has no rows (its rate is undefined).
    """
    yhat, a = _binary_vector("y_pred", y_pred), _binary_vector("group", group)
    if yhat.shape != a.shape:
        raise InvalidInputError(f"y_pred and group need equal lengths, got {len(yhat)}, {len(a)}")
    counts = confusion_counts(np.zeros_like(a), yhat, a)  # n[g, y, yhat]; y unused here
    per_group = counts.sum(axis=1)  # (group, yhat)
    sizes = per_group.sum(axis=1)
    if (sizes == 0).any():
        raise InvalidInputError(
            f"group sizes {sizes.tolist()} (A=0, A=1): SP needs rows in both groups")
    rates = per_group[:, 1] / sizes
    return float(abs(rates[1] - rates[0]))


def youden_cutoff(y_true: object, score: object) -> tuple[float, float]:
    """The cut-off that maximises ``TPR - FPR`` and the AUC of the scores.

    Returns ``(auc, tau)``: ``auc`` is the area under the ROC curve of ``score`` (threshold-free)
    and ``tau`` the cut-off ``Yhat = 1(score > tau)`` at which the thresholded prediction's AUC,
    ``(TPR + TNR) / 2``, is largest. ``tau`` lies just below a score value (the midpoint to the
    next lower score), so ``>`` and ``>=`` give the same predictions on these scores. Needs both
    classes in ``y_true``.
    """
    from sklearn.metrics import roc_auc_score, roc_curve

    y = _binary_vector("y_true", y_true)
    s = check_array("score", score, ndim=1)
    if s.shape != y.shape:
        raise InvalidInputError(f"y_true and score need equal lengths, got {len(y)}, {len(s)}")
    if y.min() == y.max():
        raise InvalidInputError("y_true has one class only; AUC needs both")
    fpr, tpr, thresholds = roc_curve(y, s, drop_intermediate=False)
    best = int(np.argmax(tpr - fpr))
    # roc_curve predicts positive for score >= threshold; the next lower distinct score gives
    # the strict cut-off of the paper's 1(h(C) > tau)
    lower = s[s < thresholds[best]]
    tau = 0.5 * (thresholds[best] + lower.max()) if lower.size else float(thresholds[best]) - 1.0
    return float(roc_auc_score(y, s)), float(tau)


def make_classifier(name: str, seed: object):
    """An unfitted scikit-learn classifier (library defaults; the paper gives no settings).

    ``RF`` random forest (100 trees), ``SVM`` RBF support vector machine (scored by its decision
    function; any monotone score gives the same thresholded predictions), ``LR`` logistic
    regression (``max_iter=1000`` so that it converges on one-hot inputs).
    """
    check_choice("classifier", name, CLASSIFIERS)
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC

    state = seed_int(seed, "classifier", name)
    return {"RF": lambda: RandomForestClassifier(n_estimators=100, random_state=state, n_jobs=1),
            "SVM": lambda: SVC(kernel="rbf", random_state=state),
            "LR": lambda: LogisticRegression(max_iter=1000)}[name]()


def _score(model, x: np.ndarray) -> np.ndarray:
    if hasattr(model, "decision_function") and not hasattr(model, "estimators_"):
        return model.decision_function(x)
    return model.predict_proba(x)[:, 1]


@dataclass(frozen=True)
class SetScore:
    """AUC, SP and cut-off of one classifier trained on one synthetic set."""

    classifier: str
    auc: float
    sp: float
    tau: float
    positive_rate: float  # share of Y = 1 in the training (synthetic) set


def evaluate_set(x_train: object, y_train: object, x_test: object, y_test: object,
                 a_test: object, *, seed: object,
                 classifiers: Sequence[str] = CLASSIFIERS) -> list[SetScore]:
    """Train each classifier on ``(x_train, y_train)``; AUC and SP on the real test rows.

    A synthetic set whose labels are all one class cannot train a classifier: its prediction is
    that class for every test row (AUC 0.5, SP 0), which is what a constant model achieves.
    ``tau`` is the Youden cut-off of :func:`youden_cutoff`.
    """
    xtr, xte = check_array("x_train", x_train), check_array("x_test", x_test)
    ytr, yte = _binary_vector("y_train", y_train), _binary_vector("y_test", y_test)
    ate = _binary_vector("a_test", a_test)
    if xtr.shape[1] != xte.shape[1] or len(xtr) != len(ytr) or not len(xte) == len(yte) == len(ate):
        raise InvalidInputError(
            f"shapes do not match: x_train {xtr.shape}, y_train {ytr.shape}, x_test {xte.shape},"
            f" y_test {yte.shape}, a_test {ate.shape}")
    out = []
    for name in classifiers:
        if ytr.min() == ytr.max():
            out.append(SetScore(name, 0.5, 0.0, float("nan"), float(ytr.mean())))
            continue
        model = make_classifier(name, seed).fit(xtr, ytr)
        s = _score(model, xte)
        auc, tau = youden_cutoff(yte, s)
        out.append(SetScore(name, auc, statistical_parity((s > tau).astype(int), ate), tau,
                            float(ytr.mean())))
    return out


def pareto_front(auc: object, sp: object) -> np.ndarray:
    """Mask of the points not dominated when AUC is maximised and SP minimised.

    ``(auc_i, sp_i)`` is dominated when another point has ``auc >= auc_i`` and ``sp <= sp_i``
    with at least one strict (Appendix D.3: (0.7, 0.7) is dominated by (0.8, 0.4)). Exact ties
    are all kept.
    """
    a, s = check_array("auc", auc, ndim=1, min_rows=0), check_array("sp", sp, ndim=1, min_rows=0)
    if a.shape != s.shape:
        raise InvalidInputError(f"auc and sp need equal lengths, got {len(a)}, {len(s)}")
    ge = a[None, :] >= a[:, None]  # [i, j]: j at least as good in AUC as i
    le = s[None, :] <= s[:, None]
    strict = (a[None, :] > a[:, None]) | (s[None, :] < s[:, None])
    return ~(ge & le & strict).any(axis=1)


def smallest_sp(auc: object, sp: object, threshold: float, k: int = 10) -> tuple[float, float,
                                                                                    int]:
    """Mean and standard deviation (ddof 1) of the ``k`` smallest SP among points with
    ``AUC >= threshold``, and how many points entered (fewer than ``k`` when fewer qualify;
    ``nan`` statistics when none does)."""
    check_positive_int("k", k)
    a, s = check_array("auc", auc, ndim=1, min_rows=0), check_array("sp", sp, ndim=1, min_rows=0)
    if a.shape != s.shape:
        raise InvalidInputError(f"auc and sp need equal lengths, got {len(a)}, {len(s)}")
    chosen = np.sort(s[a >= threshold])[:k]
    if chosen.size == 0:
        return float("nan"), float("nan"), 0
    sd = float(chosen.std(ddof=1)) if chosen.size > 1 else float("nan")
    return float(chosen.mean()), sd, int(chosen.size)


def smallest_sp_table(scores: pd.DataFrame, thresholds: dict[str, float], k: int = 10
                      ) -> pd.DataFrame:
    """Tables 4 / 12 from per-set scores: one row per (dataset, method), columns per classifier.

    ``scores`` has columns dataset, method, classifier, auc, sp (one row per set and classifier,
    all runs pooled as in the paper: "200 independent sets from the 10 runs"). ``thresholds``
    maps each dataset to its AUC threshold. Returns columns dataset, method, then ``<clf>``
    (mean), ``<clf> sd`` and ``<clf> n`` for each classifier present.
    """
    need = {"dataset", "method", "classifier", "auc", "sp"}
    if not need <= set(scores.columns):
        raise InvalidInputError(f"scores need columns {sorted(need)}, got {list(scores.columns)}")
    rows = []
    for (dataset, method), grp in scores.groupby(["dataset", "method"], sort=False):
        if dataset not in thresholds:
            raise InvalidInputError(f"no AUC threshold for dataset {dataset!r}; give one in "
                                    f"thresholds (have {sorted(thresholds)})")
        row: dict[str, object] = {"dataset": dataset, "method": method}
        for clf, sub in grp.groupby("classifier", sort=False):
            mean, sd, n = smallest_sp(sub["auc"], sub["sp"], thresholds[dataset], k)
            row.update({clf: mean, f"{clf} sd": sd, f"{clf} n": n})
        rows.append(row)
    return pd.DataFrame(rows)
