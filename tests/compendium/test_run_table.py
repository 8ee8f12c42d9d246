"""Run.table: links to evidence in cells."""

from __future__ import annotations

import pandas as pd

from fusionlib.compendium.run import Link, Run


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
