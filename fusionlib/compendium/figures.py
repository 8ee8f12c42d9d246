"""The book's figures: one style, text readable at page width, and what each figure shows.

``FIGURE_STYLE`` is applied once per notebook; :func:`legible` repairs a figure drawn elsewhere
with small fonts; :func:`describe_figure` turns a figure's titles and axis labels into the
alternative text the book shows for it (``Run.save_figure`` records it and the notebook runner
puts it on the figure's output).
"""

from __future__ import annotations

from typing import Any

__all__ = ["FIGURE_STYLE", "legible", "describe_figure"]

#: matplotlib settings for the book's figures (``plt.rcParams.update(FIGURE_STYLE)`` once per
#: notebook). A page shows a figure scaled to its text width, about 700 pixels on a laptop
#: screen, so a figure up to about 11 inches wide (1,100 pixels at 100 dpi) keeps 13-point tick
#: labels at 11 pixels or more.
FIGURE_STYLE: dict[str, Any] = {
    "figure.dpi": 100,
    "font.size": 13,
    "axes.titlesize": 14,
    "axes.labelsize": 13,
    "xtick.labelsize": 13,
    "ytick.labelsize": 13,
    "legend.fontsize": 12,
    "figure.titlesize": 15,
}


def legible(fig: Any, size: float = 12.0, *, width: float | None = None) -> Any:
    """Make a matplotlib figure drawn elsewhere (with small fixed font sizes) readable in the book.

    Every text of ``fig`` smaller than ``size`` points, tick labels included, is raised to
    ``size``; with ``width`` (inches) the figure is first scaled to that width, keeping its aspect.
    The layout is redone (constrained layouts redo themselves when drawn). Returns ``fig``.
    """
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.text import Text

    if width is not None:
        w, h = fig.get_size_inches()
        fig.set_size_inches(width, h * width / w)
    for ax in fig.axes:
        for axis in ("x", "y"):
            labels = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
            if any(t.get_fontsize() < size for t in labels):
                ax.tick_params(axis=axis, labelsize=size)
    for text in fig.findobj(Text):
        if text.get_text() and text.get_fontsize() < size:
            text.set_fontsize(size)
    if not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        fig.tight_layout()
    return fig


def describe_figure(fig: Any) -> str:
    """A one-sentence description of ``fig`` from its texts: the title, then each panel's title
    and axis labels ("Figure: <title>. Panels: <panel> (x: <label>, y: <label>); ...")."""
    parts = []
    title = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    panels = []
    for ax in fig.axes:
        if not ax.get_visible() or not (ax.has_data() or ax.get_title()):
            continue
        bits = [b for b in (ax.get_title(),) if b]
        axes = [f"{k}: {v}" for k, v in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())) if v]
        if axes:
            bits.append(f"({', '.join(axes)})")
        if bits:
            panels.append(" ".join(bits))
    if title:
        parts.append(f"Figure: {title}.")
    if panels:
        shown = list(dict.fromkeys(panels))
        parts.append(f"{'Panels' if len(shown) > 1 else 'Panel'}: {'; '.join(shown[:8])}"
                     + ("; ..." if len(shown) > 8 else "") + ".")
    return " ".join(parts) or "Figure (no title or axis labels)."
