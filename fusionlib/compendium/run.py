"""The :class:`Run` object every notebook uses: scale, configuration, results, claims, provenance.

A notebook creates one ``Run`` after its ``parameters`` cell, picks its configuration for the
current scale, saves tables and figures (atomically), registers scorecard claims, and calls
:meth:`Run.finish`, which writes ``provenance.json`` and ``claims.csv``.
"""

from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fusionlib.compendium.claims import Claim, claims_frame, make_claim
from fusionlib.compendium.figures import FIGURE_STYLE, describe_figure, legible
from fusionlib.compendium.provenance import provenance_record
from fusionlib.compendium.scales import SCALES, validate_scale
from fusionlib.compendium.verdicts import Decision
from fusionlib.errors import InvalidInputError
from fusionlib.io import atomic_write, atomic_write_json

__all__ = ["Run", "BookTable", "Link", "WIDE_COLUMNS", "decisive_first", "torch_device",
           "setting_text", "FIGURE_STYLE", "legible"]


@dataclass(frozen=True)
class Link:
    """A table cell that links to evidence: :meth:`Run.table` shows ``text`` as a link to
    ``href`` (both HTML-escaped); anywhere else (a CSV, a plain frame) it is its text. A cell
    may also hold a tuple of links, shown side by side."""

    text: str
    href: str

    def __str__(self) -> str:
        return self.text

    def html(self) -> str:
        return f'<a href="{html.escape(self.href)}">{html.escape(self.text)}</a>'


def _float_cell(value: float, digits: int) -> str:
    """A float as the table shows it, infinity as ``∞`` / ``−∞`` (not ``inf``)."""
    if value != value:
        return "–"
    if np.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits}f}"


def _is_links(value: object) -> bool:
    return isinstance(value, tuple) and bool(value) and all(isinstance(v, Link) for v in value)


def _cell_text(value: object) -> str:
    """What a reader reads in a cell of text or links (for its alignment and width)."""
    if isinstance(value, Link):
        return value.text
    if _is_links(value):
        return " · ".join(v.text for v in value)  # type: ignore[union-attr]
    return str(value)


def _link_cell(value: object) -> str:
    if isinstance(value, Link):
        return value.html()
    if _is_links(value):
        return " · ".join(v.html() for v in value)  # type: ignore[union-attr]
    if value is None or (isinstance(value, float) and value != value) or value == ():
        return "–"
    return html.escape(str(value))


class BookTable:
    """A table as the book shows it: a styled table inside a box that scrolls sideways.

    A table wider than the page's text column would run under the sidebar or push the page
    sideways; inside the box it keeps the column's width and scrolls on its own (the pandas
    Styler cannot wrap itself, hence this object). Displays as HTML (``_repr_html_``); every
    other attribute, ``to_html()`` and ``data`` included, is the wrapped Styler's.

    Parameters
    ----------
    styler:
        The ``pandas.io.formats.style.Styler`` to display.
    """

    #: the box: as wide as the text column at most, scrolling sideways when the table is wider
    WRAPPER = '<div class="table-scroll" style="max-width: 100%; overflow-x: auto;">'
    #: the box of a wide table (more than :data:`WIDE_COLUMNS` columns): its first column stays
    #: in view while the rest scrolls (``book/_static/book.css``)
    WIDE_WRAPPER = ('<div class="table-scroll table-wide" style="max-width: 100%; '
                    'overflow-x: auto;">')

    def __init__(self, styler: Any, *, wide: bool = False) -> None:
        self.styler = styler
        self.wide = wide

    def _repr_html_(self) -> str:
        box = self.WIDE_WRAPPER if self.wide else self.WRAPPER
        return f"{box}{self.styler.to_html()}</div>"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # display hooks and copy/pickle probes: never the Styler's
            raise AttributeError(name)
        return getattr(self.styler, name)


def torch_device() -> str:
    """``"cuda"`` when torch sees a GPU, else ``"cpu"``."""
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:  # pragma: no cover
        return "cpu"


def setting_text(value: object) -> str:
    """A setting as a reader wants it: ``{"compas": {"epochs": 300}}`` -> "compas: epochs 300",
    ``(0.5, 1.0)`` -> "0.5, 1", ``True`` -> "yes"; no Python reprs (braces, quotes, tuples)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return ", ".join(f"{str(k).replace('_', ' ')} ({setting_text(v)})" if isinstance(v, dict)
                         else f"{str(k).replace('_', ' ')} {setting_text(v)}"
                         for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return ", ".join(setting_text(v) for v in items) or "none"
    if value is None:
        return "none"
    return str(value).replace("_", " ") if isinstance(value, str) else str(value)


class Run:
    """One execution of one notebook.

    Parameters
    ----------
    name:
        The notebook's name (file stem); used for the default results folder and claim rows.
    scale:
        One of :data:`fusionlib.compendium.scales.SCALES`.
    seed:
        The base seed; experiments derive per-repetition seeds from it explicitly.
    results_dir:
        Where results go; ``None`` means ``./results/<name>``.
    params:
        Further notebook parameters to record in the provenance.
    """

    def __init__(
        self,
        name: str,
        *,
        scale: str,
        seed: int = 0,
        results_dir: str | os.PathLike[str] | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        import re

        from fusionlib.checks import check_seed

        # a file stem, so that results/<name> stays inside results/
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
            raise InvalidInputError(
                f"name must be the notebook's file name without .md (letters, digits, '_', '-', "
                f"'.'; not starting with '.'), got {name!r}; e.g. Run('ptgan_toys', ...)")
        self.name = name
        self.scale = validate_scale(scale)
        self.seed = check_seed("seed", seed)
        self.results_dir = Path(results_dir) if results_dir else Path("results") / name
        self.results_dir.mkdir(parents=True, exist_ok=True)
        self.params = dict(params or {})
        self.config: dict[str, Any] = {}
        self.device = torch_device()
        self._claims: list[Claim] = []
        self._files: list[str] = []
        self._figures: dict[str, str] = {}
        self._t0 = time.perf_counter()

    # ----------------------------------------------------------------- configuration
    def pick(self, **by_scale: dict[str, Any]) -> dict[str, Any]:
        """Return the configuration for the current scale; every scale must be given."""
        missing = [s for s in SCALES if s not in by_scale]
        unknown = [s for s in by_scale if s not in SCALES]
        if missing or unknown:
            raise InvalidInputError(
                f"pick() needs exactly the scales {', '.join(SCALES)}; "
                f"missing {missing}, unknown {unknown}"
            )
        self.config = dict(by_scale[self.scale])
        return dict(self.config)

    def banner(self) -> Any:
        """A Markdown note stating the scale (display it near the top of the notebook)."""
        from IPython.display import Markdown

        meaning = {
            "smoke": "every code path runs once on tiny settings; **numbers are not meaningful**",
            "cpu": "the papers' protocol where a 2-core CPU affords it, reduced runs where it "
            "does not; a claim whose quantity a reduction changes is 'not comparable'",
            "paper": "the papers' full protocol",
        }[self.scale]
        cfg = "; ".join(f"{k.replace('_', ' ')} ({setting_text(v)})" if isinstance(v, dict)
                        else f"{k.replace('_', ' ')} {setting_text(v)}"
                        for k, v in self.config.items()) or "defaults"
        return Markdown(
            f"```{{note}}\nComputed at scale **`{self.scale}`** ({meaning}), base seed "
            f"{self.seed}, device `{self.device}`. Settings: {cfg}.\n```"
        )

    def table(self, df: pd.DataFrame, title: str, *, digits: int = 3, index: bool = False,
              decisive: bool | None = None, scale: str | None = None) -> Any:
        """``df`` ready to display in the book, captioned with ``title`` and this run's scale
        (or ``scale``: the scale of the cells the table shows, when not this page's, as when a
        cpu page shows the paper scale's cells).

        ``decisive`` puts the columns that decide first, right after the label columns (the
        leading columns of text, such as data set and method, or the index when ``index``;
        :func:`decisive_first`): the verdict columns, then those of ours and the paper's
        values (a column named ``verdict``, ``ours``, ``paper``, or with one of these words in
        its name, such as ``RF ours``), in their order. The default
        (``None``) does so for a wide table, one of more than :data:`WIDE_COLUMNS` columns,
        which also gets a box whose first column stays in view while the others scroll
        sideways: the first screen of a wide table holds its label and its verdict. No value
        changes, only the order of the columns.

        Floats (also in columns of mixed type, and in the index) show ``digits`` decimals,
        missing values a dash, also when written out as text (``"nan"``; a column of whole
        numbers that a missing value turned into floats shows whole numbers: 45222, not
        45222.000); the index is hidden unless ``index``
        is true (pass it when the index carries meaning, such as a claim id). Text is
        HTML-escaped; columns holding text are left-aligned, numbers right-aligned.

        Returns
        -------
        BookTable
            Displays as the HTML table in a horizontally scrollable box (the last expression of
            a cell, or ``display(...)``); otherwise it behaves as the Styler it wraps.
        """
        wide = df.shape[1] + (1 if index else 0) > WIDE_COLUMNS
        if decisive if decisive is not None else wide:
            df = decisive_first(df, index=index)
        styler = _for_display(df).style.format(precision=digits, na_rep="–",
                                                        escape="html")
        for i in range(df.shape[1]):  # cells that link to evidence (Link, tuples of them)
            if df.iloc[:, i].map(lambda v: isinstance(v, (Link, tuple))).any():
                styler = styler.format(_link_cell, subset=[df.columns[i]])
            elif df.iloc[:, i].dtype.kind == "f" and np.isinf(df.iloc[:, i]).any():
                styler = styler.format(lambda v: _float_cell(v, digits),
                                       subset=[df.columns[i]])  # infinity as ∞, not inf
        styler = styler.format_index(precision=digits, escape="html", axis=0)
        styler = styler.format_index(precision=digits, escape="html", axis=1)
        if not index:
            styler = styler.hide(axis="index")
        if scale is not None and scale not in SCALES:
            raise InvalidInputError(f"table {title!r}: scale {scale!r} is not one of "
                                    f"{list(SCALES)}")
        caption = html.escape(f"{title} (scale: {scale or self.scale})")
        cells = "padding: 0.2em 0.6em; text-align: right; vertical-align: top;"
        styles = [
            {"selector": "", "props": "margin-left: 0;"},  # aligned with the text
            {"selector": "caption", "props": "caption-side: top; text-align: left; "
                                             "font-weight: 600; padding: 0.3em 0;"},
            {"selector": "th", "props": cells},
            {"selector": "td", "props": cells},
        ]
        if any(isinstance(v, str) for v in df.index):  # labels such as claim ids: one line
            styles.append({"selector": "th.row_heading",
                           "props": "text-align: left; white-space: nowrap;"})
            styles.append({"selector": "th.index_name", "props": "text-align: left;"})
        for i in range(df.shape[1]):  # by position: column labels need not be unique
            texts = [_cell_text(v) for v in df.iloc[:, i]
                     if isinstance(v, (str, Link)) or _is_links(v)]  # links read as text
            if texts:
                longest = max(map(len, texts))
                if not any(" " in t for t in texts) and longest <= 48:  # ids: one line
                    extra = " white-space: nowrap;"
                else:
                    extra = " min-width: 12em;" if longest > 40 else ""
                styles.append({"selector": f"td.col{i}", "props": f"text-align: left;{extra}"})
                styles.append({"selector": f"th.col_heading.col{i}", "props": "text-align: left;"})
        return BookTable(styler.set_caption(caption)
                         .set_table_attributes('class="dataframe"')  # the theme's table style
                         .set_table_styles(styles), wide=wide)

    # ----------------------------------------------------------------- outputs
    def _path(self, name: str, suffix: str) -> Path:
        if not name or "/" in name or name.startswith("."):
            raise InvalidInputError(f"result name {name!r} must be a plain file stem")
        self._files.append(name + suffix)
        return self.results_dir / (name + suffix)

    def save_table(self, df: pd.DataFrame, name: str) -> Path:
        """Write ``df`` to ``<results_dir>/<name>.csv`` atomically."""
        return atomic_write(self._path(name, ".csv"), lambda p: df.to_csv(p, index=False))

    def save_json(self, obj: Any, name: str) -> Path:
        """Write ``obj`` to ``<results_dir>/<name>.json`` atomically."""
        return atomic_write_json(self._path(name, ".json"), obj)

    def save_figure(self, fig: Any, name: str, *, dpi: int = 110, alt: str | None = None
                    ) -> Path:
        """Save a matplotlib figure as ``<results_dir>/<name>.png`` atomically.

        ``alt`` says what the figure shows (default: its titles and axis labels,
        :func:`~fusionlib.compendium.figures.describe_figure`); the book shows it as the
        figure's alternative text.
        """
        self._figures[name] = alt or describe_figure(fig)
        return atomic_write(
            self._path(name, ".png"),
            lambda p: fig.savefig(p, dpi=dpi, bbox_inches="tight", format="png"),
        )

    # ----------------------------------------------------------------- claims
    def claim(
        self,
        claim_id: str,
        seed_file: str,
        where: str,
        quantity: str,
        paper: object,
        ours: object,
        *,
        kind: str = "result",
        tolerance: float | None = None,
        verdict: str | None = None,
        reason: str = "",
        not_run: str | None = None,
        not_comparable: str | None = None,
        why: str = "",
        expect: str | None = None,
        exact: str | None = None,
        decision: Decision | None = None,
        scale: str | None = None,
    ) -> Claim:
        """Register one scorecard row (see :func:`fusionlib.compendium.claims.make_claim`).

        ``scale``: the scale of the cells ``ours`` was computed from, when not this chapter's
        (a cpu chapter that reads paper-scale cells, computed here or installed from a bundle);
        the opening box then also says where that scale's cells came from (:meth:`finish`).
        """
        if scale is not None and scale not in SCALES:
            raise InvalidInputError(f"claim {claim_id!r}: scale {scale!r} is not one of "
                                    f"{', '.join(SCALES)}")
        c = make_claim(
            claim_id, seed_file, where, quantity, paper, ours, scale=scale or self.scale,
            experiment=self.name, kind=kind, tolerance=tolerance, verdict=verdict,
            reason=reason, not_run=not_run, not_comparable=not_comparable, why=why,
            expect=expect, exact=exact, decision=decision,
        )
        self._claims = [x for x in self._claims if x.claim_id != claim_id] + [c]
        return c

    @property
    def claims(self) -> pd.DataFrame:
        """The claims registered so far, as a DataFrame."""
        return claims_frame(self._claims)

    def claims_table(self, *, per_page: int = 10) -> Any:
        """The claims registered so far as the scorecard's compact table (verdict first, short
        reasons, details and the recompute command on a click, filters, search); displays as
        HTML. Use it instead of a plain table of ``run.claims``."""
        from IPython.display import HTML

        from fusionlib.compendium.claims_table import claims_widget

        return HTML(claims_widget(self.claims, per_page=per_page,
                                  uid=f"claims-{self.name}".replace("_", "-"),
                                  caption=f"Claims of this chapter (scale: {self.scale})"))

    def finish(self) -> dict[str, Any]:
        """Write ``claims.csv`` and ``provenance.json``; return the provenance record."""
        frame = claims_frame(self._claims)
        atomic_write(self.results_dir / "claims.csv", lambda p: frame.to_csv(p, index=False))
        record = provenance_record(
            experiment=self.name, scale=self.scale, seed=self.seed, params=self.params,
            config=self.config, device_used=self.device, files=sorted(set(self._files)),
            n_claims=len(frame), wall_time_s=round(time.perf_counter() - self._t0, 2),
        )
        # where the cells this chapter read came from (this machine, another, a bundle); the
        # runner shows it in the chapter's opening box
        from fusionlib.compendium.cells import origin

        record["origin"] = origin.origin_line(self.name, self.scale, self.seed)
        others = sorted(set(frame["scale"]) - {self.scale}) if len(frame) else []
        extra = [origin.origin_line(self.name, s, self.seed) for s in others]
        if record["origin"] and any(extra):  # claims decided from another scale's cells
            record["origin"] = " ".join([record["origin"], *(x for x in extra if x)])
        if record["origin"] and self.scale != "paper" and "paper" not in others:
            ahead = origin.paper_ahead(self.name, self.seed)  # computed, not read here
            if ahead:
                record["origin"] = f"{record['origin']} {ahead}"
        atomic_write_json(self.results_dir / "provenance.json", record)
        atomic_write_json(self.results_dir / "figures.json", self._figures)
        return record


#: a table of more columns than this is wide: its decisive columns come first, in a box whose
#: first column stays in view (:meth:`Run.table`)
WIDE_COLUMNS = 8
#: the words that make a column decisive, in the order they come after the label column
DECISIVE_WORDS: tuple[str, ...] = ("verdict", "ours", "paper")
#: at most this many leading text columns label the rows (data set, method, metric)
LABEL_COLUMNS = 4


def decisive_first(df: pd.DataFrame, *, index: bool = False) -> pd.DataFrame:
    """``df`` with its decisive columns (:data:`DECISIVE_WORDS`) right after the label columns:
    the verdict columns first, then the columns of ours and of the paper's values in their
    order (``RF paper``, ``RF ours``, ``SVM paper`` ... stay pairs). The label columns are the
    leading columns of text that are not decisive (``dataset``, ``method``; at most
    :data:`LABEL_COLUMNS`), and at least the first column unless ``index`` (the index labels
    the rows); the first column stays first even when its name is decisive. Values are not
    touched; ``df`` itself is not changed."""
    import re

    def words(label: object) -> str:
        text = " ".join(map(str, label)) if isinstance(label, tuple) else str(label)
        return text.lower()

    def has(label: object, word: str) -> bool:
        return re.search(rf"(?<![a-z0-9_]){word}(?![a-z0-9_])", words(label)) is not None

    # the label columns: the leading columns of text that are not decisive (dataset, method),
    # at most LABEL_COLUMNS of them; without an index the first column labels the rows anyway
    start = 0
    while start < min(LABEL_COLUMNS, df.shape[1]) and df.iloc[:, start].dtype == object \
            and not any(has(df.columns[start], w) for w in DECISIVE_WORDS):
        start += 1
    start = max(start, 0 if index else min(1, df.shape[1]))
    rest = list(range(start, df.shape[1]))
    verdicts = [i for i in rest if has(df.columns[i], "verdict")]
    values = [i for i in rest if i not in verdicts
              and any(has(df.columns[i], w) for w in DECISIVE_WORDS[1:])]
    order = list(range(start)) + verdicts + values + [
        i for i in rest if i not in verdicts and i not in values]
    return df if order == list(range(df.shape[1])) else df.iloc[:, order]


#: texts that are a missing value written out (a number formatted to text before display)
_MISSING_TEXT = frozenset({"nan", "NaN", "<NA>", "NaT"})


def _for_display(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as a table shows it (a copy when anything changes): each float column of whole
    numbers as a nullable integer column when it has a gap or a value beyond 0 and 1 (pandas
    stores an integer column with a gap as floats, and published tables read as floats: row
    counts, kernel sizes, penalty weights would display as ``45222.000`` or ``100.000``; a
    column of 0/1 shares keeps its decimals); and a text cell
    that is a missing value written out (``"nan"``) as missing, so it shows the dash too."""
    out = df
    for i in range(df.shape[1]):  # by position: column labels need not be unique
        col = df.iloc[:, i]
        new = None
        if col.dtype.kind == "f":
            values = col.dropna()
            whole = len(values) and (values == values.round()).all() \
                and values.abs().max() < 2**53
            # a gap, or a whole number beyond 0/1 (a count, a width, a weight such as 100; a
            # column of 0.0/1.0 shares stays as it is)
            if whole and (col.isna().any() or values.abs().max() >= 2):
                new = col.astype("Int64")
        elif col.dtype == object:
            missing = col.map(lambda v: isinstance(v, str) and v in _MISSING_TEXT).astype(bool)
            new = col.where(~missing, None) if missing.any() else None
        if new is not None:
            if out is df:
                out = df.copy()
            out.isetitem(i, new)
    return out
