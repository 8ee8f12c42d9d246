"""Run.table: links to evidence in cells, the decisive columns first, wide tables."""

from __future__ import annotations

import pandas as pd

from fusionlib.compendium.run import WIDE_COLUMNS, Link, Run, decisive_first


def test_link_cells_render_as_escaped_links_and_read_as_their_text(tmp_path):
    run = Run("t", scale="smoke", seed=0, results_dir=tmp_path)
    df = pd.DataFrame({"name": ["a<b", "c"],
                       "evidence": [Link("2 key <claims>", "#conclusion-000-K1"),
                                    (Link("one", "x.html#what-we-found"), Link("two", "y.html"))]})
    text = run.table(df, "T").to_html()
    assert '<a href="#conclusion-000-K1">2 key &lt;claims&gt;</a>' in text
    assert '<a href="x.html#what-we-found">one</a> · <a href="y.html">two</a>' in text
    assert ">a&lt;b<" in text  # other text is still escaped, once
    assert str(Link("2 key claims", "#c")) == "2 key claims"
    mixed = pd.DataFrame({"evidence": [Link("k", "#c"), None, "a&b"]})
    text = run.table(mixed, "T").to_html()
    assert ">–<" in text and ">a&amp;b<" in text


def _wide():
    cols = {"method": ["PT+CP", "MP"]}
    for c in ("RF", "SVM", "LR"):
        cols[f"{c} paper"] = [0.022, 0.047]
        cols[f"{c} sd"] = [0.004, 0.029]
    cols["notes"] = ["a", "b"]
    cols["RF ours"] = [0.0301, 0.0512]
    cols["verdict"] = ["reproduced", "differs"]
    return pd.DataFrame(cols)


def _header(text):
    import re

    return re.findall(r'<th [^>]*class="col_heading[^"]*"[^>]*>([^<]*)</th>', text)


def test_a_wide_table_puts_label_verdict_ours_and_paper_first_in_a_sticky_box(tmp_path):
    run = Run("t", scale="cpu", seed=0, results_dir=tmp_path)
    df = _wide()
    assert df.shape[1] > WIDE_COLUMNS
    shown = run.table(df, "Table 3")
    text = shown._repr_html_()
    assert text.startswith('<div class="table-scroll table-wide"')
    assert _header(text) == ["method", "verdict", "RF paper", "SVM paper", "LR paper",
                             "RF ours", "RF sd", "SVM sd", "LR sd", "notes"]
    # no number changes: every value of the frame is in the table, each in its column
    assert ">0.030<" in text and ">0.022<" in text and ">differs<" in text
    assert list(df.columns)[-1] == "verdict"  # the caller's frame is left as it was


def test_a_narrow_table_keeps_its_order_unless_asked(tmp_path):
    run = Run("t", scale="cpu", seed=0, results_dir=tmp_path)
    df = pd.DataFrame({"claim": ["a"], "x": [1.5], "paper": [0.1], "verdict": ["differs"]})
    text = run.table(df, "T")._repr_html_()
    assert text.startswith('<div class="table-scroll"') and "table-wide" not in text
    assert _header(text) == ["claim", "x", "paper", "verdict"]
    asked = run.table(df, "T", decisive=True)._repr_html_()
    assert _header(asked) == ["claim", "verdict", "paper", "x"]
    assert _header(run.table(_wide(), "T", decisive=False)._repr_html_())[-1] == "verdict"


def test_decisive_first_reads_whole_words_and_keeps_the_label_first():
    df = pd.DataFrame(columns=["verdict", "paper_se", "ours", "papers", "x", "Verdict (RF)"])
    assert list(decisive_first(df).columns) == ["verdict", "Verdict (RF)", "ours", "paper_se",
                                                "papers", "x"]
    assert list(decisive_first(df, index=True).columns)[:2] == ["verdict", "Verdict (RF)"]
    same = pd.DataFrame(columns=["a", "verdict", "b"])
    assert decisive_first(same) is same


def test_leading_text_columns_label_the_rows_and_stay_in_front():
    df = pd.DataFrame({"dataset": ["adult"], "method": ["MP"], "threshold": [0.1],
                       "RF paper": [0.2], "RF ours": [0.3], "verdict": ["differs"]})
    assert list(decisive_first(df).columns) == ["dataset", "method", "verdict", "RF paper",
                                                "RF ours", "threshold"]


def test_infinity_shows_as_its_sign_not_inf(tmp_path):
    run = Run("t", scale="cpu", seed=0, results_dir=tmp_path)
    df = pd.DataFrame({"sigma": ["0", "1", "2"], "epsilon": [float("inf"), 3.25, float("nan")],
                       "low": [-float("inf"), 0.5, 1.0]})
    text = run.table(df, "T").to_html()
    assert ">∞<" in text and ">−∞<" in text and ">inf<" not in text
    assert ">3.250<" in text and ">–<" in text and ">0.500<" in text


def test_a_column_of_links_is_aligned_as_text(tmp_path):
    run = Run("t", scale="cpu", seed=0, results_dir=tmp_path)
    df = pd.DataFrame({"n": [1, 2], "evidence": [
        (Link("its 9 key claims", "#c"), Link("FusionGAN: the technical appendix: what we found",
                                              "fusiongan.html#what-we-found")), "–"]})
    text = run.table(df, "T").to_html()
    assert "td.col1 {\n  text-align: left;\n  min-width: 12em;" in text


def test_caption_names_the_scale_of_the_cells_shown(tmp_path):
    import pytest

    from fusionlib.errors import InvalidInputError

    run = Run("t", scale="cpu", seed=0, results_dir=tmp_path)
    df = pd.DataFrame({"a": [1.0]})
    assert "(scale: cpu)" in run.table(df, "T").to_html()
    html = run.table(df, "T", scale="paper").to_html()
    assert "(scale: paper)" in html and "scale: cpu" not in html
    with pytest.raises(InvalidInputError, match="'gpu' is not one of"):
        run.table(df, "T", scale="gpu")
