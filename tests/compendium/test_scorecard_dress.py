"""The scorecard page is dressed like a chapter, less the opening box: code folded, figures
described (the page check fails a figure without alternative text)."""

from __future__ import annotations

import json

import nbformat

from fusionlib.compendium.summary import dress_scorecard


def test_the_scorecard_figure_gets_the_alternative_text_it_was_saved_with(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(
        'run.save_figure(fig, "key_claims_forest", alt="...")\nplt.show()')
    cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBOR"})]
    nb.cells = [nbformat.v4.new_markdown_cell("# Reproduction scorecard"), cell]
    (tmp_path / "figures.json").write_text(json.dumps(
        {"key_claims_forest": "Forest plot of the conclusions' key claims"}))
    dress_scorecard(nb, tmp_path)
    assert nb.cells[1].metadata["mystnb"]["image"]["alt"] == \
        "Forest plot of the conclusions' key claims"
    assert "hide-input" in nb.cells[1].metadata["tags"]
    assert len(nb.cells) == 2  # no opening box
