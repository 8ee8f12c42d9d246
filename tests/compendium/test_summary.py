"""The opening box of every chapter, and folded code."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from fusionlib.compendium.claims import claims_frame, make_claim
from fusionlib.compendium.summary import (
    SUMMARY_CLASS,
    chapter_summary,
    fold_code,
    insert_summary,
    label_figures,
    load_chapters,
)
from fusionlib.errors import InvalidInputError

REPO = Path(__file__).resolve().parents[2]


def _claims():
    return claims_frame([
        make_claim("001-T3-readings-adult-nd-rf", "001", "Table 3", "q", "<0", -0.02, scale="cpu",
                   experiment="ptgan_tabular", expect="<0", exact="a hand-made value"),
        make_claim("001-T3-adult-x", "001", "Table 3", "q", 0.1, 0.5, scale="cpu",
                   experiment="ptgan_tabular", tolerance=0.01,
                   not_comparable="3,000 of 57,000 iterations"),
        make_claim("001-T9-width", "001", "Table 9", "q", 64, 64, scale="cpu",
                   experiment="ptgan_tabular", tolerance=0, kind="setting"),
    ])


def test_every_chapter_of_the_book_has_a_row():
    chapters = set(load_chapters().index)
    notebooks = {p.stem for p in (REPO / "notebooks").glob("*.md")} - {"scorecard"}
    assert notebooks <= chapters, f"add rows to chapters.csv for {notebooks - chapters}"


def test_summary_counts_verdicts_by_kind_and_names_the_scale():
    text = chapter_summary("ptgan_tabular", _claims(), "cpu")
    assert f":class: {SUMMARY_CLASS}" in text and "scale `cpu`" in text
    assert "2 checks of the paper's results" in text
    assert "1 reproduced" in text and "1 not comparable" in text
    assert "1 setting" in text
    assert 'href="scorecard.html#chapter-ptgan_tabular"' in text
    # the conclusion about Table 3 is listed with the verdict from this chapter's claims
    assert "PTGAN (PT+CP) gives lower S_T than MP" in text


def test_insert_summary_goes_after_the_title_and_splits_the_title_cell():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title\n\nIntro text."),
                nbformat.v4.new_code_cell("x = 1")]
    insert_summary(nb, "BOX")
    assert [c.source for c in nb.cells] == ["# Title", "BOX", "Intro text.", "x = 1"]
    insert_summary(nb, "BOX2")  # again: one box, replaced
    assert [c.source for c in nb.cells].count("BOX") == 0
    assert [c.source for c in nb.cells][:2] == ["# Title", "BOX2"]


def test_insert_summary_needs_a_title():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("no title")]
    with pytest.raises(InvalidInputError, match="title"):
        insert_summary(nb, "BOX")


def test_fold_code_leaves_removed_and_hidden_cells_alone():
    nb = nbformat.v4.new_notebook()
    cells = [nbformat.v4.new_code_cell("a"), nbformat.v4.new_code_cell("b"),
             nbformat.v4.new_code_cell("c"), nbformat.v4.new_markdown_cell("m")]
    cells[1].metadata["tags"] = ["remove-cell"]
    cells[2].metadata["tags"] = ["hide-input"]
    nb.cells = cells
    assert fold_code(nb) == 1 and fold_code(nb) == 0
    assert nb.cells[0].metadata["tags"] == ["hide-input"]
    assert nb.cells[1].metadata["tags"] == ["remove-cell"]


def test_figures_get_the_alternative_text_of_what_they_saved():
    nb = nbformat.v4.new_notebook()
    png = {"output_type": "display_data", "data": {"image/png": "AA=="}, "metadata": {}}
    cells = [nbformat.v4.new_code_cell('run.save_figure(fig, "curves")\nplt.show()'),
             nbformat.v4.new_code_cell('for d in ds:\n    run.save_figure(fig, f"bars_{d}")'),
             nbformat.v4.new_code_cell("plt.show()"), nbformat.v4.new_code_cell("x = 1")]
    for c in cells[:3]:
        c.outputs = [nbformat.from_dict(png)]
    nb.cells = cells
    figures = {"curves": "Figure: S_T curves.", "bars_adult": "Figure: adult.",
               "bars_law": "Figure: law."}
    assert label_figures(nb, figures) == 3
    assert nb.cells[0].metadata["mystnb"]["image"]["alt"] == "Figure: S_T curves."
    assert nb.cells[1].metadata["mystnb"]["image"]["alt"] == "Figure: adult. Figure: law."
    assert "text around it" in nb.cells[2].metadata["mystnb"]["image"]["alt"]
    assert "mystnb" not in nb.cells[3].metadata


def test_describe_figure_reads_titles_and_labels():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fusionlib.compendium.figures import describe_figure

    fig, axes = plt.subplots(1, 2)
    fig.suptitle("Downstream AUC")
    axes[0].plot([0, 1], [0, 1])
    axes[0].set(title="RF", xlabel="iteration", ylabel="AUC")
    axes[1].plot([0, 1], [1, 0])
    axes[1].set(title="SVM", xlabel="iteration")
    assert describe_figure(fig) == ("Figure: Downstream AUC. Panels: RF (x: iteration, y: AUC); "
                                    "SVM (x: iteration).")
    plt.close(fig)


def test_every_chapter_that_reads_cells_names_registered_experiments():
    from fusionlib.compendium.cells.origin import chapter_experiments
    from fusionlib.compendium.cells.registry import experiment_names

    known = set(experiment_names())
    chapters = load_chapters().index
    reading = {c: chapter_experiments(c) for c in chapters}
    assert reading["ptgan_toys"] == ["ptgan_ring", "ptgan_mixup", "ptgan_fig11"]
    assert reading["data"] == []  # reads no cells
    for chapter, names in reading.items():
        assert set(names) <= known, (chapter, set(names) - known)


def test_the_box_says_where_the_numbers_came_from(tmp_path):
    from fusionlib.compendium.cells.origin import chapter_experiments, origin_line

    box = chapter_summary("ptgan_tabular", _claims(), "cpu",
                          origin="Results at scale cpu: 3 of 3 cells, 3 computed on this machine.")
    assert "**Where the numbers came from.** Results at scale cpu: 3 of 3 cells" in box
    assert "Where the numbers came from" not in chapter_summary("ptgan_tabular", _claims(), "cpu")
    assert chapter_experiments("ptgan_tabular", tmp_path / "absent.yaml") == []
    assert origin_line("data", "smoke") is None  # reads no cells
    line = origin_line("ptgan_tabular", "smoke", root=tmp_path)
    assert line.startswith("Results at scale smoke: 0 of 5 cells")  # the smoke grid's 5


def test_dress_chapter_reads_the_origin_that_the_run_recorded(tmp_path):
    import json

    from fusionlib.compendium.summary import dress_chapter

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# T"),
                                         nbformat.v4.new_code_cell("x = 1")])
    _claims().to_csv(tmp_path / "claims.csv", index=False)
    (tmp_path / "provenance.json").write_text(json.dumps({"origin": "Results at scale cpu: X."}))
    dress_chapter(nb, "ptgan_tabular", tmp_path, "cpu")
    text = "".join(c.source for c in nb.cells)
    assert "**Where the numbers came from.** Results at scale cpu: X." in text
