"""The S_T protocol of Section 5.1 for R repetitions trained as one stacked model.

Two kinds of work, both pure functions of their arguments:

* :func:`reference_scores` -- ``S_train``: RF, SVM and LR trained on D_train and scored (AUC) on
  D_test. It depends only on the split, so it is computed once per data set and shared by every
  method, discrepancy and repetition.
* :func:`stacked_curves` -- R members (repetitions, or settings such as ``lambda_MP``) of one
  method trained as one :class:`~fusionlib.ptgan.tabular.stacked.StackedTabularPTGAN` on
  D_train. At each evaluation point every member draws 1,000 rows and the three classifiers are
  trained on them and scored on D_test (``S_t``); the AUCs of all members and points are
  returned as tidy rows with the wall time of training and of evaluation.

``S_T`` itself is computed from both (:func:`fusionlib.ptgan.utility.s_t_score`).

At every evaluation point each member's 1,000 rows are also described by their **balance**
(:func:`balance_row`): the share of rows with the positive label, and the total variation
distance of each discrete column's categories to D_train's. A member whose label share stays far
from the data's has collapsed onto one label, which its classifiers' AUC alone does not show.

With a ``checkpoint`` path, the training state and the rows evaluated so far are written
(atomically) after every evaluation point, and a run that finds both at the same iteration
resumes there (bitwise on CPU): a killed 30-minute cell loses at most one interval.

The evaluations of the members at a point run in a pool of threads bounded by the job's thread
budget (:func:`fusionlib.threads.thread_budget`; one thread, no pool, for the cells of a
laptop build), each classifier on one BLAS thread; every member has its own classifier seeds, so
the rows do not depend on the number of threads.

Split. "Each dataset is split 90%/10%" (Section 5.1): one random split per data set, on the
stream ``(split_seed, "split")``, shared by every run (the seed does not say more; the paper's
standard deviations are over 10 independent GAN runs). Streams of member m of repetition i with
setting ``label``: training ``(seed_i, "gan", label, ...)`` (distinct for every member); the
evaluation draws at point k (the 1,000 rows ``(seed_i, "eval", k)`` and the classifiers
``(seed_i, "classifiers", k)``) are common to the methods' repetition i (common random
numbers).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from fusionlib.checks import check_choice, check_positive_int
from fusionlib.errors import InvalidInputError
from fusionlib.io import atomic_write_json
from fusionlib.ptgan.stacked_step import BN_MODES
from fusionlib.ptgan.tabular.data import TabularData
from fusionlib.ptgan.tabular.stacked import StackedTabularPTGAN
from fusionlib.ptgan.utility import DownstreamEvaluator, evaluation_points, split_train_test
from fusionlib.rng import child, numpy_rng
from fusionlib.threads import thread_budget

__all__ = ["EVAL_POINTS", "Member", "StackedCurves", "balance_row", "counted_points",
           "reference_scores", "stacked_curves", "tabular_split"]

#: which evaluation points are evaluated: every one (the curves of the chapter) or only the
#: second half, the points that enter S_T (same S_T, half the evaluation time)
EVAL_POINTS = ("all", "counted")


@dataclass(frozen=True)
class Member:
    """One member of a stacked run: a setting and the repetition it belongs to.

    Attributes
    ----------
    label:
        The setting's key (e.g. ``"pt+cp"``, ``"mp-10"``, ``"pt+cp tau=0.5"``).
    rep:
        The repetition index i.
    seed:
        The repetition's seed (shared by the methods' repetition i).
    penalty_weight:
        Lambda of the member.
    tau:
        Gumbel-softmax temperature of the member.
    """

    label: str
    rep: int
    seed: int
    penalty_weight: float
    tau: float = 0.2


@dataclass(frozen=True)
class StackedCurves:
    """AUC curves of the members of one stacked run.

    Attributes
    ----------
    curve:
        Rows ``label, rep, point, iteration, classifier, auc, single_class``.
    balance:
        Rows ``label, rep, point, iteration, label_share, tvd_<column>...`` (:func:`balance_row`)
        of every member at every evaluated point.
    diverged:
        ``{member index: iteration}`` of members whose loss turned non-finite (their points
        after that iteration are absent).
    train_s, eval_s:
        Wall seconds of training and of the evaluations (sampling, classifiers) in this
        process (after a resume, of the resumed part only).
    resumed_at:
        The iteration a checkpoint was resumed from (0: none).
    """

    curve: pd.DataFrame
    balance: pd.DataFrame
    diverged: dict[int, int]
    train_s: float
    eval_s: float
    resumed_at: int = 0


def _resume_rows(state: Path, rows: Path) -> tuple[list[dict], list[dict], int]:
    """The rows and balance rows saved with a checkpoint at the same iteration; else remove
    both files."""
    if state.is_file() and rows.is_file():
        import torch

        try:
            saved = json.loads(rows.read_text(encoding="utf-8"))
            at = int(torch.load(state, map_location="cpu", weights_only=True)["iteration"])
            if int(saved["iteration"]) == at:
                return list(saved["rows"]), list(saved["balance"]), at
        except (OSError, ValueError, KeyError, RuntimeError, TypeError):
            pass
    for f in (state, rows):
        f.unlink(missing_ok=True)
    return [], [], 0


def _shares(column: pd.Series) -> pd.Series:
    return column.astype(str).value_counts(normalize=True)


def balance_row(synth: pd.DataFrame, reference: dict[str, pd.Series], target: str
                ) -> dict[str, float]:
    """``label_share`` (share of rows whose ``target`` is 1) and ``tvd_<column>`` for every
    column of ``reference`` ({column: category shares of D_train}): the total variation distance
    ``0.5 * sum |p - q|`` between the categories' shares in ``synth`` and in the data (0: same
    shares; 1: no category in common)."""
    out = {"label_share": float(pd.to_numeric(synth[target]).eq(1).mean())}
    for col, ref in reference.items():
        p = _shares(synth[col])
        cats = ref.index.union(p.index)
        out[f"tvd_{col}"] = float(0.5 * (p.reindex(cats, fill_value=0.0)
                                         - ref.reindex(cats, fill_value=0.0)).abs().sum())
    return out


def tabular_split(data: TabularData, split_seed: object) -> tuple[pd.DataFrame, pd.DataFrame]:
    """D_train and D_test of ``data``: the 90/10 split on the stream ``(split_seed, "split")``."""
    return split_train_test(data.frame, split_seed)


def counted_points(n_eval: int) -> list[int]:
    """1-based evaluation points that enter S_T: ``ceil(K/2) + 1 .. K``."""
    check_positive_int("n_eval", n_eval)
    return list(range(-(-n_eval // 2) + 1, n_eval + 1))


def reference_scores(data: TabularData, split_seed: object, *, real_rows: int | None = None
                     ) -> dict[str, float]:
    """``S_train``: ``{classifier: AUC on D_test}`` of the classifiers trained on D_train.

    ``real_rows``: train on this many random rows of D_train (None: all, as the seed does).
    """
    train, test = tabular_split(data, split_seed)
    evaluator = DownstreamEvaluator(train, test, data.target, data.discrete_columns)
    if real_rows is not None and real_rows < len(train):
        pick = numpy_rng(split_seed, "real rows").choice(len(train), real_rows, replace=False)
        train = train.iloc[sorted(pick)]
    return evaluator.auc(train, child(split_seed, "classifiers", "real"))


class _Evaluation:
    """The callback of a stacked run: scores every live member at the wanted points and, with
    a checkpoint, saves the rows and then the training state."""

    def __init__(self, data: TabularData, members: Sequence[Member], evaluator, points,
                 wanted: set[int], n_rows: int, rows: list[dict], balance: list[dict],
                 state: Path | None, train: pd.DataFrame, bn: str) -> None:
        self.data, self.members, self.evaluator = data, members, evaluator
        self.points, self.wanted, self.n_rows, self.rows = points, wanted, n_rows, rows
        self.balance, self.bn = balance, bn
        self.reference = {c: _shares(train[c]) for c in data.discrete_columns if c != data.target}
        self.state = state
        self.rows_file = None if state is None else _rows_file(state)
        workers = min(thread_budget(), len(members))
        self.pool = ThreadPoolExecutor(workers) if workers > 1 else None
        self.spent = 0.0

    def __call__(self, model: StackedTabularPTGAN, iteration: int) -> None:
        start = time.perf_counter()
        k = self.points.index(iteration) + 1
        if k in self.wanted:
            x = model.sample_encoded(self.n_rows, [child(m.seed, "eval", k)
                                                   for m in self.members], bn=self.bn)
            live = [j for j in range(len(self.members)) if j not in model.trainer_.diverged_]

            def score(j: int) -> tuple[list[dict], dict]:
                m, synth = self.members[j], model.encoder_.inverse_transform(x[j])
                single = bool(synth[self.data.target].nunique() < 2)
                aucs = self.evaluator.auc(synth, child(m.seed, "classifiers", k))
                where = dict(label=m.label, rep=m.rep, point=k, iteration=iteration)
                return ([dict(where, classifier=c, auc=a, single_class=single)
                         for c, a in aucs.items()],
                        dict(where, **balance_row(synth, self.reference, self.data.target)))

            for part, bal in (self.pool.map(score, live) if self.pool else map(score, live)):
                self.rows.extend(part)
                self.balance.append(bal)
        if self.state is not None:  # the rows first: a checkpoint never runs ahead of them
            atomic_write_json(self.rows_file, {"iteration": iteration, "rows": self.rows,
                                               "balance": self.balance})
            model.trainer_.save_checkpoint()
        self.spent += time.perf_counter() - start

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def _rows_file(state: Path) -> Path:
    return state.with_name(state.name + ".rows.json")


def stacked_curves(data: TabularData, method: str, discrepancy: str, members: Sequence[Member],
                   *, split_seed: object, n_iter: int, n_eval: int, eval_points: str = "all",
                   n_rows: int = 1_000, device: str = "cpu", progress: bool = False,
                   checkpoint: str | Path | None = None, bn: str = "running") -> StackedCurves:
    """Train the ``members`` of ``method`` as one stacked model and score them along the way
    (``checkpoint``: resume from and save to this file, see the module docstring; ``bn``: how
    batch norm normalises the evaluation draws, see
    :meth:`~fusionlib.ptgan.tabular.stacked.StackedTabularPTGAN.sample_encoded`)."""
    check_choice("eval_points", eval_points, EVAL_POINTS)
    check_choice("bn", bn, BN_MODES)
    check_positive_int("n_rows", n_rows)
    if not members:
        raise InvalidInputError("a stacked run needs at least one member")
    train, test = tabular_split(data, split_seed)
    points = evaluation_points(n_iter, n_eval)
    state = None if checkpoint is None else Path(checkpoint)
    rows, balance, resumed_at = (([], [], 0) if state is None
                                 else _resume_rows(state, _rows_file(state)))
    evaluate = _Evaluation(
        data, members, DownstreamEvaluator(train, test, data.target, data.discrete_columns),
        points, set(range(1, n_eval + 1)) if eval_points == "all" else set(counted_points(n_eval)),
        n_rows, rows, balance, state, train, bn)
    model = StackedTabularPTGAN(
        method, discrepancy, seeds=[child(m.seed, "gan", m.label) for m in members],
        discrete_columns=data.discrete_columns, n_iter=n_iter,
        penalty_weights=[m.penalty_weight for m in members], tau=[m.tau for m in members],
        device=device, progress=progress, checkpoint_path=None if state is None else str(state))
    t0 = time.perf_counter()
    try:
        model.fit(train, callback=evaluate, callback_at=points)
    finally:
        evaluate.close()
    total = time.perf_counter() - t0
    curve = pd.DataFrame(rows, columns=["label", "rep", "point", "iteration", "classifier",
                                        "auc", "single_class"])
    if state is not None:
        for f in (state, _rows_file(state)):
            f.unlink(missing_ok=True)
    return StackedCurves(curve, pd.DataFrame(balance), model.diverged_,
                         train_s=total - evaluate.spent, eval_s=evaluate.spent,
                         resumed_at=resumed_at)
