"""Open every page of the built book in headless Chromium and fail on what a reader would see.

``python tools/check_html.py [_build/html] [--scale smoke]``

The pages are served from ``127.0.0.1`` by a throw-away HTTP server inside this process and opened
one after another in one headless Chromium, driven over the DevTools protocol on a pipe (no extra
Python package). Every host other than 127.0.0.1 is unresolvable for the browser, so the check
sees the book as an offline reader does. After each page has loaded and MathJax has finished
typesetting, the rendered DOM is checked for:

* a missing image (its file does not exist, or the browser decoded it to zero width);
* an error in a cell output (a traceback, ``...Error:`` / ``...Exception:`` / ``...Warning:``
  text, MathJax error boxes, ``.traceback`` output blocks);
* raw TeX left in the text after MathJax ran (``\\(``, ``\\[``, ``$$``, ``\\begin{``, a
  ``\\command``), outside code; also MathJax that did not load on a page that needs it;
* a stray object in a cell output: a ``Claim(...)`` or ``PosixPath(...)`` repr, ``<... object at
  0x...>``, a figure printed as ``<Figure size ...>`` instead of drawn, or the absolute path of
  the build machine's checkout;
* a chapter page (``book/executed/*.html``) without the Run banner's scale label ("Computed at
  scale ..."), or, with ``--scale``, labelled with another scale; a table in a chapter's cell
  output without its scale in the caption (``run.table(df, title)`` adds both);
* a request to another host, a local file the server does not have, or a JavaScript error.

A redirect page (the book's ``index.html``) is not rendered; its target must exist.

Each problem is one line ``<page>: <problem>`` on stdout; the exit status is 1 when there is any,
2 when the browser cannot be started. The detection functions work on HTML strings, so they are
unit-tested without a browser (tests/test_rendered_book.py).
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import http.server
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

REPO = Path(__file__).resolve().parents[1]
SCALES = ("smoke", "cpu", "paper")
CHAPTERS = "book/executed/*.html"
SKIP_DIRS = ("_static", "_sources", "_images")
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
    "--window-size=1280,1600", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--remote-debugging-pipe",
)

# ----------------------------------------------------------------------------- parsing

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
         "source", "track", "wbr"}
_SKIP = {"script", "style", "template", "noscript", "head"}
_CODE = {"pre", "code", "kbd", "samp", "tt", "textarea"}
_OUTPUT_CLASSES = {"cell_output", "output"}


@dataclass
class Table:
    in_output: bool  # inside a cell output
    caption: str | None = None


@dataclass
class Page:
    """What a reader sees of one page: text by kind, images, tables, MathJax leftovers."""

    prose: str = ""  # visible text outside code, math and cell outputs' code blocks
    output_text: str = ""  # all text inside cell outputs (code blocks included)
    full_text: str = ""  # all visible text (code included, math excluded)
    math_text: str = ""  # MathJax's assistive MathML text (undefined macros show up here)
    images: list[str] = field(default_factory=list)  # src attributes
    tables: list[Table] = field(default_factory=list)
    merrors: int = 0  # MathJax error boxes
    traceback_blocks: int = 0  # output blocks of class "traceback" or "error"
    unrendered_math: int = 0  # Sphinx math elements that MathJax did not replace


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        # one entry per open element: (tag, flags inherited by descendants, its own record)
        self.stack: list[tuple[str, dict[str, bool], dict]] = []
        self.chunks: dict[str, list[str]] = {"prose": [], "output": [], "full": [], "math": []}
        self.caption: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        if tag == "img":
            self.page.images.append(a.get("src") or "")
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
        if tag == "caption":
            self.caption = []
        self.stack.append((tag, f, own))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or not any(t == tag for t, _, _ in self.stack):
            return  # a stray end tag: ignore it, as browsers do
        while self.stack:
            t, _, own = self.stack.pop()
            if own.get("typeset") is False:
                self.page.unrendered_math += 1
            if t == "caption" and self.caption is not None:
                table = next((r["table"] for _, _, r in reversed(self.stack) if "table" in r),
                             None)
                if table is not None:
                    table.caption = " ".join("".join(self.caption).split())
                self.caption = None
            if t == tag:
                break

    def handle_data(self, data: str) -> None:
        f = self.stack[-1][1] if self.stack else {}
        if f.get("skip"):
            return
        if self.caption is not None:
            self.caption.append(data)
        if f.get("math"):
            self.chunks["math"].append(data)
            return
        if f.get("mjx"):
            return
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


# ----------------------------------------------------------------------------- detection

_REFRESH = re.compile(r"""<meta[^>]+http-equiv=["']?refresh["']?[^>]*url=([^"'>\s]+)""", re.I)
_RAW_TEX = re.compile(r"\\[()\[\]]|\$\$|\\(?:begin|end)\{|\\[A-Za-z]{2,}")
_OUTPUT_ERROR = re.compile(
    r"Traceback \(most recent call last\)|\b\w*(?:Error|Exception|Warning): ")
_STRAY = re.compile(r"Claim\(claim_id=|(?:Posix|Windows)Path\(|<[\w.]+ (?:object )?at 0x[0-9a-f]+>"
                    r"|<Figure size \d+x\d+ with \d+ Axes>")
_SCALE_LABEL = re.compile(r"Computed at scale\s+(\w+)")


def _excerpt(text: str, start: int, end: int, width: int = 30) -> str:
    snippet = text[max(0, start - width): end + width]
    return " ".join(snippet.split())


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


def stray_output_problems(page: Page, machine_paths: tuple[str, ...] = ()) -> list[str]:
    """Objects printed by accident (a cell ending in ``run.claim(...)`` or ``run.save_table(...)``
    without ``;``), figures that were not drawn, and paths of the machine that built the book."""
    problems = []
    hits = list(_STRAY.finditer(page.output_text))
    if hits:
        shown = "; ".join(repr(_excerpt(page.output_text, m.start(), m.end(), 20))
                          for m in hits[:3])
        problems.append(f"stray object in a cell output ({len(hits)}x; end the cell with ';'), "
                        f"e.g. {shown}")
    for path in machine_paths:
        if path and path in page.output_text:
            problems.append(f"a cell output shows this machine's path {path}")
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


def table_caption_problems(page: Page, scales: set[str] | None = None) -> list[str]:
    """Every table in a chapter's cell outputs states its scale in its caption."""
    names = scales or set(SCALES)
    bad = [t for t in page.tables if t.in_output
           and not (t.caption and re.search(rf"\bscale\b.*\b({'|'.join(names)})\b", t.caption))]
    if not bad:
        return []
    return [f"{len(bad)} output table(s) without the scale in a caption "
            "(display them with run.table(df, title))"]


def image_problems(page: Page, page_file: Path, root: Path,
                   rendered: list[dict] | None = None) -> list[str]:
    """Images whose file is missing under ``root``, or that the browser decoded to width 0
    (``rendered``: the browser's ``{"src", "width"}`` of each image, when there is one)."""
    problems, missing = [], set()
    for src in page.images:
        parts = urlsplit(src)
        if parts.scheme or parts.netloc:
            continue  # data: URIs are checked by width; other hosts are reported as requests
        target = (page_file.parent / unquote(parts.path)).resolve()
        if not src or not target.is_file() or not target.is_relative_to(root.resolve()):
            missing.add(src)
            problems.append(f"missing image {src!r}")
    for img in rendered or []:
        if not img.get("width") and img.get("src") not in missing:
            problems.append(f"image not displayed (naturalWidth 0): {img.get('src')!r}")
    return problems


def check_page(html: str, rel: str, root: Path | None = None, *, chapter: bool = False,
               expected_scale: str | None = None, rendered_images: list[dict] | None = None,
               machine_paths: tuple[str, ...] = ()) -> list[str]:
    """Every problem of one page (``rel``: its path under ``root``), one line each."""
    page = parse_page(html)
    problems = raw_tex_problems(page) + output_error_problems(page)
    problems += stray_output_problems(page, machine_paths)
    if chapter:
        problems += scale_problems(page, expected_scale)
        problems += table_caption_problems(page, {expected_scale} if expected_scale else None)
    if root is not None:
        problems += image_problems(page, root / rel, root, rendered_images)
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
  const images = Array.from(document.images).map(
    i => ({src: i.getAttribute("src") || "", width: i.naturalWidth, complete: i.complete}));
  const root = document.documentElement;
  return {mathjax, images, html: root ? root.outerHTML : ""};
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

    def open(self, url: str, mathjax_ms: int = 15000) -> dict:
        """Load ``url``, let MathJax finish; the DOM, images, requests and JS errors."""
        self.events.clear()
        nav = self.send("Page.navigate", {"url": url}, session=self.session)
        if nav.get("errorText"):
            raise BrowserError(f"{url}: {nav['errorText']}")
        self.wait_event("Page.loadEventFired")
        state = self.send("Runtime.evaluate", {
            "expression": _PAGE_STATE % mathjax_ms, "awaitPromise": True, "returnByValue": True,
        }, session=self.session, timeout=mathjax_ms / 1000 + self.timeout)
        if "exceptionDetails" in state:
            raise BrowserError(f"{url}: page script failed: {state['exceptionDetails']}")
        value = state["result"]["value"]
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


def check_book(root: Path, *, expected_scale: str | None = None, browser: str | None = None,
               chapters: str = CHAPTERS, machine_paths: tuple[str, ...] = ()
               ) -> tuple[list[str], int]:
    """Open every page of the book under ``root``; returns (problems, number of pages)."""
    pages = pages_of(root)
    if not pages:
        return [f"{root}: no HTML pages (build the book first: make book)"], 0
    chromium = Chromium(find_browser(browser))  # before the server thread: it forks
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems: list[str] = []
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
            page_problems = check_page(
                state["html"], rel, root, chapter=fnmatch.fnmatch(rel, chapters),
                expected_scale=expected_scale, rendered_images=state["images"],
                machine_paths=machine_paths)
            if state["mathjax"] not in ("done", "absent"):
                page_problems.append(f"{rel}: MathJax {state['mathjax']}")
            page_problems += [f"{rel}: {p}" for p in request_problems(state["events"], base)]
            problems += page_problems
    finally:
        server.shutdown()
        server.server_close()
        chromium.close()
    return problems, len(pages)


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
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    try:
        problems, n = check_book(args.root.resolve(), expected_scale=args.scale,
                                 browser=args.browser, chapters=args.chapters,
                                 machine_paths=(str(REPO),))
    except BrowserError as exc:
        print(f"check-html: error: {exc}", file=sys.stderr)
        return 2
    for line in problems:
        print(line)
    print(f"check-html: {n} pages, {len(problems)} problem(s) in "
          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
