"""Open every page of the built book in headless Chromium and check what a reader sees.

Per page (the test id names the page): it loads (HTTP 200, a title, the main
article), no local resource fails, every image in the article has loaded, no cell
output shows a traceback or an error, every figure has a non-empty caption (and
every image a notebook cell outputs sits in such a figure: plot cells carry
``mystnb: figure: caption`` metadata), and every local link resolves, including
its ``#fragment``. A full-page screenshot of each page goes to ``screenshots/``.

Run with ``make browser-test`` after ``make book``; ``HCA_BOOK_HTML=/path/to/html``
tests another build.
"""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import pytest

# Generated pages that are not chapters of the book.
SKIP_PAGES = {"search.html", "genindex.html", "py-modindex.html"}
SKIP_DIRS = {"_static", "_sources", "_images", "_downloads", "_panels_static"}
ARTICLE = "article.bd-article, main article, [role='main']"
_REFRESH = re.compile(r"<meta[^>]+http-equiv=[\"']?refresh", re.IGNORECASE)


def book_html_dir() -> Path:
    """The built book: ``$HCA_BOOK_HTML`` or ``<repo>/_build/html`` (as in conftest.py)."""
    default = Path(__file__).resolve().parents[1] / "_build" / "html"
    return Path(os.environ.get("HCA_BOOK_HTML") or default).resolve()


def discover_pages(root: Path) -> list[str]:
    """Every HTML page of the book under ``root``, as a path relative to it.

    Leaves out Sphinx's search and index pages, the asset folders and
    redirect stubs (the root ``index.html`` is a meta-refresh to the first page).
    """
    pages = []
    for path in sorted(root.rglob("*.html")):
        rel = path.relative_to(root)
        if rel.parts[0] in SKIP_DIRS or rel.as_posix() in SKIP_PAGES:
            continue
        head = path.read_text(encoding="utf-8", errors="replace")[:2048]
        if _REFRESH.search(head) and path.stat().st_size < 2048:
            continue
        pages.append(rel.as_posix())
    return pages


def _collect_pages() -> list[str]:
    root = book_html_dir()
    return discover_pages(root) if (root / "index.html").is_file() else []


PAGES = _collect_pages()


# ---------------------------------------------------------------------------
# What the browser reads off a page, once per page.

_READ_PAGE_JS = """
async (articleSelector) => {
  const art = document.querySelector(articleSelector);
  const context = (el) => {
    const cell = el.closest('.cell');
    const src = cell && cell.querySelector('.cell_input');
    if (src) return 'cell: ' + src.textContent.trim().split('\\n')[0].slice(0, 80);
    const sec = el.closest('section');
    const h = sec && sec.querySelector('h1, h2, h3, h4');
    return h ? 'section: ' + h.textContent.replace('#', '').trim().slice(0, 80) : '';
  };
  // Visible text without the copy buttons sphinx-copybutton adds.
  const textOf = (el) => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll('button, .copybtn').forEach((e) => e.remove());
    return copy.textContent.replace(/\\s+/g, ' ').trim();
  };
  const captionText = (fig) => {
    const cap = fig.querySelector('figcaption');
    if (!cap) return null;
    const copy = cap.cloneNode(true);
    copy.querySelectorAll('.caption-number, .headerlink').forEach((e) => e.remove());
    return copy.textContent.replace(/\\s+/g, ' ').trim();
  };

  // Images: wait until each has loaded or failed (lazy ones are made eager).
  const imgs = art ? [...art.querySelectorAll('img')] : [];
  imgs.forEach((i) => { if (i.loading === 'lazy') i.loading = 'eager'; });
  await Promise.all(imgs.map((i) => i.complete ? null : new Promise((resolve) => {
    i.addEventListener('load', resolve);
    i.addEventListener('error', resolve);
    setTimeout(resolve, 10000);
  })));
  const images = imgs.map((i) => ({
    src: i.getAttribute('src'), complete: i.complete, naturalWidth: i.naturalWidth,
    where: context(i),
  }));

  const figures = art ? [...art.querySelectorAll('figure')].map((f) => {
    const img = f.querySelector('img');
    return {id: f.id, img: img && img.getAttribute('src'), caption: captionText(f),
            where: context(f)};
  }) : [];

  const cellImages = art ? [...art.querySelectorAll('.cell_output img')].map((i) => {
    const fig = i.closest('figure');
    return {src: i.getAttribute('src'), inFigure: !!fig,
            caption: fig ? captionText(fig) : null, where: context(i)};
  }) : [];

  // Error outputs: myst-nb renders exceptions as `.output.traceback`, stderr as
  // `.output.stderr`; other renderers use `.output.error` / `.output_error`.
  const errors = [];
  const seen = new Set();
  const flag = (el, why) => {
    if (seen.has(el)) return;
    seen.add(el);
    errors.push({why, where: context(el),
                 text: textOf(el).slice(0, 300)});
  };
  if (art) {
    art.querySelectorAll('.output.traceback, .output.error, .output_error, .cell_output .traceback')
      .forEach((e) => flag(e, 'error output'));
    art.querySelectorAll('.output.stderr, .output_stderr').forEach((e) => {
      if (/Error/.test(e.textContent)) flag(e, 'stderr output containing "Error"');
    });
    // Innermost output areas first, then whole cell outputs not flagged yet.
    const tracebackText = (e) => e.textContent.includes('Traceback (most recent call last)');
    art.querySelectorAll('.cell_output .output').forEach((e) => {
      if (tracebackText(e) && ![...seen].some((s) => s.contains(e) || e.contains(s))) {
        flag(e, 'output containing "Traceback (most recent call last)"');
      }
    });
    art.querySelectorAll('.cell_output').forEach((e) => {
      if (tracebackText(e) && ![...seen].some((s) => s.contains(e) || e.contains(s))) {
        flag(e, 'output containing "Traceback (most recent call last)"');
      }
    });
  }

  const links = [...document.querySelectorAll('a[href]')].map((a) => ({
    href: a.href, raw: a.getAttribute('href'),
    text: a.textContent.replace(/\\s+/g, ' ').trim().slice(0, 60),
  }));

  return {hasArticle: !!art, images, figures, cellImages, errors, links};
}
"""


def _screenshot_name(page: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "__", page.removesuffix(".html")) + ".png"


@pytest.fixture(scope="session")
def visit(browser_context, base_url: str, screenshot_dir: Path):
    """``visit(page)`` opens the page once, screenshots it, and returns what it read."""
    cache: dict[str, dict] = {}

    def _visit(page: str) -> dict:
        if page in cache:
            return cache[page]
        tab = browser_context.new_page()
        failed: list[str] = []

        def on_response(resp):
            if resp.url.startswith(base_url) and resp.status >= 400:
                failed.append(f"{resp.status} {resp.url}")

        def on_request_failed(req):
            if req.url.startswith(base_url):
                failed.append(f"{req.failure} {req.url}")

        tab.on("response", on_response)
        tab.on("requestfailed", on_request_failed)
        try:
            response = tab.goto(urljoin(base_url, page), wait_until="load")
            result = tab.evaluate(_READ_PAGE_JS, ARTICLE)
            result["status"] = response.status if response else None
            result["title"] = tab.title().strip()
            tab.screenshot(path=str(screenshot_dir / _screenshot_name(page)), full_page=True)
            result["failedRequests"] = failed
        finally:
            tab.close()
        cache[page] = result
        return result

    return _visit


# Straight to the local server, whatever *_proxy variables say.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class _Anchors(HTMLParser):
    """Collects every ``id`` (and ``<a name>``) and every ``<a href>`` of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


@pytest.fixture(scope="session")
def fetch():
    """``fetch(url)`` -> (HTTP status, ids, hrefs, final url), cached per URL (no fragment)."""
    cache: dict[str, tuple[int, set[str], list[str], str]] = {}

    def _fetch(url: str):
        url = urldefrag(url).url
        if url not in cache:
            ids: set[str] = set()
            hrefs: list[str] = []
            final = url
            try:
                with _OPENER.open(url, timeout=10) as resp:  # 127.0.0.1 only
                    status, final = resp.status, resp.geturl()
                    body = resp.read()
                    if "html" in resp.headers.get("Content-Type", ""):
                        parser = _Anchors()
                        parser.feed(body.decode("utf-8", errors="replace"))
                        ids, hrefs = parser.ids, parser.hrefs
            except urllib.error.HTTPError as exc:
                status = exc.code
            cache[url] = (status, ids, hrefs, final)
        return cache[url]

    return _fetch


# ---------------------------------------------------------------------------
# The tests.


def test_book_is_built(html_dir: Path):
    assert PAGES, f"no book pages found under {html_dir}"


def test_every_page_is_reachable_from_the_home_page(html_dir: Path, base_url: str, fetch):
    """Crawl local links from index.html; a page on disk that nothing links is stale."""
    reached: set[str] = set()
    todo = [base_url]
    while todo:
        url = todo.pop()
        status, _, hrefs, final = fetch(url)
        rel = urlsplit(final).path.lstrip("/") or "index.html"
        if status != 200 or rel in reached or not rel.endswith(".html"):
            continue
        reached.add(rel)
        for href in hrefs:
            target = urldefrag(urljoin(final, href)).url
            if target.startswith(base_url) and target.endswith(".html"):
                todo.append(target)
        # The root index.html is a meta refresh to the first page.
        body = (html_dir / rel).read_text(encoding="utf-8", errors="replace")
        m = re.search(r"http-equiv=[\"']?refresh[\"']?\s+content=[\"']\d+;\s*url=([^\"']+)", body, re.I)
        if m:
            todo.append(urljoin(final, m.group(1)))
    orphans = sorted(set(PAGES) - reached)
    assert not orphans, (
        f"pages in the build that no page links to (stale build? run `make clean book`): {orphans}"
    )


@pytest.mark.parametrize("page", PAGES)
def test_page_loads(page: str, visit):
    info = visit(page)
    assert info["status"] == 200, f"{page}: HTTP {info['status']}"
    assert info["title"], f"{page}: empty <title>"
    assert info["hasArticle"], f"{page}: no main article element ({ARTICLE})"
    assert not info["failedRequests"], f"{page}: local resources failed: {info['failedRequests']}"


@pytest.mark.parametrize("page", PAGES)
def test_no_broken_images(page: str, visit):
    info = visit(page)
    broken = [i for i in info["images"] if not i["complete"] or i["naturalWidth"] <= 0]
    assert not broken, f"{page}: broken images: " + "; ".join(
        f"{i['src']} ({i['where']})" for i in broken
    )


@pytest.mark.parametrize("page", PAGES)
def test_no_error_outputs(page: str, visit):
    info = visit(page)
    assert not info["errors"], f"{page}: cell outputs show errors:\n" + "\n".join(
        f"- {e['why']} ({e['where']}): {e['text']}" for e in info["errors"]
    )


@pytest.mark.parametrize("page", PAGES)
def test_figures_have_captions(page: str, visit):
    info = visit(page)
    problems = [
        f"<figure id={f['id']!r}> with image {f['img']} has no caption ({f['where']})"
        for f in info["figures"]
        if not f["caption"]
    ]
    problems += [
        f"cell output image {i['src']} is not in a captioned figure ({i['where']}); "
        "give the cell `mystnb: figure: caption` metadata"
        for i in info["cellImages"]
        if not (i["inFigure"] and i["caption"])
    ]
    assert not problems, f"{page}:\n" + "\n".join(f"- {p}" for p in problems)


@pytest.mark.parametrize("page", PAGES)
def test_internal_links_resolve(page: str, visit, fetch, base_url: str):
    info = visit(page)
    page_url = urljoin(base_url, page)
    problems = []
    checked: set[str] = set()
    for link in info["links"]:
        href = link["href"]
        if not href.startswith(base_url) or href in checked:
            continue  # other hosts, mailto:, javascript:
        checked.add(href)
        target, fragment = urldefrag(href)
        status, ids, _, _ = fetch(target)
        if status != 200:
            problems.append(f"{link['raw']!r} ({link['text']!r}) -> HTTP {status}")
        elif fragment and unquote(fragment) not in ids:
            where = "this page" if target == urldefrag(page_url).url else target[len(base_url):]
            problems.append(f"{link['raw']!r} ({link['text']!r}) -> no id {fragment!r} on {where}")
    assert not problems, f"{page}: broken internal links:\n" + "\n".join(
        f"- {p}" for p in problems
    )
