"""The audited classifier and its bootstrapped fairness (seed 002, Section 5.3, Figure 4, Table 9).

- :func:`train_audited_tree` trains the black-box decision tree on the *internal* table of a
  separation (features = internal columns minus the label; never a protected attribute);
- :func:`fairness_bootstraps` predicts with each separation's tree on the real test set ``D_test``
  and on every synthetic set of that separation (and the baselines), and bootstraps DI, AOD and
  EOD on each;
- :func:`table9` reduces them to ``|mean_boot(synthetic) - mean_boot(real)|`` (Table 9), always
  comparing a synthetic set with the real test set *under the same tree*.

The protocol objects (``Prepared``, ``SyntheticSet``, ``ProtocolConfig``) are those of
:mod:`fusionlib.fairtest.protocol.runs`; a synthetic set with ``overlap == ""`` is a baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fusionlib.encoding.onehot import IndicatorEncoder
from fusionlib.errors import InvalidInputError
from fusionlib.fairtest.protocol.records import Prepared, ProtocolConfig, SyntheticSet
from fusionlib.fairtest.separation import DatasetSpec, separate
from fusionlib.metrics.fairness import (
    FAIRNESS_METRICS,
    bootstrap_fairness,
    bootstrap_mean_difference,
)
from fusionlib.rng import child, seed_int

__all__ = ["AuditedTree", "train_audited_tree", "fairness_bootstraps", "table9"]

REAL_SOURCE = "Real test"


def _require_columns(df: pd.DataFrame, columns: Sequence[str], what: str, fix: str) -> None:
    if not isinstance(df, pd.DataFrame):
        raise InvalidInputError(f"the {what} must be a pandas DataFrame, got {type(df).__name__}")
    absent = [c for c in columns if c not in df.columns]
    if absent:
        raise InvalidInputError(
            f"the {what} lacks columns {absent} (it has {list(df.columns)}); {fix}")


@dataclass
class AuditedTree:
    """The black-box classifier under audit: one-hot encoder + decision tree on ``features``."""

    features: list[str]
    encoder: Any
    tree: Any
    positive: str

    def predict_favourable(self, df: pd.DataFrame) -> np.ndarray:
        """Boolean favourable-outcome predictions; ``df`` is encoded with the fitted encoder."""
        _require_columns(df, self.features, "table to predict on",
                         "pass a table with every feature the tree was trained on")
        return self.tree.predict(self.encoder.transform(df[self.features].astype(str))) == 1


def train_audited_tree(internal: pd.DataFrame, label: str, positive: str, protected: Sequence[str],
                       *, seed: int = 0) -> AuditedTree:
    """Train the audited tree on the internal table; refuses protected attributes as features.

    ``positive`` is the favourable label value; it must occur in ``internal[label]``.
    ``seed`` is the tree's ``random_state`` (it breaks ties between equally good splits).
    """
    from sklearn.tree import DecisionTreeClassifier

    _require_columns(internal, [label], "internal table",
                     "pass the name of its label column (e.g. spec.label)")
    leaked = [a for a in protected if a in internal.columns]
    if leaked:
        raise InvalidInputError(
            f"the internal table holds protected attributes {leaked}; separate them first")
    child(seed)  # validates the seed
    labels = internal[label].astype(str)
    if internal[label].isna().any():
        raise InvalidInputError(f"the label column {label!r} has missing values; drop those rows")
    if not (labels == str(positive)).any():
        raise InvalidInputError(
            f"the favourable label value {positive!r} never occurs in column {label!r} (values: "
            f"{sorted(labels.unique())[:10]}); pass positive= one of them")
    features = [c for c in internal.columns if c != label]
    encoder = IndicatorEncoder(handle_unknown="ignore").fit(internal[features].astype(str))
    y = (labels == str(positive)).to_numpy().astype(int)
    tree = DecisionTreeClassifier(random_state=seed_int(seed, "tree")).fit(
        encoder.transform(internal[features].astype(str)), y)
    return AuditedTree(features, encoder, tree, str(positive))


def _boot_long(df: pd.DataFrame, tree: AuditedTree, spec: DatasetSpec, n_boot: int,
               seed: int) -> pd.DataFrame:
    """Long bootstrap table (boot, metric, value, attribute) of ``tree`` evaluated on ``df``."""
    _require_columns(df, [spec.label, *spec.protected], "evaluation table",
                     "evaluate on complete rows (features, protected attributes and the label)")
    yhat = tree.predict_favourable(df)
    y = (df[spec.label].astype(str) == tree.positive).to_numpy()
    parts = []
    for attr in spec.protected:
        g = (df[attr].astype(str) == str(spec.privileged[attr])).to_numpy()
        boot = bootstrap_fairness(y, yhat, g, n_boot=n_boot, seed=child(seed, attr))
        parts.append(boot.rename_axis("boot").reset_index().melt(
            id_vars="boot", var_name="metric", value_name="value").assign(attribute=attr))
    return pd.concat(parts, ignore_index=True)


def fairness_bootstraps(prep: Prepared, synthetic: Sequence[SyntheticSet], cfg: ProtocolConfig,
                        *, seed: int = 0) -> pd.DataFrame:
    """Long table of bootstrap fairness metrics for every (tree, source) pair.

    Columns: dataset, tree (the separation whose internal table trained it), source
    (``"Real test"`` or a synthetic label), kind (real/ours/baseline), method, overlap
    (``""`` for the real test set and the baselines), attribute, metric, boot, value. Each
    separation's tree is evaluated on the real test set, on the synthetic sets of that
    separation, and on the baselines.
    """
    spec, parts = prep.spec, []
    for overlap in spec.overlaps:
        internal, _ = separate(prep.train, prep.dataset, overlap)
        tree = train_audited_tree(internal, spec.label, spec.favourable, list(spec.protected),
                                  seed=seed)
        sources = [(REAL_SOURCE, "real", "", "", prep.test)] + [
            (s.label, "baseline" if s.overlap == "" else "ours", s.method, s.overlap, s.data)
            for s in synthetic if s.overlap in ("", overlap)]
        for name, kind, method, ov, data in sources:
            long = _boot_long(data, tree, spec, cfg.n_boot, seed=child(seed, "boot", overlap, name))
            parts.append(long.assign(dataset=prep.dataset, tree=overlap, source=name,
                                     kind=kind, method=method, overlap=ov))
    return pd.concat(parts, ignore_index=True)


def table9(boots: pd.DataFrame) -> pd.DataFrame:
    """``|mean_boot(synthetic) - mean_boot(real)|`` per source, attribute and metric.

    Every synthetic set is compared with the real test set scored by the *same* tree: our
    methods under the tree of their own separation; the baselines under the tree of the first
    separation of Table 2 (the paper gives one baseline row per dataset).
    """
    need = ["dataset", "tree", "attribute", "source", "kind", "method", "overlap", "metric",
            "boot", "value"]
    _require_columns(boots, need, "bootstrap table", "pass the output of fairness_bootstraps")
    rows = []
    for (dataset, tree, attr), grp in boots.groupby(["dataset", "tree", "attribute"], sort=False):
        first = tree == boots.loc[boots["dataset"] == dataset, "tree"].iloc[0]
        wide = {src: g.pivot(index="boot", columns="metric", values="value")
                for src, g in grp.groupby("source", sort=False)}
        if REAL_SOURCE not in wide:
            raise InvalidInputError(
                f"no {REAL_SOURCE!r} rows for dataset {dataset!r}, tree {tree!r}, attribute "
                f"{attr!r}: every tree needs the real test set as reference")
        for src, g in grp.groupby("source", sort=False):
            kind, method, overlap = g[["kind", "method", "overlap"]].iloc[0]
            if kind == "real" or (kind == "baseline" and not first):
                continue
            diff = bootstrap_mean_difference(wide[src], wide[REAL_SOURCE])
            for metric in FAIRNESS_METRICS:
                rows.append({"dataset": dataset, "method": method, "overlap": overlap,
                             "label": src, "kind": kind, "tree": tree, "attribute": attr,
                             "metric": metric, **diff.loc[metric].to_dict()})
    return pd.DataFrame(rows)
