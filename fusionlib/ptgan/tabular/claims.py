"""Paper-beside-ours tables and claims of the tabular PTGAN chapter
(``notebooks/ptgan_tabular.md``): Tables 3, 10 and 11 registered cell by cell, and the
PT+CP-below-MP ordering per (dataset, discrepancy, classifier).

The summaries themselves are in :mod:`fusionlib.ptgan.tabular.report` and
:mod:`fusionlib.ptgan.tabular.evidence`; neither they nor this module is imported by a cell, so
changing them recomputes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from fusionlib.compendium.paper import paper_table, register_table, side_by_side
from fusionlib.errors import InvalidInputError
from fusionlib.ptgan.tabular.cells import TAU, method_label
from fusionlib.ptgan.tabular.report import (
    COLUMNS,
    S_T_MARGIN,
    estimates_fn,
    ours_for_paper,
    paired_difference,
)

__all__ = ["KEYS", "known_differences", "protocol_not_comparable", "paper_side", "shown",
           "ranking_claims", "pooled_claims", "sensitivity_claims", "READINGS",
           "readings_claims", "discrepancy_readings_claims"]

#: the columns that identify a row of Tables 3, 10 and 11
KEYS = ["dataset", "discrepancy", "method"]


def known_differences(row: dict, metric: str) -> str:
    """The known differences of every Table 3/10/11 cell from the paper's set-up (a
    ``why(row, metric)`` of :func:`fusionlib.compendium.paper.register_table`)."""
    return ("known differences: scikit-learn default classifiers; Gumbel-softmax temperature "
            f"{TAU} and batch norm with running statistics when sampling (the paper states "
            "neither)")


def protocol_not_comparable(reductions: Mapping[str, Sequence[str]], scale: str
                            ) -> Callable[[dict, str], str | None]:
    """``not_comparable(row, metric)``: the departures of ``row``'s dataset from the paper's
    protocol at ``scale`` (``reductions``: dataset -> departures), or ``None`` when there are
    none or the row was computed at the paper scale (its ``scale``)."""
    def not_comparable(row: dict, metric: str) -> str | None:
        if row.get("scale") == "paper":
            return None
        red = reductions.get(row["dataset"])
        return f"protocol at scale {scale}: " + "; ".join(red) if red else None
    return not_comparable


def paper_side(run, table_name: str, tag: str, *, summary: pd.DataFrame, main: pd.DataFrame,
               missing: Mapping[str, str | None], reductions: Mapping[str, Sequence[str]]
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Register every cell of the paper's ``table_name`` (Table 3, 10 or 11) beside ours as a
    claim ``001-<tag>-...`` and build the table the chapter shows.

    Parameters
    ----------
    run : fusionlib.compendium.run.Run
        The chapter's run.
    table_name, tag : str
        The paper's table and the claim-id tag.
    summary, main : pandas.DataFrame
        Our per-(dataset, discrepancy, method, classifier) summary and per-repetition scores.
    missing : mapping
        dataset -> why it is absent (``None`` when present).
    reductions : mapping
        dataset -> departures from the paper's protocol at this scale.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        The side-by-side table (paper, ours, their sds, verdicts, our runs) with readable
        method names, and the verdict rows :func:`register_table` returned.
    """
    paper = paper_table("001", table_name)
    ours = ours_for_paper(paper, summary, missing, run.scale)
    table = side_by_side(paper, ours, KEYS, list(COLUMNS.values()))
    v = register_table(
        run, table, seed_file="001", tag=tag, where=table_name, metrics=list(COLUMNS.values()),
        tolerance={m: S_T_MARGIN for m in COLUMNS.values()}, keys=("discrepancy", "method"),
        group="dataset", why=known_differences,
        not_comparable=protocol_not_comparable(reductions, run.scale),
        estimates=estimates_fn(main, paper), kind="result")
    wide = v.pivot_table(index=KEYS, columns="metric", values="verdict", aggfunc="first")
    wide.columns = [f"{m} verdict" for m in wide.columns]
    table = table.merge(wide.reset_index(), on=KEYS, how="left")
    for m in COLUMNS.values():  # our sd and number of repetitions beside the paper's
        table[f"{m} sd paper"] = paper[f"{m} sd"].to_numpy()
        table[f"{m} sd ours"] = table.merge(summary, on=KEYS, how="left")[f"{m} sd"].to_numpy()
    table["runs ours"] = table.merge(summary, on=KEYS, how="left")["runs"].to_numpy()
    return table.assign(method=table.method.map(method_label)), v


def shown(table: pd.DataFrame, scale: str | None = None) -> pd.DataFrame:
    """The columns of a :func:`paper_side` table the chapter displays: per classifier, the
    paper's and our mean and sd and the verdict; then our number of runs, and the scale each of
    our rows was computed at when any is not ``scale`` (the chapter's; without it: when they
    come from more than one)."""
    cols = list(KEYS)
    for m in COLUMNS.values():
        cols += [f"{m} paper", f"{m} ours", f"{m} sd paper", f"{m} sd ours", f"{m} verdict"]
    missing = [c for c in cols + ["runs ours"] if c not in table.columns]
    if missing:
        raise InvalidInputError(f"not a paper_side table: it lacks {missing}")
    # the scale each of our rows was computed at, when the chapter reads another scale's cells
    scales = set(table["scale"].dropna()) if "scale" in table.columns else set()
    mixed = bool(scales - {scale}) if scale else len(scales) > 1
    return table[cols + ["runs ours"] + (["scale"] if mixed else [])]


def ranking_claims(run, table_name: str, tag: str, discrepancies: Sequence[str],
                   other: str = "mp-1", *, all_paper: pd.DataFrame, main: pd.DataFrame,
                   plan: Mapping[str, str | None], cfg: Mapping,
                   reductions: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Register, per (dataset, discrepancy) of ``table_name`` where the paper reports
    ``other``, and per classifier, the claim that ``S_T(PT+CP) - S_T(other) < 0`` per
    repetition (``001-<tag>-rank-...``).

    A claim is decided when ``main`` holds both methods' repetitions; its rows may come from
    another scale's cells (a ``scale`` column: a cpu chapter reads the paper scale's cells for
    the rows only that scale runs; both scales share the split, the repetition seeds and, on
    Adult, the protocol), and the claim is then labelled with that scale.

    The paper's gap is read from ``all_paper`` (Tables 3, 10 and 11 together, so that PT+CP
    is found for Table 11's MP rows); a dataset whose data is absent (``plan``) or that this
    scale does not run (``cfg``: ``datasets``, ``settings``; ``discrepancies``) is "not run".
    Returns one row per claim (paper gap, our estimate, verdict, and ``scale``: that of the
    cells that decided it, None when it did not run).
    """
    paper = paper_table("001", table_name)
    out = []
    for (d, disc), p in paper.groupby(["dataset", "discrepancy"], sort=False):
        if other not in set(p.method):
            continue
        p = all_paper[(all_paper.dataset == d) & (all_paper.discrepancy == disc)]
        p = p.set_index("method")
        for key, col in COLUMNS.items():
            suffix = "" if other == "mp-1" else f"-{other}"
            cid = f"001-{tag}-rank-{d}-{disc}{suffix}-{key}"
            what = (f"{d}, {disc.upper()}, {col}: S_T(PT+CP) - S_T({method_label(other)}) < 0 "
                    "per repetition (PTGAN better)")
            paper_gap = round(float(p.loc["pt+cp", col] - p.loc[other, col]), 3)
            rows = main[(main.dataset == d) & (main.discrepancy == disc)
                        & main.method.isin(["pt+cp", other])]
            decided_at = None  # the scale of the cells that decided the claim
            if plan.get(d):
                c = run.claim(cid, "001", table_name, what, paper_gap, None,
                              not_run=f"data absent: {plan[d]}")
            elif set(rows.method) != {"pt+cp", other}:
                ran = (d in cfg["datasets"] and disc in discrepancies
                       and other in cfg["settings"])
                c = run.claim(cid, "001", table_name, what, paper_gap, None,
                              not_run=f"no repetitions of both methods at scale {run.scale}"
                              if ran else
                              f"paper scale only (the {run.scale} scale runs "
                              f"{', '.join(method_label(m) for m in cfg['settings'])} on "
                              f"{', '.join(x.upper() for x in discrepancies)}) and its cells "
                              "are not computed yet: `make paper-cells ONLY=ptgan_tabular` "
                              "computes them on CPU")
            else:
                est, n = paired_difference(main, d, disc, key, "pt+cp", other)
                scales = (sorted(set(rows["scale"].dropna())) if "scale" in rows else [])
                scales = scales or [run.scale]
                # the departures of this scale's rows (the paper scale's have none); a pair
                # across scales is compared only when this scale runs the paper's protocol
                red = reductions.get(d) if scales != ["paper"] else None
                c = run.claim(cid, "001", table_name, what, paper_gap, est, expect="<0",
                              not_comparable=(f"protocol at scale {run.scale}: "
                                              + "; ".join(red)
                                              + ("; paired with the paper scale's runs"
                                                 if len(scales) > 1 else "")) if red else None,
                              why=f"{n} paired repetitions at scale {' and '.join(scales)}"
                              + (" (the same split, repetition seeds and protocol)"
                                 if len(scales) > 1 else ""),
                              scale="paper" if "paper" in scales else None)
                decided_at = "paper" if "paper" in scales else run.scale
            out.append(dict(dataset=d, discrepancy=disc, other=other, classifier=col,
                            paper=paper_gap, ours=c.ours, se=c.ours_se, n=c.ours_n,
                            verdict=c.verdict, scale=decided_at))
    return pd.DataFrame(out)


def pooled_claims(run, per_seed: Mapping[int, pd.DataFrame], *, all_paper: pd.DataFrame,
                  reductions: Sequence[str],
                  seed_scales: Mapping[int, str] | None = None) -> pd.DataFrame:
    """Register ``001-T3-pooled-adult-nd-<classifier>``: S_T(PT+CP) - S_T(MP) < 0 on Adult (ND)
    over the repetitions of every root seed computed (``per_seed``: root seed -> that seed's
    Adult ND scores of the main runs), seed as a block
    (:func:`~fusionlib.ptgan.tabular.evidence.pooled_difference`).

    ``seed_scales``: root seed -> the scale its cells were computed at, where not the
    chapter's (a cpu chapter reads the paper scale's cells of other root seeds: the same
    protocol on Adult). The claim then names each seed's scale and is labelled with that other
    scale, as :func:`ranking_claims` labels rows read from another scale. Returns one row per
    seed and classifier plus the pooled row."""
    from fusionlib.ptgan.tabular.evidence import pooled_difference

    p = all_paper[(all_paper.dataset == "adult") & (all_paper.discrepancy == "nd")]
    p = p.set_index("method")
    other = {s: sc for s, sc in (seed_scales or {}).items()
             if sc != run.scale and s in per_seed}
    label = sorted(set(other.values()))[0] if other else None
    out = []
    for key, col in COLUMNS.items():
        est, table = pooled_difference(per_seed, key)
        seeds = ", ".join(f"{s}" + (f" ({other[int(s)]} scale)" if int(s) in other else "")
                          for s in table["seed"]) or "none"
        paper_gap = round(float(p.loc["pt+cp", col] - p.loc["mp-1", col]), 3)
        c = run.claim(f"001-T3-pooled-adult-nd-{key}", "001", "Table 3",
                      f"adult, ND, {col}: S_T(PT+CP) - S_T(MP) < 0 over the repetitions of every "
                      "root seed computed (seed as a block)", paper_gap, est, expect="<0",
                      not_comparable=("protocol: " + "; ".join(reductions)) if reductions
                      else None,
                      why=f"root seeds {seeds}, {est.n or 0} paired repetitions; tau {TAU}",
                      scale=label)
        out.extend(dict(classifier=col, seed=str(r.seed), mean=r.mean, median=r.median,
                        se=r.se, pairs=r.pairs, scale=other.get(int(r.seed), run.scale),
                        verdict="") for r in table.itertuples())
        out.append(dict(classifier=col, seed="pooled", mean=c.ours, median=float("nan"),
                        se=c.ours_se, pairs=c.ours_n,
                        scale=" and ".join(sorted({run.scale, *other.values()})),
                        verdict=c.verdict))
    return pd.DataFrame(out)


def sensitivity_claims(run, rows: pd.DataFrame, *, reductions: Sequence[str],
                       scale: str | None = None) -> pd.DataFrame:
    """Register ``001-T3-sens-<choice>-<classifier>`` (kind extension): under each unstated
    choice (``rows`` from :func:`~fusionlib.ptgan.tabular.evidence.sensitivity_rows`),
    S_T(PT+CP) - S_T(MP) < 0 per repetition, the paper's ordering. ``scale``: the scale of the
    cells the rows came from, when not the chapter's. Returns (variant, classifier, verdict)
    per claim registered."""
    from fusionlib.compendium.verdicts import Estimate

    out = []
    for r in rows[rows["variant"] != "main"].to_dict("records"):
        est = (Estimate(r["difference"], r["difference se"], n=r["pairs"]) if r["pairs"] >= 2
               else Estimate(float("nan"), None))
        c = run.claim(f"001-T3-sens-{r['variant']}-{r['classifier']}", "001", "Table 3",
                      f"adult, ND, {r['variant']}, {COLUMNS[r['classifier']]}: S_T(PT+CP) - "
                      "S_T(MP) < 0 per repetition (the paper's ordering under another unstated "
                      "choice)", "< 0", est, expect="<0", kind="extension",
                      not_comparable=("protocol: " + "; ".join(reductions)) if reductions
                      else None, why=f"{r['pairs']} paired repetitions", scale=scale)
        out.append(dict(variant=r["variant"], classifier=r["classifier"], verdict=c.verdict))
    return pd.DataFrame(out, columns=["variant", "classifier", "verdict"])


#: the readings of Table 3's set-up the paper leaves open (the Gumbel-softmax temperature and
#: batch norm when sampling); the 45,222-row Adult is not one: the paper states its data
READINGS: tuple[str, ...] = ("tau=0.5", "tau=1", "bn=batch")


def readings_claims(run, pooled: pd.DataFrame, sensitivity: pd.DataFrame, *,
                    scale: str | None = None) -> pd.DataFrame:
    """Register ``001-T3-readings-adult-nd-<classifier>`` (kind result): PT+CP below MP on
    Adult (ND) under every reading of the choices the paper leaves unstated, decided by
    :func:`~fusionlib.compendium.verdicts.across_readings` from the pooled claim (our reading,
    tau 0.2 with running batch norm, every root seed) and the sensitivity claims of
    :data:`READINGS` (root seed 0). ``scale``: the scale of the cells the other readings came
    from, when not the chapter's (a cpu chapter reads the paper scale's sensitivity cells): a
    claim with at least one such reading computed is labelled with it. Returns one row per
    classifier: the verdict under each reading and the combined one."""
    from fusionlib.compendium.verdicts import across_readings

    pooled_rows = pooled[pooled["seed"] == "pooled"].set_index("classifier")
    pooled_v = pooled_rows["verdict"]
    # the scales the pooled reading drew on ("cpu and paper" when other root seeds' cells came
    # from the paper scale: pooled_claims)
    pooled_at = pooled_rows["scale"] if "scale" in pooled_rows else pd.Series(dtype=object)
    sens = (sensitivity.set_index(["variant", "classifier"])["verdict"] if len(sensitivity)
            else pd.Series(dtype=object))
    out = []
    for key, col in COLUMNS.items():
        readings = [(f"tau={TAU:g}, running batch norm (ours; pooled over root seeds)",
                     str(pooled_v.get(col, "not run")))]
        readings += [(v, str(sens.get((v, key), "not run"))) for v in READINGS]
        decision = across_readings(readings)
        other = scale if scale and scale != run.scale and any(
            v != "not run" for _, v in readings[1:]) else None
        if other is None and readings[0][1] != "not run":
            drawn = str(pooled_at.get(col, "")).split(" and ")
            other = next((x for x in drawn if x and x != run.scale), None)
        c = run.claim(f"001-T3-readings-adult-nd-{key}", "001", "Table 3",
                      f"adult, ND, {col}: S_T(PT+CP) - S_T(MP) < 0, decided over every "
                      "reading of the choices the paper leaves unstated (temperature, batch "
                      "norm when sampling)", "< 0", "; ".join(f"{r.split(' (')[0]}: {v}"
                                                     for r, v in readings),
                      decision=decision, why=f"{len(readings)} readings", scale=other)
        out.append(dict(classifier=col, **{r: v for r, v in readings}, combined=c.verdict,
                        reason=decision.reason))
    return pd.DataFrame(out)


def discrepancy_readings_claims(run, rank: pd.DataFrame, discrepancies: Sequence[str],
                                dataset: str = "adult", *, other: str = "mp-1",
                                table_name: str = "Table 10", tag: str = "T10") -> pd.DataFrame:
    """Register ``001-<tag>-readings-<dataset>-<discrepancy>[-<other>]-<classifier>`` (kind
    result): PT+CP below ``other`` (MP; lambda_MP = 1 for Table 10, 10 or 100 for Table 11),
    decided over the readings of the choices the paper leaves unstated (:data:`READINGS`), as
    Table 3's ND ordering is (:func:`readings_claims`): on Adult with ND the temperature alone
    turns the ordering around, so one reading cannot decide it under another discrepancy or
    penalty weight either. Our reading's verdict is the rank claim's (``rank``:
    :func:`ranking_claims` of the table, root seed 0); the paper scale computes no other
    reading of these rows, so those do not vote and the claim reads "not run" (partly
    decided) until they are computed. Returns one row per (discrepancy, classifier)."""
    from fusionlib.compendium.verdicts import across_readings

    out = []
    label = method_label(other)
    suffix = "" if other == "mp-1" else f"-{other}"
    for disc in discrepancies:
        part = rank[(rank["dataset"] == dataset) & (rank["discrepancy"] == disc)
                    & (rank["other"] == other)] if len(rank) else rank
        ours = part.set_index("classifier")["verdict"] if len(part) else pd.Series(dtype=object)
        at = (part.set_index("classifier")["scale"] if len(part) and "scale" in part
              else pd.Series(dtype=object))
        for key, col in COLUMNS.items():
            readings = [(f"tau={TAU:g}, running batch norm (ours; root seed 0)",
                         str(ours.get(col, "not run")))]
            readings += [(v, "not run") for v in READINGS]
            decision = across_readings(readings)
            c = run.claim(f"001-{tag}-readings-{dataset}-{disc}{suffix}-{key}", "001",
                          table_name,
                          f"{dataset}, {disc.upper()}, {col}: S_T(PT+CP) - S_T({label}) < 0, "
                          "decided over every reading of the choices the paper leaves unstated "
                          "(temperature, batch norm when sampling)", "< 0",
                          "; ".join(f"{r.split(' (')[0]}: {v}" for r, v in readings),
                          decision=decision, why=f"{len(readings)} readings",
                          scale=at.get(col) if isinstance(at.get(col), str) else None)
            out.append(dict(discrepancy=disc, other=other, classifier=col,
                            **{r: v for r, v in readings}, combined=c.verdict,
                            reason=decision.reason))
    return pd.DataFrame(out)
