"""The reproduction (forest) plot: each claim's gap to the paper against its tolerance.

A claim compares the paper's value with ours within a tolerance
(:mod:`fusionlib.compendium.verdicts`). :func:`forest_data` turns a claims frame (the columns of
:class:`~fusionlib.compendium.claims.Claim`, all text, as ``claims.csv`` and ``Run.claims`` hold
them) into one row per claim that can be drawn: the gap ``ours - paper``, its 95 % interval
(Student's t with the degrees of freedom the verdicts use: ``n - 1`` per side with repetitions,
Welch-Satterthwaite for two, the normal quantile for a published se without ``n``) and the
tolerance band ``[-tolerance, +tolerance]``, also in units of the tolerance so that claims on
different scales (an AUC, a FID) share one axis. :func:`forest_plot` draws them, coloured by
verdict and grouped (by table, by conclusion), at most ``max_rows`` rows per panel
(:func:`pick_rows` keeps the claims that decide first).

A claim is drawn when both values are finite numbers and its tolerance is above 0. Claims
decided otherwise (a direction, an exact setting, a yes/no check) and claims not run have no
gap to draw; :func:`forest_note` says how many, and why.

"Reproduced" is decided by the 90 % interval (TOST); the plot shows the 95 % interval of every
claim, the one "differs" is decided by, so a reproduced claim's bar may reach a little past
the band.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from fusionlib.compendium.verdicts import LEVEL, VERDICTS
from fusionlib.errors import InvalidInputError

__all__ = ["VERDICT_COLOURS", "FOREST_COLUMNS", "WIDTH", "forest_data", "pick_rows",
           "forest_plot", "forest_note", "key_claims"]

#: the book's colour of each verdict (the scorecard and the introduction use the same)
VERDICT_COLOURS: dict[str, str] = {"reproduced": "#1a7f37", "differs": "#b42318",
                                   "inconclusive": "#9a6700", "not comparable": "#6e4cc2",
                                   "not run": "#666666"}
#: the columns of :func:`forest_data`
FOREST_COLUMNS: tuple[str, ...] = (
    "group", "claim_id", "label", "verdict", "paper", "ours", "gap", "se", "df", "low", "high",
    "tolerance", "band_low", "band_high", "gap_tol", "low_tol", "high_tol")
#: the order in which :func:`pick_rows` keeps claims: those that decide against the paper first
PICK_ORDER: tuple[str, ...] = ("differs", "inconclusive", "reproduced", "not comparable")
#: the x-axis is linear within +-LINEAR tolerances and logarithmic beyond, up to +-CLIP
#: tolerances at most; a bar beyond ends in an arrow
LINEAR = 2.0
CLIP = 100.0
#: the figure's width in inches (see :func:`forest_plot`) and the height of one claim's row
#: (its label above, its line below)
WIDTH = 5.0
ROW_IN = 0.46
#: the claim labels' size in points
LABEL_PT = 12


def _number(text: object) -> float:
    """A claims-file cell as a float (NaN for text, empty cells and non-finite values)."""
    try:
        x = float(str(text).strip())
    except ValueError:
        return math.nan
    return x if math.isfinite(x) else math.nan


def _side(se: object, n: object) -> tuple[float | None, float | None]:
    """(se, df) of one side as the claims file holds it: an empty se with no repetitions is an
    exact value (a published number: se 0), an empty se with repetitions an unknown spread
    (None: one repetition); df is ``n - 1`` with two repetitions or more, else None (normal)."""
    s, k = _number(se), _number(n)
    count = int(k) if math.isfinite(k) and k >= 1 and k == int(k) else None
    df = float(count - 1) if count is not None and count >= 2 else None
    if str(se).strip() == "" or not math.isfinite(s):
        return (None if count is not None else 0.0), df
    return s, df


def _interval(paper: tuple[float | None, float | None], ours: tuple[float | None, float | None],
              level: float) -> tuple[float, float | None, float | None]:
    """(se, df, half-width) of the gap from each side's (se, df), as the verdicts compute it
    (Welch-Satterthwaite with two known df, the smaller known df with one, the normal quantile
    with none); se NaN and no half-width when either side's spread is unknown."""
    from scipy import stats

    (o_se, o_df), (p_se, p_df) = ours, paper
    if o_se is None or p_se is None:
        return math.nan, None, None
    s = math.hypot(o_se, p_se)
    if s == 0:
        return 0.0, None, 0.0
    parts = [(se, df) for se, df in ((o_se, o_df), (p_se, p_df)) if se]
    known = [df for _, df in parts if df is not None]
    if not known:
        df = None
    elif len(known) < len(parts):
        df = float(min(known))
    else:
        df = (sum(se**2 for se, _ in parts) ** 2) / sum(se**4 / d for se, d in parts)
    q = float(stats.norm.ppf((1 + level) / 2) if df is None else stats.t.ppf((1 + level) / 2,
                                                                             df))
    return s, df, q * s


def _labels(ids: Sequence[str]) -> list[str]:
    """Claim ids without the seed file's prefix and the words every id of the group shares."""
    parts = [i.split("-") for i in ids]
    common = 0
    if len(parts) > 1:
        for words in zip(*parts, strict=False):
            if len(set(words)) > 1:
                break
            common += 1
    else:
        common = 1 if parts and len(parts[0]) > 1 and parts[0][0].isdigit() else 0
    # two words at least stay ("H-n", not "n"), the seed file's prefix always goes
    common = max(min(common, min((len(p) for p in parts), default=2) - 2),
                 1 if all(len(p) > 1 and p[0].isdigit() for p in parts) else 0)
    return ["-".join(p[common:]) for p in parts]


def forest_data(claims: pd.DataFrame, *, group: str | Sequence[str] | pd.Series = "where",
                level: float = LEVEL) -> pd.DataFrame:
    """One row per claim that has a gap to draw (see the module text), in the claims' order.

    ``group``: a column of ``claims`` (default ``where``: by table or figure), or one group
    name per claim (a sequence or a Series aligned with ``claims``, e.g. each claim's
    conclusion). Columns: :data:`FOREST_COLUMNS` (``gap = ours - paper``, ``low``/``high``
    its ``level`` interval, NaN when a side's spread is unknown; ``band_low``/``band_high``
    ``-+tolerance``; ``*_tol`` the same in units of the tolerance; ``label`` the id without the
    words its group shares).
    """
    if not 0 < level < 1:
        raise InvalidInputError(f"level must lie in (0, 1), got {level!r}")
    missing = {"claim_id", "paper", "ours", "tolerance", "verdict"} - set(claims.columns)
    if missing:
        raise InvalidInputError(f"forest_data needs the claims columns {sorted(missing)}")
    if isinstance(group, str):
        if group not in claims.columns:
            raise InvalidInputError(f"group column {group!r} is not a column of the claims")
        groups = claims[group].astype(str).tolist()
    else:
        groups = [str(g) for g in group]
        if len(groups) != len(claims):
            raise InvalidInputError(f"group names {len(groups)} groups for {len(claims)} claims")
    rows = []
    for g, c in zip(groups, claims.to_dict("records"), strict=True):
        p, o, tol = _number(c["paper"]), _number(c["ours"]), _number(c["tolerance"])
        if not (math.isfinite(p) and math.isfinite(o) and math.isfinite(tol) and tol > 0):
            continue
        paper = _side(c.get("paper_se", ""), c.get("paper_n", ""))
        ours = _side(c.get("ours_se", ""), c.get("ours_n", ""))
        if str(c.get("test", "")).startswith("no interval"):  # the rule found no spread
            ours = (None, ours[1])
        se, df, half = _interval(paper, ours, level)
        gap = o - p
        low, high = (gap - half, gap + half) if half is not None else (math.nan, math.nan)
        rows.append({"group": g, "claim_id": c["claim_id"], "verdict": c["verdict"],
                     "paper": p, "ours": o, "gap": gap, "se": se,
                     "df": math.nan if df is None else df, "low": low, "high": high,
                     "tolerance": tol, "band_low": -tol, "band_high": tol,
                     "gap_tol": gap / tol, "low_tol": low / tol, "high_tol": high / tol})
    out = pd.DataFrame(rows, columns=[c for c in FOREST_COLUMNS if c != "label"])
    labels = pd.Series("", index=out.index, dtype=object)
    for _, idx in out.groupby("group", sort=False).groups.items():
        labels.loc[idx] = _labels(out.loc[idx, "claim_id"].tolist())
    out.insert(2, "label", labels)
    return out.reset_index(drop=True)


def key_claims(conclusions: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """The key claims of each conclusion, one row per (conclusion, claim), in the conclusions'
    order: the rows of ``claims`` with ``conclusion`` (its id) and ``seed_file`` kept.
    ``conclusions``: rows of :func:`fusionlib.compendium.conclusions.conclusion_verdicts`
    (``claim_ids``: the key claims' ids, space-separated)."""
    if not len(claims) or not len(conclusions):
        return claims.assign(conclusion=pd.Series(dtype=str)).iloc[:0]
    by_id = claims.set_index("claim_id", drop=False)
    parts = []
    for c in conclusions.itertuples():
        ids = [i for i in str(c.claim_ids).split() if i in by_id.index]
        if ids:
            parts.append(by_id.loc[ids].assign(conclusion=c.conclusion_id))
    if not parts:
        return claims.assign(conclusion=pd.Series(dtype=str)).iloc[:0]
    return pd.concat(parts, ignore_index=True)


def pick_rows(data: pd.DataFrame, max_rows: int = 40) -> pd.DataFrame:
    """At most ``max_rows`` rows of :func:`forest_data`, every group keeping its share (at least
    one row each while rows are left), within a group the claims that decide against the paper
    first (differs, inconclusive, reproduced, not comparable; then the largest gap in
    tolerances). The groups and each group's rows keep their order."""
    if max_rows < 1:
        raise InvalidInputError(f"max_rows must be >= 1, got {max_rows!r}")
    if len(data) <= max_rows:
        return data
    rank = {v: i for i, v in enumerate(PICK_ORDER)}
    groups = list(dict.fromkeys(data["group"]))
    sizes = data.groupby("group", sort=False).size()
    quota = dict.fromkeys(groups, 0)
    left = max_rows
    while left > 0:  # round robin: one more row to each group that has some left
        progress = False
        for g in groups:
            if left and quota[g] < sizes[g]:
                quota[g] += 1
                left -= 1
                progress = True
        if not progress:
            break
    keep = []
    for g in groups:
        mine = data[data["group"] == g]
        order = mine.assign(_r=mine["verdict"].map(lambda v: rank.get(v, len(rank))),
                            _a=-mine["gap_tol"].abs()).sort_values(["_r", "_a"], kind="stable")
        keep += sorted(order.index[:quota[g]])
    return data.loc[keep]


def forest_note(claims: pd.DataFrame, shown: pd.DataFrame, *, drawn: int | None = None) -> str:
    """One sentence on what the plot leaves out: claims without a gap to draw (not run, decided
    by a direction or an exact check) and drawable claims left out by :func:`pick_rows`.
    ``shown``: the rows drawn; ``drawn``: how many rows :func:`forest_data` gave (default
    ``len(shown)``)."""
    drawable = len(shown) if drawn is None else drawn
    total = len(claims)
    if not total:
        return "No claim to draw."
    not_run = int((claims["verdict"] == "not run").sum())
    other = total - drawable - not_run
    bits = [f"{len(shown)} of the {total} claims drawn"]
    if drawable > len(shown):
        bits.append(f"{drawable - len(shown)} more with a gap left out to keep the plot "
                    "legible (within each group those that decide against the paper are kept "
                    "first)")
    if not_run:
        bits.append(f"{not_run} not run")
    if other > 0:
        bits.append(f"{other} without a gap to draw (a direction, an exact value or a yes/no "
                    "check decides them: see the table)")
    return "; ".join(bits) + "."


def forest_plot(data: pd.DataFrame, *, title: str = "", max_rows: int = 40,
                width: float = WIDTH, panel: str | None = None, headers: bool = True):
    """Draw :func:`forest_data` rows: one line per claim, the gap in units of its tolerance
    with its 95 % interval, the band ``[-1, 1]`` shaded, coloured by verdict, grouped.

    At most ``max_rows`` rows per panel (:func:`pick_rows`); ``panel`` names a column of
    ``data`` that splits the rows into panels stacked vertically (one per value). ``headers``:
    each group opens with a line of its own that names it; else its name prefixes its first
    claim's label (fewer lines for many small groups). Returns ``(fig, shown)``: the figure and
    the rows drawn.

    One column, for a phone as much as a laptop: each claim's label is written above its line,
    across the whole width, instead of in a column of its own beside the axis, so the axis
    keeps the full width of a narrow figure. At ``width`` = :data:`WIDTH` inches (500 pixels at
    100 dpi) the figure is shown at its drawn size on a laptop and at about 0.7 of it on a
    390-pixel phone, where its 12-point labels are still about 12 pixels high."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if not len(data):
        raise InvalidInputError("forest_plot: no claim has a gap to draw")
    panels = list(dict.fromkeys(data[panel])) if panel else [None]
    chunks = [pick_rows(data[data[panel] == p] if panel else data, max_rows) for p in panels]
    heights = [len(c) + (c["group"].nunique() if headers else 0) for c in chunks]
    fig, axes = plt.subplots(len(chunks), 1, figsize=(width, 1.9 + ROW_IN * sum(heights)
                                                      + 0.6 * len(chunks)),
                             height_ratios=heights, squeeze=False, layout="constrained")
    clip = max(_limit(c) for c in chunks)  # one x-axis for every panel
    for ax, chunk, name in zip(axes[:, 0], chunks, panels, strict=True):
        _draw_panel(ax, chunk, headers, clip)
        if name is not None:
            ax.set_title(str(name), loc="left", fontsize=14, fontweight="bold")
    axes[-1, 0].set_xlabel("ours − paper, in tolerances\n(logarithmic beyond ±2)", fontsize=13)
    present = [v for v in VERDICTS if v in set(data["verdict"])]
    handles = [Patch(color="#d9eedd", label="within the tolerance")]
    handles += [Line2D([], [], color=VERDICT_COLOURS.get(v, "#333"), marker="o", lw=2, label=v)
                for v in present]
    if data["low"].isna().any():
        handles.append(Line2D([], [], color="#333", marker="o", mfc="white", lw=0,
                              label="no interval"))
    fig.legend(handles=handles, loc="outside lower center", ncols=min(2, len(handles)),
               fontsize=12, frameon=False)
    if title:
        fig.suptitle(title, fontsize=14, x=0.01, ha="left")
    return fig, pd.concat(chunks)


def _no_minor_ticks():
    from matplotlib.ticker import NullLocator

    return NullLocator()


def _limit(chunk: pd.DataFrame) -> float:
    """How far the x-axis reaches (in tolerances): past every point and interval, at least 3,
    at most :data:`CLIP`."""
    ends = pd.concat([chunk["gap_tol"], chunk["low_tol"], chunk["high_tol"]]).abs()
    reach = float(ends[np.isfinite(ends)].max()) if np.isfinite(ends).any() else 0.0
    if reach <= 3:
        return 3.0
    return float(min(CLIP, 10 ** math.ceil(math.log10(reach * 1.05))))


def _draw_panel(ax, chunk: pd.DataFrame, headers: bool, clip: float) -> None:
    from matplotlib.transforms import blended_transform_factory

    ax.set_xscale("symlog", linthresh=LINEAR, linscale=1.5)
    ax.axvspan(-1, 1, color="#d9eedd", zorder=0)
    ax.axvline(0, color="#555", lw=0.8, zorder=1)
    # a label sits above its line, from the axis' left edge (x in axes units, y in data units)
    at_left = blended_transform_factory(ax.transAxes, ax.transData)
    y = 0
    for g, rows in chunk.groupby("group", sort=False):
        if y:
            ax.axhline(y - 0.5, color="#bbb", lw=0.8)
        first = True
        if headers:
            ax.text(0.01, y, str(g), transform=at_left, fontsize=LABEL_PT + 1,
                    fontweight="bold", va="center", ha="left", zorder=4)
            y += 1
        for r in rows.itertuples():
            colour = VERDICT_COLOURS.get(r.verdict, "#333")
            x = float(np.clip(r.gap_tol, -clip, clip))
            point = dict(marker="o", ms=6) if abs(r.gap_tol) <= clip else dict(
                marker="<" if r.gap_tol < 0 else ">", ms=9)  # the point itself is off the axis
            line_y = y + 0.18
            if math.isfinite(r.low_tol):
                lo, hi = (float(np.clip(v, -clip, clip)) for v in (r.low_tol, r.high_tol))
                ax.plot([lo, hi], [line_y, line_y], color=colour, lw=2, zorder=2)
                for edge, raw, m in ((lo, r.low_tol, "<"), (hi, r.high_tol, ">")):
                    if abs(raw) > clip:
                        ax.plot(edge, line_y, marker=m, color=colour, ms=7, zorder=3)
                ax.plot(x, line_y, color=colour, lw=0, zorder=3, **point)
            else:
                ax.plot(x, line_y, lw=0, mfc="white", mec=colour, mew=1.8, zorder=3,
                        **{**point, "ms": point["ms"] + 1})
            label = r.label if headers or not first else f"{g} · {r.label}"
            ax.text(0.01, y - 0.2, label, transform=at_left, fontsize=LABEL_PT, va="center",
                    ha="left", zorder=4,
                    bbox=dict(boxstyle="square,pad=0.05", fc="white", ec="none", alpha=0.7))
            first = False
            y += 1
    ax.set_yticks([])
    ax.set_ylim(y - 0.5, -0.5)
    ax.set_xlim(-clip * 1.05, clip * 1.05)
    marks = [m for m in (1, 10, 100) if m <= clip]
    ax.set_xticks([-m for m in reversed(marks)] + [0] + marks,
                  [f"−{m}" for m in reversed(marks)] + ["0"] + [str(m) for m in marks],
                  fontsize=LABEL_PT)
    ax.xaxis.set_minor_locator(_no_minor_ticks())
    ax.grid(axis="x", color="#eee", lw=0.6)
