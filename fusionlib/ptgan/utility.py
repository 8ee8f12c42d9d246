"""The downstream-utility score S_T of PTGAN's Section 5.1 (Tables 3, 10 and 11 of seed 001).

Protocol (Section 5.1, Appendix D.2.3): split the table 90/10 into D_train and D_test; train the
GAN on D_train; at K equally spaced evaluation points t_k = round(k T / K), k = 1..K, of the T
training iterations, draw D_t = 1,000 rows from G^(t); train random forest (RF), support vector
machine (SVM) and logistic regression (LR) on D_t and on D_train, and measure the AUC of each on
D_test: S_t and S_train. Then

    S_T = sum_{k = ceil(K/2) + 1}^{K} |S_train - S_k| / (K - ceil(K/2) + 2),

the seed's formula with its index read as the evaluation points (T in the seed's formula counts
the K = 50 evaluation points: the sum runs over the second half of training only). The sum has
K - ceil(K/2) terms but the denominator adds 2: S_T is the mean absolute gap over the second half
times (K - ceil(K/2)) / (K - ceil(K/2) + 2), i.e. 25/27 = 0.926 for K = 50. The constant shrinks
every score by the same factor for a fixed K, so it changes no ranking, but it makes S_T depend
on K (with K = 10 the factor is 5/7); we keep it to compare with the paper's numbers.

Classifiers are scikit-learn's defaults (the seed names no settings): RandomForestClassifier
(100 trees), SVC (RBF kernel; AUC from its decision function) and LogisticRegression
(max_iter 1,000), on the encoding of the features (continuous to [-1, 1], discrete one-hot;
the layout is fitted on the features of both splits, no label). A synthetic set with a single
label class cannot train a classifier: its AUC is recorded as 0.5 (a constant score) and
flagged.

Speed (the S_T protocol fits 3 classifiers at 50 points of every repetition): the SVC's
decision function on D_test is computed from its fitted support vectors and dual coefficients
with one BLAS kernel product (:func:`svc_decision`, equal to scikit-learn's
``decision_function`` to 1e-10, tested; about 6 times faster than libsvm's row-by-row
prediction), and the fits run on one BLAS thread (on these small problems more threads only
add overhead; several threads cost a logistic regression on 1,000 rows 100 times more time on a
busy 2-core machine).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from fusionlib.checks import check_choice, check_positive_int
from fusionlib.encoding.tabular import TabularEncoder
from fusionlib.errors import InvalidInputError
from fusionlib.rng import numpy_rng, seed_int

__all__ = ["CLASSIFIERS", "DownstreamEvaluator", "evaluation_points", "make_classifier",
           "s_t_normaliser", "s_t_score", "split_train_test", "svc_decision"]

#: the downstream models of Tables 3, 10, 11, in table order
CLASSIFIERS: tuple[str, ...] = ("rf", "svm", "lr")


def split_train_test(frame: pd.DataFrame, seed: object, *, test_size: float = 0.1
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A random ``1 - test_size`` / ``test_size`` split of the rows (stream ``(seed, "split")``)."""
    if not 0.0 < test_size < 1.0:
        raise InvalidInputError(f"test_size must be in (0, 1), got {test_size}")
    n = len(frame)
    n_test = int(round(n * test_size))
    if n_test < 1 or n_test >= n:
        raise InvalidInputError(f"{n} rows cannot be split with test_size={test_size}")
    order = numpy_rng(seed, "split").permutation(n)
    test, train = order[:n_test], order[n_test:]
    return (frame.iloc[np.sort(train)].reset_index(drop=True),
            frame.iloc[np.sort(test)].reset_index(drop=True))


def evaluation_points(n_iter: int, k: int) -> list[int]:
    """K equally spaced iterations ``round(j n_iter / k)``, j = 1..k (ending at ``n_iter``)."""
    check_positive_int("n_iter", n_iter)
    check_positive_int("k", k)
    if k > n_iter:
        raise InvalidInputError(f"{k} evaluation points need at least {k} iterations, "
                                f"got n_iter={n_iter}")
    return [int(round(j * n_iter / k)) for j in range(1, k + 1)]


def s_t_normaliser(k: int) -> int:
    """The seed's denominator ``K - ceil(K/2) + 2`` for K evaluation points."""
    check_positive_int("k", k)
    return k - math.ceil(k / 2) + 2


def s_t_score(s_train: float, s_t: Sequence[float], *, k: int | None = None) -> float:
    """S_T from the real-data AUC ``s_train`` and the per-point AUCs ``s_t`` (in order).

    ``s_t`` holds all K points (``k`` None), or only the K - ceil(K/2) points of the second
    half that enter the sum (``k`` = K, the number of evaluation points of the protocol).
    """
    s = np.asarray(s_t, dtype=float)
    if s.ndim != 1 or s.size == 0 or not np.isfinite(s).all() or not np.isfinite(s_train):
        raise InvalidInputError("s_t must be a non-empty sequence of finite AUCs and s_train "
                                "a finite AUC")
    if k is None:
        k, second_half = s.size, s[math.ceil(s.size / 2):]  # points ceil(K/2)+1 .. K (1-based)
    else:
        check_positive_int("k", k)
        if s.size != k - math.ceil(k / 2):
            raise InvalidInputError(
                f"with k={k} evaluation points S_T sums the last {k - math.ceil(k / 2)} of "
                f"them; got {s.size} AUCs")
        second_half = s
    return float(np.abs(s_train - second_half).sum() / s_t_normaliser(k))


def make_classifier(name: str, seed: object):
    """A fresh, unfitted downstream classifier (scikit-learn defaults, seeded)."""
    check_choice("classifier", name, CLASSIFIERS)
    state = seed_int(seed, "classifier", name) % (2**32 - 1)
    if name == "rf":
        return RandomForestClassifier(n_estimators=100, random_state=state, n_jobs=1)
    if name == "svm":
        return SVC(random_state=state)
    return LogisticRegression(max_iter=1_000)


def svc_decision(model: SVC, x: np.ndarray) -> np.ndarray:
    """The decision function of a fitted binary RBF :class:`~sklearn.svm.SVC` on ``x``:
    ``K(x, SV) dual_coef + intercept`` with the kernel from one BLAS product (the value
    scikit-learn's ``decision_function`` computes row by row in libsvm)."""
    if model.kernel != "rbf" or len(model.classes_) != 2:
        return model.decision_function(x)
    k = rbf_kernel(np.asarray(x, dtype=np.float64), model.support_vectors_, gamma=model._gamma)
    return k @ model.dual_coef_[0] + model.intercept_[0]


def _scores(model, x: np.ndarray) -> np.ndarray:
    if isinstance(model, SVC):
        return svc_decision(model, x)
    if hasattr(model, "predict_proba"):
        return model.predict_proba(x)[:, 1]
    return model.decision_function(x)


class DownstreamEvaluator:
    """AUC on D_test of classifiers trained on a given table (real or synthetic).

    Parameters
    ----------
    train, test:
        The real split (DataFrames with the same columns).
    target:
        Binary 0/1 label column.
    discrete_columns:
        Discrete feature columns (the target may be listed; it is not a feature).
    classifiers:
        Subset of :data:`CLASSIFIERS`.
    """

    def __init__(self, train: pd.DataFrame, test: pd.DataFrame, target: str,
                 discrete_columns: Sequence[str], classifiers: Sequence[str] = CLASSIFIERS
                 ) -> None:
        for c in classifiers:
            check_choice("classifier", c, CLASSIFIERS)
        if target not in train.columns or target not in test.columns:
            raise InvalidInputError(f"label column {target!r} missing from the real split")
        if set(np.unique(test[target])) != {0, 1}:
            raise InvalidInputError("the test labels must contain both classes 0 and 1")
        self.target, self.classifiers = target, tuple(classifiers)
        self.features = [c for c in train.columns if c != target]
        disc = [c for c in discrete_columns if c != target]
        # the layout (categories, ranges) comes from both splits so that a category seen only in
        # D_test still has a column; no label enters it
        both = pd.concat([train[self.features], test[self.features]], ignore_index=True)
        self.encoder = TabularEncoder(disc).fit(both)
        self._x_test = self.encoder.transform(test[self.features])
        self._y_test = test[target].to_numpy()

    def auc(self, table: pd.DataFrame, seed: object) -> dict[str, float]:
        """``{classifier: AUC on D_test}`` of classifiers trained on ``table``; a table with one
        label class gives 0.5 for every classifier (see the module docstring)."""
        y = table[self.target].to_numpy().astype(int)
        if len(np.unique(y)) < 2:
            return {c: 0.5 for c in self.classifiers}
        x = self.encoder.transform(table[self.features])
        out = {}
        # one BLAS thread per fit (a caller may run several fits in threads at once)
        with threadpool_limits(limits=1):
            for name in self.classifiers:
                model = make_classifier(name, seed).fit(x, y)
                out[name] = float(roc_auc_score(self._y_test, _scores(model, self._x_test)))
        return out
