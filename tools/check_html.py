"""Open every page of the built book in headless Chromium and fail on what a reader would see.

``python tools/check_html.py [_build/html] [--scale smoke] [--no-summary-check]``

The pages are served from ``127.0.0.1`` by a throw-away HTTP server inside this process and opened
one after another in one headless Chromium, driven over the DevTools protocol on a pipe (no extra
Python package). Every host other than 127.0.0.1 is unresolvable for the browser, so the check
sees the book as an offline reader does. After each page has loaded (at 1280 x 800 pixels) and
MathJax has finished typesetting, the rendered DOM is checked (rules in tools/page_rules.py) for:

* a missing image (its file does not exist, or the browser decoded it to zero width), and a
  download link (``a[download]``, ``a.download``, a link into ``_downloads/``, the page's
  download buttons) whose file is not in the build;
* an error in a cell output (a traceback, ``...Error:`` / ``...Exception:`` / ``...Warning:``
  text, MathJax error boxes, ``.traceback`` output blocks);
* raw TeX left in the text after MathJax ran (``\\(``, ``\\[``, ``$$``, ``\\begin{``, a
  ``\\command``), outside code; also MathJax that did not load on a page that needs it;
* a stray object in a cell output: a ``Claim(...)`` or ``PosixPath(...)`` repr, ``<... object at
  0x...>``, a figure printed as ``<Figure size ...>`` instead of drawn;
* raw machine output in a cell output: a whole output that is a dict, list, tuple or dataclass
  repr, a lone ``True`` / ``False`` / ``None``, a printed torch module; in an output table, a
  cell showing ``nan`` (tables show "–") or a column of whole numbers printed with decimals;
* the absolute path of the build machine's checkout anywhere on a page (API pages included);
* a table wider than the text column that does not sit in a box scrolling sideways (measured);
* a page laid out wider than a phone's screen (390 px, loaded afresh on an emulated phone): a
  long inline name, signature or table the phone can only show by zooming the page out;
* on the phone, too: a page title taller than a quarter of the first screen; the introduction
  longer than 6 phone screens (page_rules.PHONE_SCREEN_LIMITS), its answer (the verdict line
  of each paper) below the first screen, a conclusion row whose statement is squeezed below
  60 % of the column (one word per line) or whose "key claims run" is off the screen;
* a figure in a cell output shown below ``--min-figure-scale`` (0.5) of its drawn width, where
  its 13-point labels fall under 9 pixels (measured; see page_rules.MIN_FIGURE_SCALE);
* a chapter page (``book/executed/*.html``) without the Run banner's scale label ("Computed at
  scale ..."), or, with ``--scale``, labelled with another scale; a table in a chapter's cell
  output without its scale in the caption (``run.table(df, title)`` adds both); a chapter
  (the scorecard excepted) without its opening box, an element of class ``chapter-summary``
  before the first cell that shows code (``--no-summary-check`` turns this rule off);
* a request to another host, a local file the server does not have, or a JavaScript error.

A redirect page (the book's ``index.html``) is not rendered; its target must exist.

Every page is also photographed, its first screen at 1280 x 800 and at 390 x 844 (a phone,
emulated; the page is loaded again at that size, as a phone would load it: a page resized after
loading is caught mid-animation with its side drawers half open), into
``_build/screenshots/<page path, / as __>-1280.png`` / ``-390.png``, and its height in screens
(document height / viewport height) at both widths goes to ``_build/screenshots/screens.csv``
and a summary on stderr (``--no-screenshots``: neither; the phone-width rule still runs).

Each problem is one line ``<page>: <problem>`` on stdout; the exit status is 1 when there is any,
2 when the browser cannot be started. The detection functions work on HTML strings and on the
browser's measures as small dicts, so they are unit-tested without a browser
(tests/test_rendered_book.py).
"""

from __future__ import annotations

import argparse
import base64
import csv
import fnmatch
import functools
import http.server
import io
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from page_rules import (  # noqa: E402  (the rules live beside this file)
    MIN_FIGURE_SCALE,
    SCALES,
    Page,
    alt_text_problems,
    download_problems,
    found_problems,
    glossary_abbreviations,
    glossary_problems,
    image_problems,
    machine_path_problems,
    output_error_problems,
    parse_page,
    phone_layout_problems,
    phone_screens_problems,
    phone_width_problems,
    raw_repr_problems,
    raw_tex_problems,
    redirect_target,
    scale_labels,
    scale_problems,
    small_figure_problems,
    stray_output_problems,
    summary_problems,
    table_caption_problems,
    table_cell_problems,
    table_scales,
    verdict_position_problems,
    wide_table_problems,
)

__all__ = [
    "MIN_FIGURE_SCALE", "SCALES", "Page", "check_page", "check_book", "parse_page",
    "redirect_target", "request_problems", "pages_of", "scale_labels", "screens_table",
    "screenshot_name", "wide_table_problems", "small_figure_problems", "phone_width_problems",
    "main",
]

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = "book/executed/*.html"
#: chapters that open without a summary box: the scorecard is itself the summary
NO_SUMMARY = ("book/executed/scorecard.html",)
#: the book's glossary: the abbreviations a page must link to it before using (a warning)
GLOSSARY = REPO / "book" / "glossary.md"
#: pages the glossary rule skips: the glossary itself and Sphinx's generated indexes
NO_GLOSSARY_CHECK = ("book/glossary.html", "genindex.html", "py-modindex.html", "search.html")
SKIP_DIRS = ("_static", "_sources", "_images", "_downloads")
#: JavaScript errors of the toolchain itself that change nothing a reader sees: sphinx-thebe
#: 0.3.1 (pulled in by Jupyter Book 1) adds its inline config script twice to every page, and the
#: second copy's `const` declarations throw; the first copy already defined them
KNOWN_JS_ERRORS = ("Identifier 'THEBE_JS_URL' has already been declared",)
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: the flags that work on these machines, plus a resolver that knows only 127.0.0.1 (offline)
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--no-default-browser-check", "--mute-audio",
    "--window-size=1280,800", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--hide-scrollbars", "--remote-debugging-pipe",
)
#: the two screens every page is measured and photographed at: (name, width, height, mobile)
SCREENS = (("1280", 1280, 800, False), ("390", 390, 844, True))


def machine_paths() -> tuple[str, ...]:
    """Paths that name this machine's checkout (and its virtual environment, when that lives
    elsewhere, as a symlinked .venv does)."""
    paths = [str(REPO), str(REPO.resolve())]
    if sys.prefix != sys.base_prefix:  # a virtual environment, not the system's /usr
        paths.append(str(Path(sys.prefix).resolve()))
    return tuple(dict.fromkeys(p for p in paths if p not in ("", "/")))


def check_page(html: str, rel: str, root: Path | None = None, *, chapter: bool = False,
               summary: bool = False, found: bool = False, expected_scale: str | None = None,
               rendered_images: list[dict] | None = None, tables: list[dict] | None = None,
               machine_paths: tuple[str, ...] = (),
               min_figure_scale: float = MIN_FIGURE_SCALE) -> list[str]:
    """Every problem of one page (``rel``: its path under ``root``), one line each.
    ``summary``: the page must open with a chapter summary box; ``found``: it must end with a
    "What we found" section that opens with prose; ``rendered_images`` and ``tables``: what
    the browser measured (see page_rules.small_figure_problems, page_rules.wide_table_problems
    and page_rules.verdict_position_problems)."""
    page = parse_page(html)
    problems = raw_tex_problems(page) + output_error_problems(page)
    problems += stray_output_problems(page) + raw_repr_problems(page)
    problems += table_cell_problems(page) + machine_path_problems(html, page, machine_paths)
    if chapter:
        problems += scale_problems(page, expected_scale)
        problems += table_caption_problems(page, table_scales(expected_scale))
    if summary:
        problems += summary_problems(page)
    if found:
        problems += found_problems(html)
    if root is not None:
        problems += image_problems(page, root / rel, root, rendered_images)
        problems += alt_text_problems(page)
        problems += download_problems(page, root / rel, root)
    problems += wide_table_problems(tables or [])
    problems += verdict_position_problems(tables or [])
    problems += small_figure_problems(rendered_images or [], min_figure_scale)
    return [f"{rel}: {p}" for p in problems]


# ----------------------------------------------------------------------------- browser

_PAGE_STATE = """(async () => {
  const mj = window.MathJax;
  let mathjax = "absent";
  if (mj && mj.startup && mj.startup.promise) {
    const timeout = new Promise(r => setTimeout(() => r("timed out"), %d));
    mathjax = await Promise.race([mj.startup.promise.then(() => "done", e => "failed: " + e),
                                  timeout]);
  } else if (mj) {
    mathjax = "not loaded";
  }
  const images = Array.from(document.images).map(i => ({
    src: i.getAttribute("src") || "", width: i.naturalWidth, complete: i.complete,
    shown: i.getBoundingClientRect().width, output: !!i.closest(".cell_output")}));
  // the text column: the article's content box
  const article = document.querySelector("article.bd-article") || document.querySelector("main")
    || document.body;
  const cs = getComputedStyle(article);
  const column = article.getBoundingClientRect().width - parseFloat(cs.paddingLeft || 0)
    - parseFloat(cs.paddingRight || 0);
  const tables = [];
  for (const t of document.querySelectorAll("table")) {
    const width = t.getBoundingClientRect().width;
    if (!width || (t.parentElement && t.parentElement.closest("table"))) continue;
    let scroll = null;  // the narrowest ancestor up to the article that scrolls sideways
    for (let el = t.parentElement; el; el = el.parentElement) {
      const ox = getComputedStyle(el).overflowX;
      if (ox === "auto" || ox === "scroll") {
        const w = el.getBoundingClientRect().width;
        scroll = scroll === null ? w : Math.min(scroll, w);
      }
      if (el === article) break;
    }
    const cap = t.querySelector("caption");
    // where the verdict column begins, from the table's left edge (the start of its scroll box)
    let verdict_left = null;
    for (const th of t.querySelectorAll("thead th, tr:first-child th")) {
      if (/\\bverdict\\b/i.test(th.textContent)) {
        verdict_left = th.getBoundingClientRect().left - t.getBoundingClientRect().left;
        break;
      }
    }
    tables.push({width, column, scroll, verdict_left,
                 caption: cap ? cap.textContent.trim() : ""});
  }
  const root = document.documentElement;
  return {mathjax, images, tables, html: root ? root.outerHTML : ""};
})()"""

_STICKING_OUT = """(() => {
  const W = %d, out = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.children.length || out.length >= 5) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= W + 1) continue;
    let a = el, inside = false;
    while (a && a !== document.body) {
      const s = getComputedStyle(a);
      if (s.position === 'fixed' || (a !== el && ['auto', 'scroll', 'hidden', 'clip'].includes(
          s.overflowX) && a.getBoundingClientRect().right <= W + 1)) { inside = true; break; }
      a = a.parentElement;
    }
    if (!inside) out.push(el.textContent);
  }
  return {width: Math.max(window.innerWidth, document.documentElement.scrollWidth),
          sticking_out: out};
})()"""

_PHONE_LAYOUT = """(() => {
  const W = window.innerWidth, H = window.innerHeight;
  const article = document.querySelector("article.bd-article") || document.querySelector("main")
    || document.body;
  const cs = getComputedStyle(article);
  const column = article.getBoundingClientRect().width - parseFloat(cs.paddingLeft || 0)
    - parseFloat(cs.paddingRight || 0);
  const h1 = article.querySelector("h1");
  const answer = document.querySelector(".report-summary ul.rp-papers");
  const visible = el => { const r = el && el.getBoundingClientRect();
    return !!r && r.width > 0 && r.height > 0 && r.left >= -1 && r.right <= W + 1; };
  const rows = [];
  for (const tr of document.querySelectorAll("tr.rp-row")) {
    const st = tr.querySelector(".rp-statement");
    rows.push({id: tr.id, statement: st ? st.getBoundingClientRect().width : 0,
               ran: visible(tr.querySelector(".rp-ran"))});
  }
  return {column, rows, title_height: h1 ? h1.getBoundingClientRect().height : 0,
          answer_bottom: answer ? answer.getBoundingClientRect().bottom + window.scrollY : null,
          screen_height: H};
})()"""

_HEIGHT = """(async () => {
  await Promise.race([new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))),
                      new Promise(r => setTimeout(r, 300))]);
  const body = document.body ? document.body.scrollHeight : 0;
  return Math.max(document.documentElement.scrollHeight, body);
})()"""


class BrowserError(RuntimeError):
    pass


def find_browser(explicit: str | None = None) -> str:
    for name in ([explicit] if explicit else []) + [os.environ.get("CHROMIUM", "")] + \
            list(BROWSERS):
        if name and (path := shutil.which(name)):
            return path
    raise BrowserError("no Chromium found (apt-get install chromium, or --browser PATH); "
                       "`make check-html` installs it when run as root")


class Chromium:
    """One headless Chromium driven over ``--remote-debugging-pipe`` (fds 3 and 4)."""

    def __init__(self, binary: str, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="check-html-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def plumb() -> None:  # in the child: the pipes become fds 3 (commands) and 4 (replies)
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            close_fds=False, preexec_fn=plumb)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.metrics: tuple[int, int, bool] | None = None
        self.events: list[dict] = []
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.send("Target.attachToTarget",
                                     {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Network", "Runtime"):
                self.send(f"{domain}.enable", session=self.session)
        except Exception:
            self.close()
            raise

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:] \
                    if self.proc.poll() is not None and self.proc.stderr else ""
                raise BrowserError(f"Chromium exited (status {self.proc.poll()}): {err}")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float | None = None) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str, timeout: float | None = None) -> dict:
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, ev in enumerate(self.events):
                if ev.get("method") == method:
                    return self.events.pop(i)
            reply = self._read(deadline)
            if "method" in reply:
                self.events.append(reply)

    def evaluate(self, expression: str, timeout: float | None = None) -> object:
        state = self.send("Runtime.evaluate", {
            "expression": expression, "awaitPromise": True, "returnByValue": True,
        }, session=self.session, timeout=timeout)
        if "exceptionDetails" in state:
            raise BrowserError(f"page script failed: {state['exceptionDetails']}")
        return state["result"].get("value")

    def screen(self, width: int, height: int, mobile: bool) -> None:
        """Emulate a screen of ``width`` x ``height`` CSS pixels (a phone when ``mobile``)."""
        if self.metrics == (width, height, mobile):
            return
        self.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile,
        }, session=self.session)
        self.metrics = (width, height, mobile)

    def screenshot(self) -> bytes:
        """The visible screen as PNG."""
        shot = self.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True},
                         session=self.session)
        return base64.b64decode(shot["data"])

    def open(self, url: str, mathjax_ms: int = 15000,
             screen: tuple[int, int, bool] = SCREENS[0][1:]) -> dict:
        """Load ``url`` on ``screen``, let MathJax finish; the DOM, images, tables, requests and
        JS errors."""
        self.events.clear()
        nav = self.send("Page.navigate", {"url": url}, session=self.session)
        if nav.get("errorText"):
            raise BrowserError(f"{url}: {nav['errorText']}")
        # after the navigation, not before: the old page is not laid out again at this size
        self.screen(*screen)
        self.wait_event("Page.loadEventFired")
        try:
            value = self.evaluate(_PAGE_STATE % mathjax_ms, mathjax_ms / 1000 + self.timeout)
        except BrowserError as exc:
            raise BrowserError(f"{url}: {exc}") from exc
        value["events"] = list(self.events)
        return value

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    os.write(self._to_child, json.dumps(
                        {"id": 0, "method": "Browser.close"}).encode() + b"\0")
                    self.proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    self.proc.kill()
                    self.proc.wait()
        finally:
            for fd in (self._to_child, self._from_child):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if self.proc.stderr:
                self.proc.stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)


def request_problems(events: list[dict], base: str) -> list[str]:
    """Requests to other hosts, local files the server lacks, JavaScript errors."""
    problems = []
    for ev in events:
        method, params = ev.get("method"), ev.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            if not url.startswith((base, "data:", "blob:", "about:")):
                problems.append(f"requests another host (offline it fails): {url}")
        elif method == "Network.responseReceived":
            resp = params.get("response", {})
            if resp.get("status", 200) >= 400 and not resp.get("url", "").endswith(
                    "/favicon.ico"):
                problems.append(f"HTTP {resp.get('status')} for {resp.get('url')}")
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            text = d.get("exception", {}).get("description") or d.get("text", "")
            if not any(known in text for known in KNOWN_JS_ERRORS):
                problems.append(f"JavaScript error: {text.splitlines()[0] if text else d}")
    return sorted(set(problems))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def pages_of(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.html")
                  if not any(part in SKIP_DIRS for part in p.relative_to(root).parts))


# ----------------------------------------------------------------------------- screens


def screenshot_name(rel: str, screen: str) -> str:
    """``book/executed/data.html`` at 1280 -> ``book__executed__data-1280.png``."""
    stem = rel[:-len(".html")] if rel.endswith(".html") else rel
    return f"{stem.replace('/', '__')}-{screen}.png"


def screens_table(rows: list[dict]) -> str:
    """The CSV of every page's height (pixels and screens) at each measured width."""
    out = io.StringIO()
    fields = ["page", "tables", "wide_tables", "verdict_offscreen"] + [
        f"{k}_{name}" for name, *_ in SCREENS for k in ("height_px", "screens")]
    writer = csv.DictWriter(out, fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k, "") for k in fields})
    return out.getvalue()


def _photograph(chromium: Chromium, url: str, rel: str, shots: Path | None
                ) -> tuple[dict, list[str]]:
    """Height (and a picture of the first screen) of the page at each of SCREENS, and the
    problems of a page wider than a phone. The page is open at the first screen; a phone screen
    loads it again at its own size (the next page is opened at the first one again)."""
    row: dict = {"page": rel}
    problems: list[str] = []
    for i, (name, width, height, mobile) in enumerate(SCREENS):
        if i:
            chromium.open(url, screen=(width, height, mobile))
        else:
            chromium.screen(width, height, mobile)
        if mobile:
            problems += [f"{rel}: {p}" for p in
                         phone_width_problems(chromium.evaluate(_STICKING_OUT % width), width)]
            problems += [f"{rel}: {p}" for p in
                         phone_layout_problems(chromium.evaluate(_PHONE_LAYOUT), height)]
        px = int(chromium.evaluate(_HEIGHT) or 0)
        row[f"height_px_{name}"], row[f"screens_{name}"] = px, round(px / height, 1)
        if mobile:
            problems += [f"{rel}: {p}" for p in phone_screens_problems(rel, px / height)]
        if shots is not None:
            (shots / screenshot_name(rel, name)).write_bytes(chromium.screenshot())
    return row, problems


def _write_screens(shots: Path, rows: list[dict]) -> None:
    tmp = shots / ".screens.csv.tmp"
    tmp.write_text(screens_table(rows), encoding="utf-8")
    os.replace(tmp, shots / "screens.csv")


def _print_screens(rows: list[dict]) -> None:
    names = [name for name, *_ in SCREENS]
    print("check-html: page height in screens (" + " | ".join(
        f"{w}x{h}" for _, w, h, _ in SCREENS) + "), tables wider than the text column at "
        f"{SCREENS[0][1]} px (scrolling in their box) / tables, tables whose verdict column "
        "needs a scroll to be seen", file=sys.stderr)
    for row in rows:
        cells = " | ".join(f"{row.get(f'screens_{n}', ''):>6}" for n in names)
        print(f"  {cells} | {row.get('wide_tables', 0):>3}/{row.get('tables', 0):<3} | "
              f"{row.get('verdict_offscreen', 0):>3} {row['page']}", file=sys.stderr)
    totals = " | ".join(f"{sum(r.get(f'screens_{n}', 0) for r in rows):6.1f}" for n in names)
    n_wide, n_tables, n_hidden = (sum(r.get(k, 0) for r in rows)
                                  for k in ("wide_tables", "tables", "verdict_offscreen"))
    print(f"  {totals} | {n_wide:>3}/{n_tables:<3} | {n_hidden:>3} (all {len(rows)} pages)",
          file=sys.stderr)


# ----------------------------------------------------------------------------- the book


def check_book(root: Path, *, expected_scale: str | None = None, browser: str | None = None,
               chapters: str = CHAPTERS, machine_paths: tuple[str, ...] = (),
               summary_check: bool = True, no_summary: tuple[str, ...] = NO_SUMMARY,
               screenshots: Path | None = None, min_figure_scale: float = MIN_FIGURE_SCALE,
               warnings: list[str] | None = None, glossary: Path | None = GLOSSARY,
               ) -> tuple[list[str], int, list[dict]]:
    """Open every page of the book under ``root``; returns (problems, number of pages, each
    page's height at each screen). ``screenshots``: the folder for the pictures (None: none).
    ``warnings`` collects what a reader may stumble on without it failing the check: the
    abbreviations of ``glossary`` (book/glossary.md) a page uses before it links there."""
    pages = pages_of(root)
    abbreviations = glossary_abbreviations(glossary.read_text(encoding="utf-8")) \
        if glossary is not None and glossary.is_file() else []
    if not pages:
        return [f"{root}: no HTML pages (build the book first: make book)"], 0, []
    if screenshots is not None:
        screenshots.mkdir(parents=True, exist_ok=True)
        for old in screenshots.glob("*.png"):
            old.unlink()
    chromium = Chromium(find_browser(browser))  # before the server thread: it forks
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems: list[str] = []
    screens: list[dict] = []
    try:
        for page in pages:
            rel = page.relative_to(root).as_posix()
            target = redirect_target(page.read_text(encoding="utf-8", errors="replace"))
            if target is not None:  # a redirect (the book's index.html): its target must exist
                if not (page.parent / unquote(urlsplit(target).path)).is_file():
                    problems.append(f"{rel}: redirects to a missing page {target}")
                continue
            try:
                state = chromium.open(base + rel)
            except BrowserError as exc:
                problems.append(f"{rel}: could not be opened: {exc}")
                continue
            chapter = fnmatch.fnmatch(rel, chapters)
            page_problems = check_page(
                state["html"], rel, root, chapter=chapter, expected_scale=expected_scale,
                summary=summary_check and chapter and rel not in no_summary,
                found=summary_check and chapter and rel not in no_summary,
                rendered_images=state["images"], tables=state["tables"],
                machine_paths=machine_paths, min_figure_scale=min_figure_scale)
            if state["mathjax"] not in ("done", "absent"):
                page_problems.append(f"{rel}: MathJax {state['mathjax']}")
            page_problems += [f"{rel}: {p}" for p in request_problems(state["events"], base)]
            problems += page_problems
            if warnings is not None and abbreviations and rel not in NO_GLOSSARY_CHECK:
                warnings += [f"{rel}: warning: {w}"
                             for w in glossary_problems(state["html"], abbreviations)]
            row = {"page": rel, "tables": len(state["tables"]), "wide_tables": sum(
                t["width"] > t["column"] + 1 for t in state["tables"]),
                "verdict_offscreen": sum(  # the verdict needs a scroll to be seen
                    t.get("verdict_left") is not None
                    and t["verdict_left"] + 40 > min(t.get("scroll") or t["column"], t["column"])
                    for t in state["tables"])}
            try:
                heights, phone = _photograph(chromium, base + rel, rel, screenshots)
            except BrowserError as exc:
                problems.append(f"{rel}: could not be opened on a phone screen: {exc}")
                continue
            problems += phone
            screens.append({**row, **heights})
    finally:
        server.shutdown()
        server.server_close()
        chromium.close()
    if screenshots is not None:
        _write_screens(screenshots, screens)
    return problems, len(pages), screens


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/check_html.py", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("root", nargs="?", type=Path, default=Path("_build/html"),
                        help="the built HTML (default _build/html)")
    parser.add_argument("--scale", choices=SCALES,
                        help="the scale every chapter must be labelled with")
    parser.add_argument("--browser", help="Chromium binary (default: chromium on PATH, $CHROMIUM)")
    parser.add_argument("--chapters", default=CHAPTERS,
                        help=f"pages that must carry a scale label (default {CHAPTERS})")
    parser.add_argument("--no-summary-check", dest="summary_check", action="store_false",
                        help="do not require a chapter opening box ('chapter-summary')")
    parser.add_argument("--min-figure-scale", type=float, default=MIN_FIGURE_SCALE,
                        help="smallest displayed/drawn width of a cell's figure "
                             f"(default {MIN_FIGURE_SCALE}: 13-pt labels at 9 px)")
    parser.add_argument("--screenshots", type=Path,
                        help="folder for screenshots and screens.csv (default: screenshots/ "
                             "beside the HTML folder, _build/screenshots)")
    parser.add_argument("--no-screenshots", action="store_true",
                        help="take no screenshots (the heights are still measured)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    shots = None if args.no_screenshots else (args.screenshots or root.parent / "screenshots")
    t0 = time.perf_counter()
    warnings: list[str] = []
    try:
        problems, n, screens = check_book(
            root, expected_scale=args.scale, browser=args.browser, chapters=args.chapters,
            machine_paths=machine_paths(), summary_check=args.summary_check,
            screenshots=shots, min_figure_scale=args.min_figure_scale, warnings=warnings)
    except BrowserError as exc:
        print(f"check-html: error: {exc}", file=sys.stderr)
        return 2
    for line in warnings:
        print(line, file=sys.stderr)
    for line in problems:
        print(line)
    if screens:
        _print_screens(screens)
    if shots is not None and screens:
        print(f"check-html: screenshots and screens.csv in {shots}", file=sys.stderr)
    print(f"check-html: {n} pages, {len(problems)} problem(s), {len(warnings)} warning(s) in "
          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
