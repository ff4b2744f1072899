"""Download links and a permalink under every figure caption.

For every figure of a page (``{figure}`` directives, notebook cells with ``mystnb: figure``
metadata, ``{glue:figure}``) whose image is a local file, the image is copied to
``_figures/<page>/<figure name>.<ext>`` in the built book and, for an SVG, converted to PDF
with cairosvg. The figure then gets, inside its ``<figcaption>``, a line

    Download: SVG · PDF · Data (CSV) · Link to this figure

(class ``figure-downloads``; the CSV is the data drawn, stored in the SVG by
``hca.plots.use_book_style``) linking those files and the figure's own anchor (its ``name:``,
e.g. ``#fig-hca-theorem1``). A figure without a name gets no permalink; the browser test asks
every figure to have one through its caption check.

Every figure image gets alt text taken from its caption (:func:`alt_text`: the caption's plain
text, its first sentences up to :data:`ALT_MAX_CHARS` characters), instead of the file name
Sphinx writes when an image has none (a cell output's or a glued figure's); an alt text given
in the source (``{figure}``'s ``:alt:``) is kept.

On a narrow screen (a phone, 390 px) a figure scaled down to the column would shrink its text
to 4-5 px (measured on the book at 390 px: a median of 5.3 px, 5 of 77 figures at 7 px or
more). Every SVG figure therefore gets a minimum width, ``min-width`` on its ``<img>``: the
width at which its smallest text is :data:`MIN_TEXT_PX` CSS px (read from the SVG: its width,
viewBox and smallest ``font-size``). The image sits in a box of its own
(``<div class="hca-figure-scroll">``) that scrolls sideways when the figure is wider than the
column; the page does not. Above it, a cue (``<p class="hca-figure-cue">``: how much of the
figure is shown, "swipe it sideways, or open it full size", the SVG in a new tab) is shown by
``book/_static/hca-figures.js`` only while the box is narrower than the figure. At 1400 px
every figure is shown wider than that minimum already, and no cue shows.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.osutil import relative_uri

logger = logging.getLogger(__name__)

FIGURE_DIR = "_figures"
LINK_CLASS = "figure-downloads"
#: The smallest figure text on any screen, in CSS px (the browser test asks for 8 at 390 px).
MIN_TEXT_PX = 8.5
#: The longest alt text taken from a caption (whole sentences up to this length, else cut).
ALT_MAX_CHARS = 200

_SVG_TAG = re.compile(r"<svg\b[^>]*>", re.S)
_LENGTH = re.compile(r"^\s*([\d.]+)\s*(pt|px)?\s*$")
_FONT_SIZE = re.compile(r"font-size(?::\s*|=\")([\d.]+)(?:px)?")
_FONT_SHORT = re.compile(r"font:[^;\"]*?([\d.]+)px")


def svg_min_width(svg_text: str, min_text_px: float = MIN_TEXT_PX) -> int | None:
    """The width (CSS px) at which the smallest text of a matplotlib SVG is ``min_text_px``
    as shown, or None when the SVG has no width, viewBox or sized text."""
    tag = _SVG_TAG.search(svg_text)
    if tag is None:
        return None
    attrs = dict(re.findall(r'([\w:-]+)="([^"]*)"', tag.group(0)))
    width = _LENGTH.match(attrs.get("width", ""))
    box = attrs.get("viewBox", "").split()
    sizes = [float(x) for x in _FONT_SIZE.findall(svg_text) + _FONT_SHORT.findall(svg_text)]
    if width is None or len(box) != 4 or not sizes or float(box[2]) <= 0:
        return None
    natural = float(width.group(1)) * (4 / 3 if width.group(2) == "pt" else 1.0)  # CSS px
    smallest = min(s for s in sizes if s > 0) * natural / float(box[2])  # px at natural width
    return int(round(natural * min_text_px / smallest + 0.5))


def _remember_min_width(app: Sphinx, source: Path) -> None:
    if source.suffix.lower() != ".svg":
        return
    try:
        width = svg_min_width(source.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return
    if width:
        if not hasattr(app, "_hca_min_width"):
            app._hca_min_width = {}
        app._hca_min_width[source.name] = width


_IMG = re.compile(r'<img\b([^>]*?)\bsrc="([^"]+)"([^>]*)>')

#: The cue above a figure wider than the column (shown by book/_static/hca-figures.js, which
#: fills in the share shown); ``{src}`` is the image's own URL.
CUE = ('<p class="hca-figure-cue">Wider than the screen: <span class="hca-figure-shown">part'
       '</span> of the figure is shown. Swipe it sideways, or <a class="hca-figure-full" '
       'href="{src}" target="_blank" rel="noopener">open it full size</a>.</p>')


def add_min_widths(app: Sphinx, pagename: str, templatename: str, context: dict,
                   doctree) -> None:
    """Give every SVG figure of the page its ``min-width``, its own sideways-scrolling box and
    the cue above it (see the module docstring)."""
    widths = getattr(app, "_hca_min_width", None)
    body = context.get("body")
    if not widths or not body:
        return

    def fix(m: re.Match) -> str:
        width = widths.get(Path(m.group(2).split("?")[0]).name)
        if width is None or "style=" in m.group(0):
            return m.group(0)
        img = (f'<img{m.group(1)}src="{m.group(2)}" style="min-width: {width}px"'
               f'{m.group(3)}>')
        return CUE.format(src=m.group(2)) + f'<div class="hca-figure-scroll">{img}</div>'

    context["body"] = _IMG.sub(fix, body)


_TEX_COMMAND = re.compile(r"\\(?:[A-Za-z]+|.)")


def _plain_tex(tex: str) -> str:
    """Inline TeX as plain words for alt text: ``S_{\\text{inv}}`` -> ``S_inv``."""
    return re.sub(r"[{}$]", "", _TEX_COMMAND.sub("", tex)).strip()


def alt_text(caption: str, limit: int = ALT_MAX_CHARS) -> str:
    """Alt text from a caption's plain text: whitespace collapsed, the whole caption when it
    has at most ``limit`` characters, else its first whole sentences up to ``limit``; when
    those are under half of ``limit`` ("Domain sizes."), the next sentence follows, cut at a
    word and ended with "…" (so is a first sentence longer than ``limit``)."""
    text = " ".join(caption.split())
    if len(text) <= limit:
        return text
    out, rest = "", ""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z(\"“])", text)
    for sentence in sentences:
        if out and len(out) + 1 + len(sentence) > limit:
            rest = sentence
            break
        out = f"{out} {sentence}".strip()
    if rest and len(out) < limit // 2:
        out = f"{out} {rest}"
    if len(out) > limit:
        out = out[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return out


def _caption_text(figure: nodes.figure) -> str:
    caption = next(iter(figure.findall(nodes.caption)), None)
    if caption is None:
        return ""
    copy = caption.deepcopy()
    for math in list(copy.findall(nodes.math)):
        math.replace_self(nodes.Text(_plain_tex(math.astext())))
    return copy.astext()


_FILE_NAME = re.compile(r"(^|/)[^/\s]+\.(?:svg|png|jpe?g|gif|pdf)$", re.I)


def add_alt_texts(figure: nodes.figure) -> None:
    """Alt text from the caption on every image of ``figure`` that has none, or only a file
    name; "(part k of n)" added when the figure has several images."""
    images = list(figure.findall(nodes.image))
    text = alt_text(_caption_text(figure))
    if not text:
        return
    for k, image in enumerate(images, start=1):
        given = image.get("alt", "")
        if given and not _FILE_NAME.search(given.strip()):
            continue
        image["alt"] = text if len(images) == 1 else f"{text} (part {k} of {len(images)})"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "figure"


def _image_source(app: Sphinx, image: nodes.image) -> Path | None:
    """Absolute path of a local image (after Sphinx's image collector ran), else None."""
    uri = image.get("candidates", {}).get("*") or image.get("uri", "")
    if not uri or "://" in uri or uri.startswith("data:"):
        return None
    path = Path(uri)
    if not path.is_absolute():
        path = Path(app.srcdir) / uri
    return path if path.is_file() else None


def _same_bytes(a: Path, b: Path) -> bool:
    if not b.is_file():
        return False
    return hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()


def _export(app: Sphinx, source: Path, target_stem: Path) -> list[tuple[str, Path]]:
    """Copy ``source`` next to ``target_stem`` (and convert an SVG to PDF); return the files."""
    target_stem.parent.mkdir(parents=True, exist_ok=True)
    ext = source.suffix.lower()
    copy = target_stem.with_suffix(ext)
    files = [(ext.lstrip(".").upper(), copy)]
    fresh = _same_bytes(source, copy)
    if not fresh:
        shutil.copyfile(source, copy)
    if ext == ".svg":
        pdf = target_stem.with_suffix(".pdf")
        if not (fresh and pdf.is_file()):
            _queue_pdf(app, (str(source), str(pdf)))  # converted while the build goes on
        files.append(("PDF", pdf))
        data = _figure_csv(source)
        if data is not None:
            csv = target_stem.with_suffix(".csv")
            if not (csv.is_file() and csv.read_text(encoding="utf-8") == data):
                tmp = csv.with_name(csv.name + ".tmp")
                tmp.write_text(data, encoding="utf-8")
                tmp.replace(csv)
            files.append(("Data (CSV)", csv))
    return files


_DATA = re.compile(r'<metadata id="hca-figure-data"><!\[CDATA\[\n(.*?)\]\]></metadata>', re.S)


def _figure_csv(svg: Path) -> str | None:
    """The data the figure was drawn from, as CSV, when ``hca.plots.use_book_style`` stored it
    in the SVG (``hca.plots.style.svg_with_data``); else None."""
    match = _DATA.search(svg.read_text(encoding="utf-8", errors="replace"))
    return match.group(1) if match else None


def _queue_pdf(app: Sphinx, job: tuple[str, str]) -> None:
    """Start converting one SVG to PDF in a worker process now, so that the conversions run
    beside Sphinx writing the pages (on the second core) instead of after it."""
    from concurrent.futures import ProcessPoolExecutor

    if getattr(app, "_hca_pdf_pool", None) is None:
        app._hca_pdf_pool = ProcessPoolExecutor(max_workers=2)  # the book's machine: 2 cores
        app._hca_pdf_jobs = []
    app._hca_pdf_jobs.append(app._hca_pdf_pool.submit(_svg_to_pdf, job))


def _svg_to_pdf(job: tuple[str, str]) -> str | None:
    import cairosvg

    try:
        cairosvg.svg2pdf(url=job[0], write_to=job[1])
    except Exception as exc:  # noqa: BLE001 - reported by the caller
        hint = " (cairosvg needs the system library libcairo2)" if "cairo" in str(exc).lower() \
            else ""
        return f"{Path(job[0]).name}: {exc}{hint}"
    return None


def convert_pdfs(app: Sphinx, exc: Exception | None) -> None:
    """Wait for the PDF conversions queued by :func:`_queue_pdf` and report any that failed
    (after a failed build, cancel those not started)."""
    pool = getattr(app, "_hca_pdf_pool", None)
    if pool is None:
        return
    jobs, app._hca_pdf_pool, app._hca_pdf_jobs = app._hca_pdf_jobs, None, []
    if exc is not None:
        pool.shutdown(wait=True, cancel_futures=True)
        return
    errors = [e for e in (job.result() for job in jobs) if e]
    pool.shutdown(wait=True)
    for err in errors:
        logger.warning(f"hca_book: could not convert a figure to PDF: {err}")


def _links_paragraph(page_uri: str, outdir: Path, files: list[tuple[str, Path]],
                     anchor: str | None) -> nodes.paragraph:
    para = nodes.paragraph(classes=[LINK_CLASS])
    para += nodes.Text("Download: ")
    items: list[nodes.Node] = []
    for label, path in files:
        rel = path.relative_to(outdir).as_posix()
        ref = nodes.reference("", label, refuri=relative_uri(page_uri, rel), internal=False,
                              classes=["figure-download"])
        items.append(ref)
    if anchor:
        items.append(nodes.reference("", "Link to this figure", refuri=f"#{anchor}",
                                     internal=True, classes=["figure-permalink"]))
    for i, item in enumerate(items):
        if i:
            para += nodes.Text(" · ")
        para += item
    return para


def add_figure_links(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if getattr(app.builder, "format", "") != "html":
        return
    outdir = Path(app.outdir)
    page_uri = app.builder.get_target_uri(docname)
    page_dir = outdir / FIGURE_DIR / _safe(docname)
    for number, figure in enumerate(doctree.findall(nodes.figure), start=1):
        add_alt_texts(figure)
        images = [img for img in figure.findall(nodes.image)]
        anchor = figure["ids"][0] if figure["ids"] else None
        stem = _safe(anchor) if anchor else f"figure-{number}"
        files: list[tuple[str, Path]] = []
        for k, image in enumerate(images, start=1):
            source = _image_source(app, image)
            if source is None:
                continue
            _remember_min_width(app, source)
            suffix = "" if len(images) == 1 else f"-{k}"
            try:
                exported = _export(app, source, page_dir / f"{stem}{suffix}")
            except Exception as exc:  # noqa: BLE001 - report which figure failed, then go on
                hint = (" (cairosvg needs the system library libcairo2: apt-get install "
                        "libcairo2)" if "cairo" in str(exc).lower() else "")
                logger.warning(f"hca_book: could not export figure {stem} of {docname} "
                               f"({source.name}): {exc}{hint}", location=figure)
                continue
            if suffix:
                exported = [(f"{label} {k}", path) for label, path in exported]
            files.extend(exported)
        if not files and not anchor:
            continue
        para = _links_paragraph(page_uri, outdir, files, anchor)
        legends = [child for child in figure.children if isinstance(child, nodes.legend)]
        if legends:
            legends[-1] += para
        else:
            figure += nodes.legend("", para)


def setup(app: Sphinx) -> None:
    app.connect("doctree-resolved", add_figure_links)
    app.connect("html-page-context", add_min_widths)
    app.connect("build-finished", convert_pdfs)
