"""The reproduction (forest) plot: its data (gap, interval, band), the picking of rows, the
figure, and a planted fault (paper and ours swapped flips the gap)."""

from __future__ import annotations

import math

import matplotlib
import pandas as pd
import pytest
from scipy import stats

matplotlib.use("Agg")

from fusionlib.compendium.claims import claims_frame, make_claim  # noqa: E402
from fusionlib.compendium.forest import (  # noqa: E402
    FOREST_COLUMNS,
    WIDTH,
    forest_data,
    forest_note,
    forest_plot,
    key_claims,
    pick_rows,
)
from fusionlib.compendium.verdicts import Estimate  # noqa: E402
from fusionlib.errors import InvalidInputError  # noqa: E402


def _claim(cid, paper, ours, tolerance=0.05, where="Table 3", **kw):
    return make_claim(cid, "001", where, "S_T", paper, ours, scale="cpu", experiment="t",
                      tolerance=tolerance, **kw)


def _frame():
    return claims_frame([
        # a mean of 10 repetitions against a published mean and sd of 10 runs
        _claim("001-T3-adult-nd-pt_cp-RF", Estimate.from_mean_sd(0.022, 0.004, 10),
               Estimate(0.030, 0.002, 10), tolerance=0.011),
        # exact on both sides: no spread
        _claim("001-T9-width", 64, 64, tolerance=1, where="Table 9", kind="setting"),
        # ours of one repetition: spread unknown, no interval
        _claim("001-T3-adult-nd-mp-1-RF", 0.047, Estimate(0.2, None, 1), tolerance=0.011),
        # nothing to draw: not run, a direction, an exact comparison (tolerance 0)
        _claim("001-T3-law-nd-pt_cp-RF", 0.018, None, not_run="paper scale only"),
        _claim("001-T3-rank-adult-nd-rf", "< 0", Estimate(-0.02, 0.005, n=10), tolerance=None,
               expect="<0"),
        _claim("001-T9-depth", 7, 7, tolerance=0, where="Table 9", kind="setting"),
    ])


def test_gap_interval_and_band_of_a_claim_with_repetitions_on_both_sides():
    d = forest_data(_frame())
    assert tuple(d.columns) == FOREST_COLUMNS
    row = d.set_index("claim_id").loc["001-T3-adult-nd-pt_cp-RF"]
    assert row.gap == pytest.approx(0.030 - 0.022)
    se_paper, se_ours = 0.004 / math.sqrt(10), 0.002
    se = math.hypot(se_paper, se_ours)
    df = (se**2) ** 2 / (se_paper**4 / 9 + se_ours**4 / 9)  # Welch-Satterthwaite
    half = stats.t.ppf(0.975, df) * se
    assert row.se == pytest.approx(se) and row.df == pytest.approx(df)
    assert (row.low, row.high) == pytest.approx((row.gap - half, row.gap + half))
    assert (row.band_low, row.band_high) == (-0.011, 0.011)
    assert row.gap_tol == pytest.approx(row.gap / 0.011)
    assert row.high_tol == pytest.approx(row.high / 0.011)
    assert row.label == "pt_cp-RF"  # the words its group shares are dropped


def test_exact_values_have_a_zero_width_interval_and_unknown_spread_none():
    d = forest_data(_frame()).set_index("claim_id")
    exact = d.loc["001-T9-width"]
    assert exact.gap == 0 and exact.low == exact.high == 0
    unknown = d.loc["001-T3-adult-nd-mp-1-RF"]
    assert unknown.gap == pytest.approx(0.153) and math.isnan(unknown.low)


def test_only_claims_with_two_numbers_and_a_positive_tolerance_are_drawn():
    claims = _frame()
    d = forest_data(claims)
    assert set(d.claim_id) == {"001-T3-adult-nd-pt_cp-RF", "001-T9-width",
                               "001-T3-adult-nd-mp-1-RF"}
    note = forest_note(claims, d)
    assert note.startswith("3 of the 6 claims drawn") and "1 not run" in note
    assert "2 without a gap to draw" in note


def test_planted_fault_swapping_paper_and_ours_flips_the_gap():
    claims = _frame()
    swapped = claims.copy()
    for a, b in (("paper", "ours"), ("paper_se", "ours_se"), ("paper_n", "ours_n")):
        swapped[a], swapped[b] = claims[b], claims[a]
    d, s = forest_data(claims), forest_data(swapped)
    both = d.merge(s, on="claim_id", suffixes=("", "_swapped"))
    assert len(both) == 3
    assert (both.gap_swapped == -both.gap).all()
    finite = both.low.notna()
    assert both.loc[finite, "low_swapped"].to_numpy() == pytest.approx(
        -both.loc[finite, "high"].to_numpy())
    moved = both[both.gap != 0]
    assert (moved.gap_tol * moved.gap_tol_swapped < 0).all()  # other side of the band


def test_groups_from_a_column_or_one_name_per_claim():
    claims = _frame()
    assert set(forest_data(claims).group) == {"Table 3", "Table 9"}
    d = forest_data(claims, group=["K1"] * len(claims))
    assert set(d.group) == {"K1"}
    with pytest.raises(InvalidInputError, match="groups"):
        forest_data(claims, group=["K1"])
    with pytest.raises(InvalidInputError, match="column"):
        forest_data(claims, group="nowhere")


def _many(n_groups, per_group):
    rows = []
    for g in range(n_groups):
        for i in range(per_group):
            verdict = "differs" if i == per_group - 1 else "reproduced"
            rows.append({"group": f"G{g}", "claim_id": f"c{g}-{i}", "verdict": verdict,
                         "gap_tol": 0.1 * i})
    return pd.DataFrame(rows)


def test_pick_rows_keeps_every_group_its_share_and_the_differs_first():
    data = _many(5, 20)
    kept = pick_rows(data, 40)
    assert len(kept) == 40
    assert kept.groupby("group").size().tolist() == [8] * 5
    assert (kept.groupby("group").verdict.apply(lambda v: (v == "differs").sum()) == 1).all()
    assert list(kept.index) == sorted(kept.index)  # the order of the table is kept
    assert len(pick_rows(_many(50, 1), 40)) == 40  # more groups than rows: one each until full
    assert pick_rows(data, 1000) is data


def test_plot_draws_a_row_per_claim_with_a_legend_readable_at_book_width():
    claims = _frame()
    fig, shown = forest_plot(forest_data(claims), title="Table 3")
    assert len(shown) == 3
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.texts]
    assert {"Table 3", "Table 9", "pt_cp-RF"} <= set(labels)
    legend = fig.legends[0]
    assert min(t.get_fontsize() for t in legend.get_texts()) >= 9
    assert {"reproduced", "inconclusive"} <= {t.get_text() for t in legend.get_texts()}
    assert fig.get_size_inches()[0] == WIDTH == 5.0
    assert min(t.get_fontsize() for t in ax.texts) >= 12
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_plot_is_one_column_readable_on_a_phone():
    # labels above the lines, not a column of tick labels beside the axis: the axis has the
    # whole width, and a phone (358 px of text column) shows the 500-px figure at 0.72 of its
    # size, its 12-point labels (16.7 px at 100 dpi) at 12 px
    import matplotlib.pyplot as plt

    fig, _ = forest_plot(forest_data(_frame()))
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_yticklabels() == [] or all(not t.get_text() for t in ax.get_yticklabels())
    axis_box = ax.get_window_extent()
    assert axis_box.width / fig.bbox.width > 0.85
    drawn_px = WIDTH * 100
    shown = 358 / drawn_px
    assert min(t.get_fontsize() for t in ax.texts) * 100 / 72 * shown >= 11.5
    # every label starts inside the axis, at its left edge, and stays within the figure
    for t in ax.texts:
        box = t.get_window_extent()
        assert box.x0 >= axis_box.x0 - 1 and box.x1 <= fig.bbox.width + 1
    plt.close(fig)


def test_plot_panels_hold_at_most_max_rows_each():
    data = _many(3, 30).assign(
        label="x", paper=0.0, ours=0.0, gap=0.0, se=0.0, df=float("nan"), low=0.0, high=0.0,
        tolerance=1.0, band_low=-1.0, band_high=1.0, low_tol=0.0, high_tol=0.0,
        paper_name=["A"] * 30 + ["B"] * 60)
    fig, shown = forest_plot(data, max_rows=40, panel="paper_name", headers=False)
    assert len(fig.axes) == 2 and len(shown) == 30 + 40
    import matplotlib.pyplot as plt

    plt.close(fig)
    with pytest.raises(InvalidInputError, match="no claim"):
        forest_plot(data.iloc[:0])


def test_key_claims_one_row_per_conclusion_and_claim():
    claims = _frame()
    conclusions = pd.DataFrame({"conclusion_id": ["001-K1", "001-K2"],
                                "claim_ids": ["001-T3-adult-nd-pt_cp-RF 001-T9-width",
                                              "001-T9-width missing-id"]})
    k = key_claims(conclusions, claims)
    assert list(zip(k.conclusion, k.claim_id, strict=True)) == [
        ("001-K1", "001-T3-adult-nd-pt_cp-RF"), ("001-K1", "001-T9-width"),
        ("001-K2", "001-T9-width")]
    assert len(key_claims(conclusions.iloc[:0], claims)) == 0
