"""What a page of the built book must not show: parsing and the detection rules of check_html.

Every rule works on a page's HTML as the browser serialises it after its scripts ran, or on the
small dicts the browser measures (tables' and images' widths), so each one is unit-tested
without a browser (tests/test_rendered_book.py). tools/check_html.py drives the browser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

SCALES = ("smoke", "cpu", "paper")
#: a figure is drawn with 13-point labels (12-point legends) at 100 dpi (FIGURE_STYLE in
#: fusionlib/compendium/run.py): 13 * 100 / 72 = 18.1 pixels in the image file. Shown at
#: ``displayed width / natural width`` of that, a scale below 0.5 puts the labels under 9
#: pixels (and legends under 8.3), the least a reader can read without zooming
MIN_FIGURE_SCALE = 0.5
#: table cells that show a missing value as the machine writes it (tables show "–")
MISSING_CELLS = {"nan", "NaN", "<NA>", "NaT"}

# ----------------------------------------------------------------------------- parsing

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
         "source", "track", "wbr"}
_SKIP = {"script", "style", "template", "noscript", "head", "button"}  # buttons: UI, not text
_CODE = {"pre", "code", "kbd", "samp", "tt", "textarea"}
_OUTPUT_CLASSES = {"cell_output", "output"}


@dataclass
class Table:
    in_output: bool  # inside a cell output
    caption: str | None = None
    rows: list[list[str]] = field(default_factory=list)  # the text of each row's td/th cells
    body_rows: list[list[str]] = field(default_factory=list)  # rows with a td (not headers)


@dataclass
class Page:
    """What a reader sees of one page: text by kind, images, tables, MathJax leftovers."""

    prose: str = ""  # visible text outside code, math and cell outputs' code blocks
    output_text: str = ""  # all text inside cell outputs (code blocks included)
    full_text: str = ""  # all visible text (code included, math excluded)
    math_text: str = ""  # MathJax's assistive MathML text (undefined macros show up here)
    images: list[str] = field(default_factory=list)  # src attributes
    #: alternative text of each image inside a cell output (a figure)
    output_alts: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    merrors: int = 0  # MathJax error boxes
    traceback_blocks: int = 0  # output blocks of class "traceback" or "error"
    unrendered_math: int = 0  # Sphinx math elements that MathJax did not replace
    #: each output block of a cell (``div.output.<kind>``): (kind, its text)
    output_blocks: list[tuple[str, str]] = field(default_factory=list)
    #: links that download a file: href of ``a[download]``, ``a.download``, links into
    #: ``_downloads/`` and the theme's download buttons
    downloads: list[str] = field(default_factory=list)
    summary_at: int | None = None  # position of the first ``.chapter-summary`` element
    code_at: int | None = None  # position of the first cell that shows its code


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        # one entry per open element: (tag, flags inherited by descendants, its own record)
        self.stack: list[tuple[str, dict[str, bool], dict]] = []
        self.chunks: dict[str, list[str]] = {"prose": [], "output": [], "full": [], "math": []}
        self.caption: list[str] | None = None
        self.block: list[str] | None = None  # text of the output block being read
        self.cell: list[str] | None = None  # text of the table cell being read
        self.elements = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        self.elements += 1
        if tag == "img":
            self.page.images.append(a.get("src") or "")
            if (self.stack and self.stack[-1][1].get("output")) or classes & _OUTPUT_CLASSES:
                self.page.output_alts.append(a.get("alt") or "")
        if tag == "a" and a.get("href") and (
                "download" in a or "download" in classes
                or "/_downloads/" in f"/{a['href']}"
                or any(c.startswith("btn-download") for c in classes)):
            self.page.downloads.append(a["href"] or "")
        if "chapter-summary" in classes and self.page.summary_at is None:
            self.page.summary_at = self.elements
        if "cell_input" in classes and self.page.code_at is None:
            self.page.code_at = self.elements
        if tag in _VOID:
            return
        f = dict(self.stack[-1][1]) if self.stack else {}
        f["skip"] = f.get("skip", False) or tag in _SKIP
        f["code"] = f.get("code", False) or tag in _CODE
        f["output"] = f.get("output", False) or bool(classes & _OUTPUT_CLASSES)
        f["math"] = f.get("math", False) or tag == "mjx-assistive-mml"
        f["mjx"] = f.get("mjx", False) or tag.startswith("mjx-")
        own: dict = {}
        if tag == "mjx-merror":
            self.page.merrors += 1
        if "traceback" in classes or {"output", "error"} <= classes:
            self.page.traceback_blocks += 1
        if "output" in classes and self.block is None and not f["skip"]:
            own["block"] = " ".join(sorted(classes - {"output", "docutils", "container"}))
            self.block = []
        if tag == "mjx-container":
            for _, _, rec in reversed(self.stack):  # the Sphinx math element it typesets
                if "typeset" in rec:
                    rec["typeset"] = True
                    break
        if "math" in classes and tag in ("span", "div") and not f["mjx"]:
            own["typeset"] = False  # a Sphinx math element: MathJax puts a container in it
        if tag == "table":
            own["table"] = Table(in_output=f["output"])
            self.page.tables.append(own["table"])
        if tag == "tr":
            own["row"] = []
            own["body"] = False
        if tag in ("td", "th") and self.cell is None:
            own["cell"] = tag
            self.cell = []
        if tag == "caption":
            self.caption = []
        self.stack.append((tag, f, own))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def _nearest(self, key: str) -> dict | None:
        return next((r for _, _, r in reversed(self.stack) if key in r), None)

    def _close(self, tag: str, own: dict) -> None:
        if own.get("typeset") is False:
            self.page.unrendered_math += 1
        if "block" in own and self.block is not None:
            self.page.output_blocks.append((own["block"], "".join(self.block)))
            self.block = None
        if "cell" in own and self.cell is not None:
            row = self._nearest("row")
            if row is not None:
                row["row"].append(" ".join("".join(self.cell).split()))
                row["body"] = row["body"] or own["cell"] == "td"
            self.cell = None
        if "row" in own:
            table = self._nearest("table")
            if table is not None:
                table["table"].rows.append(own["row"])
                if own["body"]:
                    table["table"].body_rows.append(own["row"])
        if tag == "caption" and self.caption is not None:
            table = self._nearest("table")
            if table is not None:
                table["table"].caption = " ".join("".join(self.caption).split())
            self.caption = None

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or not any(t == tag for t, _, _ in self.stack):
            return  # a stray end tag: ignore it, as browsers do
        while self.stack:
            t, _, own = self.stack.pop()
            self._close(t, own)
            if t == tag:
                break

    def handle_data(self, data: str) -> None:
        f = self.stack[-1][1] if self.stack else {}
        if f.get("skip"):
            return
        if self.caption is not None:
            self.caption.append(data)
        if self.cell is not None:
            self.cell.append(data)
        if f.get("math"):
            self.chunks["math"].append(data)
            return
        if f.get("mjx"):
            return
        if self.block is not None:
            self.block.append(data)
        self.chunks["full"].append(data)
        if f.get("output"):
            self.chunks["output"].append(data)
        if not f.get("code"):
            self.chunks["prose"].append(data)

    def close(self) -> None:
        super().close()
        while self.stack:  # unclosed elements at the end of the document
            self.handle_endtag(self.stack[-1][0])
        p = self.page
        p.prose, p.output_text = "".join(self.chunks["prose"]), "".join(self.chunks["output"])
        p.full_text, p.math_text = "".join(self.chunks["full"]), "".join(self.chunks["math"])


def parse_page(html: str) -> Page:
    """Parse one page's HTML (as the browser serialises it after scripts ran)."""
    parser = _Parser()
    parser.feed(html)
    parser.close()
    return parser.page


def _excerpt(text: str, start: int, end: int, width: int = 30) -> str:
    snippet = text[max(0, start - width): end + width]
    return " ".join(snippet.split())


# ----------------------------------------------------------------------------- rules on the HTML

_REFRESH = re.compile(r"""<meta[^>]+http-equiv=["']?refresh["']?[^>]*url=([^"'>\s]+)""", re.I)
_RAW_TEX = re.compile(r"\\[()\[\]]|\$\$|\\(?:begin|end)\{|\\[A-Za-z]{2,}")
_OUTPUT_ERROR = re.compile(
    r"Traceback \(most recent call last\)|\b\w*(?:Error|Exception|Warning): ")
_STRAY = re.compile(r"Claim\(claim_id=|(?:Posix|Windows)Path\(|<[\w.]+ (?:object )?at 0x[0-9a-f]+>"
                    r"|<Figure size \d+x\d+ with \d+ Axes>")
_SCALE_LABEL = re.compile(r"Computed at scale\s+(\w+)")
#: a torch module printed: ``Sequential(\n  (0): Linear(in_features=2, ...)``
_TORCH_MODULE = re.compile(r"\b(?:Sequential|ModuleList|ModuleDict)\(\s*\(\w+\):"
                           r"|\bLinear\(in_features=\d+|\bConv[123]d\(\d+, \d+, kernel_size="
                           r"|\bBatchNorm[123]d\(\d+, eps=")
#: the repr of an object with keyword fields (a dataclass or named tuple): ``Result(a=1, b=2)``
_FIELDS_REPR = re.compile(r"^[A-Za-z_][\w.]*\(\w+=.*\)$", re.S)
_BRACKETS = {"{": "}", "[": "]", "(": ")"}
#: reprs inside an output line: a dict with text keys, a tuple or list of texts, a list of
#: three numbers or more, a value that is a bare True / False / None
_INLINE_REPRS = (
    ("a dict repr", re.compile(r"\{'[^'\n]{1,60}': ")),
    ("a tuple or list repr", re.compile(r"[(\[]'[^'\n]{0,60}', '")),
    ("a list repr", re.compile(r"\[-?\d+(?:\.\d+)?(?:, -?\d+(?:\.\d+)?){2,}")),
    ("a bare boolean", re.compile(r"[:=]\s*(?:True|False|None)\s*(?:$|[;,.)])", re.M)),
)
#: an output that asks the reader to do something the build should have done
_TODO = re.compile(r"\bTODO\b|\bFIXME\b|\brun `?make \w+")
#: a number that is whole but printed with decimals, such as 32.000 or 1,024.0
_WHOLE_FLOAT = re.compile(r"^-?\d{1,3}(?:,?\d{3})*\.0+$")


def redirect_target(html: str) -> str | None:
    """The URL a redirect page (``<meta http-equiv="refresh" ... url=...>``) sends readers to."""
    m = _REFRESH.search(html)
    return m.group(1) if m else None


def raw_tex_problems(page: Page) -> list[str]:
    """TeX a reader sees as source: in the prose, as MathJax errors, or as undefined macros."""
    problems = []
    hits = list(_RAW_TEX.finditer(page.prose))
    if hits:
        shown = "; ".join(repr(_excerpt(page.prose, m.start(), m.end())) for m in hits[:3])
        problems.append(f"raw TeX in the text ({len(hits)}x), e.g. {shown}")
    if page.unrendered_math:
        problems.append(f"{page.unrendered_math} math element(s) not typeset by MathJax")
    if page.merrors:
        problems.append(f"{page.merrors} MathJax error box(es) (TeX that does not parse)")
    undefined = sorted(set(re.findall(r"\\[A-Za-z]+", page.math_text)))
    if undefined:
        problems.append(f"undefined TeX macro(s) shown as text: {', '.join(undefined[:5])}")
    return problems


def output_error_problems(page: Page) -> list[str]:
    """Tracebacks and error messages in cell outputs."""
    problems = []
    if page.traceback_blocks:
        problems.append(f"{page.traceback_blocks} error/traceback output block(s)")
    hits = list(_OUTPUT_ERROR.finditer(page.output_text))
    if hits:
        shown = "; ".join(repr(_excerpt(page.output_text, m.start(), m.end(), 40))
                          for m in hits[:3])
        problems.append(f"error text in a cell output ({len(hits)}x), e.g. {shown}")
    return problems


def stray_output_problems(page: Page) -> list[str]:
    """Objects printed by accident (a cell ending in ``run.claim(...)`` or ``run.save_table(...)``
    without ``;``) and figures that were not drawn."""
    hits = list(_STRAY.finditer(page.output_text))
    if not hits:
        return []
    shown = "; ".join(repr(_excerpt(page.output_text, m.start(), m.end(), 20)) for m in hits[:3])
    return [f"stray object in a cell output ({len(hits)}x; end the cell with ';'), e.g. {shown}"]


def machine_path_problems(html: str, page: Page, machine_paths: tuple[str, ...] = ()) -> list[str]:
    """The absolute path of the machine that built the book, anywhere on the page (text, code,
    API signatures, attributes): a reader's copy has another path, and it tells nothing."""
    problems = []
    for path in machine_paths:
        if not path or path not in html:
            continue
        text = page.full_text if path in page.full_text else html
        at = text.index(path)
        problems.append(f"this machine's path {path} appears on the page ({html.count(path)}x), "
                        f"e.g. {_excerpt(text, at, at + len(path), 25)!r}")
    return problems


def _bare_repr(text: str) -> bool:
    """``{...}``, ``[...]`` or ``(...)`` whose brackets balance over the whole text."""
    if len(text) < 2 or _BRACKETS.get(text[0]) != text[-1]:
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += ch in "{[("
        depth -= ch in "}])"
        if depth == 0 and i < len(text) - 1:
            return False  # "(a) and (b)": the first bracket closes before the end
    return depth == 0


def raw_repr_problems(page: Page) -> list[str]:
    """Machine output a reader should not see: a cell whose whole output is a dict, list or
    tuple repr, a dataclass repr, a lone ``True`` / ``False`` / ``None``; such a repr inside an
    output line (``{'Table 1': 112}``, ``('x1', 'x2')``, ``[2, 2, 4]``, ``...: True``); a
    printed torch module; a to-do (``TODO``, "run `make ...`"). Say such values in words or a
    table (or end the cell with ``;``)."""
    found: list[str] = []
    for kind, text in page.output_blocks:
        if "text_html" in kind or "traceback" in kind:
            continue  # tables are checked cell by cell; tracebacks have their own rule
        body = text.strip()
        if body in ("True", "False", "None"):
            found.append(f"a lone {body}")
        elif _bare_repr(body):
            kind_name = {"{": "dict", "[": "list", "(": "tuple"}[body[0]]
            found.append(f"a bare {kind_name} repr {body[:40]!r}")
        elif "text_plain" in kind and _FIELDS_REPR.match(body) and "\n" not in body[:80]:
            found.append(f"an object repr {body[:40]!r}")
        elif not _TORCH_MODULE.search(body):  # a printed module is reported once, below
            for name, pattern in _INLINE_REPRS:
                if m := pattern.search(body):
                    found.append(f"{name} in {_excerpt(body, m.start(), m.end(), 25)!r}")
                    break
        if m := _TODO.search(body):
            found.append(f"a to-do {_excerpt(body, m.start(), m.end(), 25)!r}")
    hits = list(_TORCH_MODULE.finditer(page.output_text))
    if hits:
        found.append(f"a printed torch module ({len(hits)}x) "
                     f"{_excerpt(page.output_text, hits[0].start(), hits[0].end(), 0)!r}")
    if not found:
        return []
    return [f"raw repr in a cell output ({len(found)}x): {'; '.join(found[:3])}"]


def table_cell_problems(page: Page) -> list[str]:
    """Output tables that show a missing value as ``nan`` (tables show "–": ``run.table``),
    and columns of whole numbers printed with decimals (``32.000``: an integer column that
    became floats)."""
    problems = []
    tables = [t for t in page.tables if t.in_output]
    nan_cells = [(i, c) for i, t in enumerate(tables) for r in t.rows for c in r
                 if c in MISSING_CELLS]
    if nan_cells:
        n_tables = len({i for i, _ in nan_cells})
        problems.append(f"{len(nan_cells)} table cell(s) in {n_tables} output table(s) show "
                        f"{'/'.join(sorted({c for _, c in nan_cells}))} for a missing value "
                        "(display the table with run.table, which shows '–')")
    floats = []
    for t in tables:
        width = max((len(r) for r in t.body_rows), default=0)
        for j in range(width):
            column = [r[j] for r in t.body_rows if j < len(r) and r[j] not in MISSING_CELLS
                      and r[j] not in ("", "–")]
            if len(column) >= 2 and all(_WHOLE_FLOAT.match(c) for c in column) and \
                    max(abs(float(c.replace(",", ""))) for c in column) >= 2:
                floats.append(f"{(t.caption or 'untitled')[:40]!r} column {j + 1}: "
                              f"{', '.join(column[:3])}")
    if floats:
        problems.append(f"{len(floats)} table column(s) of whole numbers printed with decimals"
                        f" (an integer column turned float), e.g. {'; '.join(floats[:2])}")
    return problems


def scale_labels(page: Page) -> set[str]:
    """The scales named by Run banners on the page ("Computed at scale <scale>")."""
    return set(_SCALE_LABEL.findall(page.full_text))


def scale_problems(page: Page, expected: str | None = None) -> list[str]:
    """A chapter must carry the Run banner's scale label (and, if given, the expected scale)."""
    found = scale_labels(page)
    if not found:
        return ["no scale label (display run.banner() near the top of the notebook)"]
    unknown = found - set(SCALES)
    if unknown:
        return [f"scale label names an unknown scale: {', '.join(sorted(unknown))}"]
    if expected is not None and found != {expected}:
        return [f"labelled scale {', '.join(sorted(found))}, but the book was built at {expected}"]
    return []


def table_scales(expected: str | None) -> set[str] | None:
    """The scales a table of a book built at ``expected`` may name: that scale, and at ``cpu``
    also ``paper`` (a cpu chapter reads a complete committed paper grid and labels what it
    shows from it with scale ``paper``); None (any scale) when the build's scale is unknown."""
    if expected is None:
        return None
    return {expected, "paper"} if expected == "cpu" else {expected}


def table_caption_problems(page: Page, scales: set[str] | None = None) -> list[str]:
    """Every table in a chapter's cell outputs states its scale in its caption."""
    names = scales or set(SCALES)
    bad = [t for t in page.tables if t.in_output
           and not (t.caption and re.search(rf"\bscale\b.*\b({'|'.join(names)})\b", t.caption))]
    if not bad:
        return []
    return [f"{len(bad)} output table(s) without the scale in a caption "
            "(display them with run.table(df, title))"]


def summary_problems(page: Page) -> list[str]:
    """A chapter opens with its summary box (an element of class ``chapter-summary``) before
    the first cell that shows code (a cell whose input is removed shows none)."""
    if page.summary_at is None:
        return ["no chapter opening box (an element of class 'chapter-summary')"]
    if page.code_at is not None and page.code_at < page.summary_at:
        return ["the chapter opening box ('chapter-summary') comes after the first code cell"]
    return []


def _local_target(src: str, page_file: Path, root: Path) -> Path | None:
    """The file under ``root`` a relative link points at; None for other hosts and data: URIs."""
    parts = urlsplit(src)
    if parts.scheme or parts.netloc:
        return None
    return (page_file.parent / unquote(parts.path)).resolve()


def image_problems(page: Page, page_file: Path, root: Path,
                   rendered: list[dict] | None = None) -> list[str]:
    """Images whose file is missing under ``root``, or that the browser decoded to width 0
    (``rendered``: the browser's ``{"src", "width"}`` of each image, when there is one)."""
    problems, missing = [], set()
    for src in page.images:
        target = _local_target(src, page_file, root)
        if src and target is None:
            continue  # data: URIs are checked by width; other hosts are reported as requests
        if not src or not target.is_file() or not target.is_relative_to(root.resolve()):
            missing.add(src)
            problems.append(f"missing image {src!r}")
    for img in rendered or []:
        if not img.get("width") and img.get("src") not in missing:
            problems.append(f"image not displayed (naturalWidth 0): {img.get('src')!r}")
    return problems


_FILE_LIKE = re.compile(r"(?:\.(?:png|jpe?g|svg|gif)$)|_images/|^\.\./|^[0-9a-f]{32,}")


def alt_text_problems(page: Page) -> list[str]:
    """Figures in cell outputs whose alternative text is empty or a file name, not a
    description of what they show (``Run.save_figure`` records one from the figure's titles
    and labels, or take it from its ``alt=``)."""
    bad = [a for a in page.output_alts if not a.strip() or _FILE_LIKE.search(a.strip())]
    if not bad:
        return []
    return [f"{len(bad)} figure(s) without a description as alternative text (e.g. "
            f"{bad[0]!r}); save them with run.save_figure(fig, name, alt=...) in the cell that "
            "shows them"]


def download_problems(page: Page, page_file: Path, root: Path) -> list[str]:
    """Download links (``a[download]``, ``a.download``, links into ``_downloads/``, the page's
    download buttons) whose file is not in the build."""
    problems = []
    for href in page.downloads:
        target = _local_target(href, page_file, root)
        if href and target is None:
            continue  # another host: reported when requested
        if not href or not target.is_file() or not target.is_relative_to(root.resolve()):
            problems.append(f"download link to a missing file {href!r}")
    return problems


# ----------------------------------------------------------------------------- measured rules


def wide_table_problems(tables: list[dict]) -> list[str]:
    """Tables wider than the text column that do not scroll inside it. ``tables``: the
    browser's measures of each table, ``{"width", "column", "scroll", "caption"}``: its width,
    the text column's, and the width of its nearest ancestor that scrolls sideways (computed
    ``overflow-x`` auto or scroll), None when there is none."""
    wide = []
    for t in tables:
        width, column, scroll = t.get("width") or 0, t.get("column") or 0, t.get("scroll")
        if not column or width <= column + 1:
            continue
        if scroll is not None and scroll <= column + 1:
            continue  # it scrolls inside a box that fits the column
        wide.append(t)
    if not wide:
        return []
    shown = "; ".join(f"{(t.get('caption') or 'untitled')[:50]!r} {t['width']:.0f} px"
                      for t in sorted(wide, key=lambda t: -t["width"])[:3])
    return [f"{len(wide)} table(s) wider than the text column ({wide[0]['column']:.0f} px) "
            f"outside a scroll box, e.g. {shown}"]


def phone_width_problems(measure: dict, screen: int) -> list[str]:
    """A page laid out wider than a phone's screen (a phone then zooms the whole page out).
    ``measure``: the browser's ``{"width", "sticking_out"}`` on a page loaded fresh on an
    emulated phone ``screen`` pixels wide: the width the page was laid out at, and the text of a
    few elements reaching past the screen outside any box that scrolls sideways."""
    width = measure.get("width") or 0
    if width <= screen + 1:
        return []
    out = [str(t).strip()[:40] for t in measure.get("sticking_out") or [] if str(t).strip()]
    where = f"; it sticks out at {', '.join(repr(t) for t in out[:3])}" if out else ""
    return [f"laid out {width:.0f} px wide on a {screen} px phone screen (the phone zooms the "
            f"page out){where}: let it wrap (book/_static/book.css) or put it in a box that "
            "scrolls sideways"]


def small_figure_problems(images: list[dict], min_scale: float = MIN_FIGURE_SCALE) -> list[str]:
    """Figures in cell outputs shown so much smaller than drawn that their text is too small.
    ``images``: the browser's ``{"src", "width", "shown", "output"}`` of each image (natural
    and displayed width in pixels, whether it is in a cell output)."""
    small = [i for i in images if i.get("output") and i.get("width") and i.get("shown")
             and i["shown"] / i["width"] < min_scale]
    if not small:
        return []
    px = 13 * 100 / 72
    shown = "; ".join(f"{i['width']} px shown at {i['shown']:.0f} px (13-pt labels at "
                      f"{px * i['shown'] / i['width']:.1f} px)" for i in small[:3])
    return [f"{len(small)} figure(s) scaled below {min_scale:g} of their size, text too small "
            f"to read (draw them narrower, e.g. legible(fig, width=...)): {shown}"]


# ----------------------------------------------------------------------------- the report's rules

#: the heading of the section every chapter ends with (tools/check_html.py: chapters but the
#: scorecard); its anchor is what the introduction and the scorecard link to
FOUND_HEADING = "What we found"
#: a verdict column must begin within this many pixels of its table's scroll box: the first
#: screen of a laptop, wherever the box's own edge is
VERDICT_WITHIN_PX = 1280
_HEADING = re.compile(r"h[1-6]")


class _SectionScan(HTMLParser):
    """The headings of a page and what comes first after the 'What we found' heading."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.heading: list[str] | None = None
        self.headings: list[str] = []
        self.found = False  # the heading was seen; waiting for the first block after it
        self.first: str | None = None  # "prose", "code cell", "output", "table", "figure", ...
        self.skip = 0  # inside the heading's permalink

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        if _HEADING.fullmatch(tag):
            self.heading = []
            return
        if self.heading is not None and "headerlink" in classes:
            self.skip += 1
            return
        if self.found and self.first is None:
            if tag == "p" or (tag in ("ul", "ol", "dl") and not classes & {"cell"}):
                self.first = "prose"
            elif "cell" in classes:
                hidden = {"tag_remove-input", "tag_hide-input"} & classes
                self.first = "output" if hidden else "code cell"
            elif tag in ("table", "img", "figure"):
                self.first = "table" if tag == "table" else "figure"
            elif tag == "section" or tag in ("pre",):
                self.first = tag

    def handle_endtag(self, tag: str) -> None:
        if self.skip and tag == "a":
            self.skip -= 1
            return
        if _HEADING.fullmatch(tag) and self.heading is not None:
            text = " ".join("".join(self.heading).split())
            self.headings.append(text)
            if text == FOUND_HEADING and not self.found:
                self.found = True
            self.heading = None

    def handle_data(self, data: str) -> None:
        if self.heading is not None and not self.skip:
            self.heading.append(data)


def found_problems(html: str) -> list[str]:
    """A chapter ends with a section "What we found" that opens with prose (a sentence, even a
    generated one, not a code cell, a table or a figure: a reader who jumps there from the
    introduction reads the answer first)."""
    scan = _SectionScan()
    scan.feed(html)
    scan.close()
    if FOUND_HEADING not in scan.headings:
        return [f"no '{FOUND_HEADING}' section (the introduction and the scorecard link each "
                "conclusion to it; end the chapter with '## What we found' and a sentence)"]
    if scan.first not in (None, "prose", "output"):
        return [f"its '{FOUND_HEADING}' section opens with a {scan.first}, not with prose"]
    return []


def verdict_position_problems(tables: list[dict], limit: int = VERDICT_WITHIN_PX) -> list[str]:
    """Tables whose verdict column begins beyond the first ``limit`` pixels of their scroll box
    (the reader would have to scroll to see what the table decides). ``tables``: the browser's
    measures, ``{"verdict_left", "caption"}`` per table: where the first header cell named
    "verdict" begins, in pixels from the table's left edge (None without one)."""
    far = [t for t in tables if t.get("verdict_left") is not None
           and t["verdict_left"] > limit]
    if not far:
        return []
    shown = "; ".join(f"{(t.get('caption') or 'untitled')[:50]!r} at {t['verdict_left']:.0f} px"
                      for t in far[:3])
    return [f"{len(far)} table(s) with the verdict column beyond the first {limit} px of the "
            f"scroll box, e.g. {shown}: put it first (run.table's decisive=True)"]


# ----------------------------------------------------------------------------- the glossary

#: the papers' names: every page's title uses them, the introduction's table says what they are
GLOSSARY_EXEMPT = ("FusionGAN", "PTGAN")
_ABBREVIATION = re.compile(r"^(?=.*[A-Z].*[A-Z0-9])[A-Z0-9][A-Z0-9+\-]*$")


def glossary_abbreviations(markdown: str) -> list[str]:
    """The abbreviations the glossary (``book/glossary.md``, a MyST definition list) spells
    out: its terms in capitals (``MMD``, ``PT+CP``, ``1-TVD``, ``W1``; a line of terms
    ``GP, SN`` gives each), the papers' names excepted."""
    lines = markdown.splitlines()
    out: list[str] = []
    for term, nxt in zip(lines, lines[1:], strict=False):
        if not nxt.startswith(": ") or not term.strip() or term.startswith((" ", "#", ":")):
            continue
        for word in (w.strip() for w in term.split(",")):
            if _ABBREVIATION.match(word) and word not in GLOSSARY_EXEMPT and word not in out:
                out.append(word)
    return out


class _ArticleText(HTMLParser):
    """The visible prose of a page's article (its main text, not the sidebars), outside code
    and math, and where in it the first link to the glossary begins."""

    _SKIP = {"script", "style", "code", "pre", "kbd", "samp", "button", "template", "noscript"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # inside the article
        self.stack: list[str] = []
        self.skip = 0
        self.text: list[str] = []
        self.length = 0
        self.link_at: int | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        if tag in _VOID:
            return
        article = tag == "article" or "bd-article" in classes
        if self.depth or article:
            self.depth += 1
            self.stack.append(tag)
            if tag in self._SKIP or tag.startswith("mjx-") or "math" in classes:
                self.skip += 1
                self.stack[-1] = "!" + tag
            href = a.get("href") or ""
            if tag == "a" and self.link_at is None and \
                    urlsplit(href).path.rsplit("/", 1)[-1] == "glossary.html":
                self.link_at = self.length

    def handle_endtag(self, tag: str) -> None:
        if not self.depth or tag in _VOID or not any(t.lstrip("!") == tag for t in self.stack):
            return
        while self.stack:
            t = self.stack.pop()
            self.depth -= 1
            if t.startswith("!"):
                self.skip -= 1
            if t.lstrip("!") == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.depth and not self.skip:
            self.text.append(data)
            self.length += len(data)


def glossary_problems(html: str, abbreviations: list[str] | tuple[str, ...]) -> list[str]:
    """Abbreviations of the glossary used in a page's article before any link to the glossary
    (a reader meets "EOD" with no way to look it up). A warning, not a failure
    (tools/check_html.py)."""
    scan = _ArticleText()
    scan.feed(html)
    scan.close()
    text = "".join(scan.text)
    end = len(text) if scan.link_at is None else scan.link_at
    early = []
    for word in abbreviations:
        m = re.search(rf"(?<![\w+\-]){re.escape(word)}(?![\w+]|-\w)", text[:end])
        if m:
            early.append((m.start(), word))
    if not early:
        return []
    words = ", ".join(w for _, w in sorted(early)[:6])
    where = "with no link to the glossary" if scan.link_at is None else \
        "before the first link to the glossary"
    return [f"abbreviation(s) {words} used {where} (link book/glossary.md first)"]


# ----------------------------------------------------------------------------- phones

#: pages that must fit in so many phone screens (390 x 844): the introduction is the answer a
#: reviewer reads first
PHONE_SCREEN_LIMITS: dict[str, float] = {"book/intro.html": 6.0}
#: the largest share of a phone's first screen a page title may take
TITLE_SHARE = 0.25
#: a conclusion's statement on a phone must have at least this share of the text column
#: (in a two-column table it had a third: one word per line)
STATEMENT_SHARE = 0.6


def phone_screens_problems(rel: str, screens: float | None,
                           limits: dict[str, float] | None = None) -> list[str]:
    """A page longer on a phone than its limit (:data:`PHONE_SCREEN_LIMITS`); ``screens``: the
    page's height in phone screens."""
    limit = (PHONE_SCREEN_LIMITS if limits is None else limits).get(rel)
    if limit is None or screens is None or screens <= limit:
        return []
    return [f"{screens:.1f} phone screens long (at most {limit:g}): shorten it or fold what a "
            "first reading does not need"]


def phone_layout_problems(measure: dict, screen_height: int, *,
                          title_share: float = TITLE_SHARE,
                          statement_share: float = STATEMENT_SHARE) -> list[str]:
    """What a phone shows badly, from the browser's measures of a page loaded on a phone:
    ``{"title_height", "answer_bottom", "column", "rows"}``: the page title's height, where the
    introduction's answer (its lines per paper, ``ul.rp-papers``) ends (None on other pages), the
    text column's width, and per conclusion row (``tr.rp-row``) ``{"id", "statement", "ran"}``:
    the width of its statement and whether its "key claims run" is on the screen.

    Fails a title taller than ``title_share`` of the screen, an answer that ends below the first
    screen, a conclusion whose statement is narrower than ``statement_share`` of the column
    (one word per line) or whose claims run are off the screen."""
    problems = []
    title = measure.get("title_height") or 0
    if title > title_share * screen_height:
        problems.append(f"the page title takes {title / screen_height:.0%} of a phone's first "
                        f"screen (at most {title_share:.0%}): shorten it or shrink the heading")
    answer = measure.get("answer_bottom")
    if answer is not None and answer > screen_height:
        problems.append(f"the answer (the verdict line of each paper) ends {answer:.0f} px down, "
                        f"below a phone's first screen ({screen_height} px)")
    column = measure.get("column") or 0
    rows = measure.get("rows") or []
    narrow = [r for r in rows if column and (r.get("statement") or 0) < statement_share * column]
    if narrow:
        shown = ", ".join(f"{r.get('id')} ({r.get('statement') or 0:.0f} px)" for r in narrow[:3])
        problems.append(f"{len(narrow)} conclusion row(s) with the statement squeezed below "
                        f"{statement_share:.0%} of the {column:.0f}-px column on a phone, e.g. "
                        f"{shown}: stack them as cards (book/_static/book.css)")
    hidden = [r for r in rows if not r.get("ran")]
    if hidden:
        problems.append(f"{len(hidden)} conclusion row(s) whose 'key claims run' is off a "
                        f"phone's screen, e.g. {hidden[0].get('id')}")
    return problems
