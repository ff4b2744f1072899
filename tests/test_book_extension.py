"""Helpers of the book's Sphinx extension (book/_ext/hca_book) that need no Sphinx build: a
figure's minimum width on a phone and the cue above it, its alt text from the caption, the
downloads' ``download`` attribute, the interactive table's caption, the ``{eval}`` expression
forms."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import pytest

matplotlib.use("agg")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))

pytest.importorskip("myst_nb")
from hca_book import downloads, figures, inline, tables  # noqa: E402


def _svg(width_in: float, font_pt: float = 9.0) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width_in, 2))
    ax.set_title("t", fontsize=font_pt)
    ax.tick_params(labelsize=font_pt)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format="svg")
    plt.close(fig)
    return buf.getvalue()


def test_min_width_keeps_the_smallest_text_at_8_5_px():
    # 8 in = 768 px wide with 9 pt (12 px) text: 8.5 px at 768 * 8.5 / 12 = 544 px
    assert figures.svg_min_width(_svg(8)) == pytest.approx(544, abs=1)
    assert figures.svg_min_width(_svg(4)) == pytest.approx(272, abs=1)
    # larger text, smaller minimum; a hand-written SVG with attributes (px, font-size="14")
    assert figures.svg_min_width(_svg(8, font_pt=18)) < 544
    hand = ('<svg xmlns="http://www.w3.org/2000/svg" width="670" height="248" '
            'viewBox="0 0 670 248"><text font-size="14">a</text><text font-size="16">b</text>'
            '</svg>')
    assert figures.svg_min_width(hand) == pytest.approx(670 * 8.5 / 14, abs=1)
    assert figures.svg_min_width("<svg><text>no size</text></svg>") is None


def test_min_width_goes_on_the_figure_images_only():
    app = SimpleNamespace(_hca_min_width={"a.svg": 544})
    ctx = {"body": '<img alt="x" src="../_images/a.svg" /><img src="../_images/b.svg" />'}
    figures.add_min_widths(app, "p", "t", ctx, None)
    cue = figures.CUE.format(src="../_images/a.svg")
    assert ctx["body"] == (cue + '<div class="hca-figure-scroll"><img alt="x" '
                           'src="../_images/a.svg" style="min-width: 544px" /></div>'
                           '<img src="../_images/b.svg" />')
    # the cue links the figure's own SVG, in a new tab, and is not a download
    assert 'href="../_images/a.svg" target="_blank"' in cue and "download" not in cue
    figures.add_min_widths(app, "p", "t", ctx, None)  # a second pass changes nothing
    assert ctx["body"].count("hca-figure-scroll") == 1


def test_alt_text_from_the_caption():
    short = "Paper Figure 2a: the  variance\nexplained by each component."
    assert figures.alt_text(short) == "Paper Figure 2a: the variance explained by each component."
    long = ("Paper Figure 4 reproduced under both setups. " + "Left: the causal graph of "
            "each domain, with edge weights. " * 3 + "Right: the MIC of every subset.")
    alt = figures.alt_text(long, limit=120)
    assert alt.startswith("Paper Figure 4 reproduced under both setups. Left:")
    assert len(alt) <= 120 and alt.endswith(".")  # whole sentences
    one = "A caption of one sentence " + "that goes on and on " * 20 + "until it ends."
    cut = figures.alt_text(one, limit=100)
    assert len(cut) <= 100 and cut.endswith("…") and not cut.endswith(" …")
    assert figures._plain_tex(r"S_{\text{inv}}") == "S_inv"
    assert figures._plain_tex(r"\mathcal{M}_1") == "M_1"


def test_alt_text_replaces_file_names_and_keeps_given_text():
    from docutils import nodes

    def figure(*alts):
        fig = nodes.figure()
        for alt in alts:
            img = nodes.image(uri="x.svg")
            if alt is not None:
                img["alt"] = alt
            fig += img
        cap = nodes.caption()
        cap += nodes.Text("The MIC of ")
        cap += nodes.math(text=r"S_{\text{inv}}")
        cap += nodes.Text(" per subset.")
        fig += cap
        return fig

    fig = figure(None)
    figures.add_alt_texts(fig)
    assert [i["alt"] for i in fig.findall(nodes.image)] == ["The MIC of S_inv per subset."]
    fig = figure("../_images/9f3a.svg", "a hand-written description")
    figures.add_alt_texts(fig)
    assert [i["alt"] for i in fig.findall(nodes.image)] == [
        "The MIC of S_inv per subset. (part 1 of 2)", "a hand-written description"]


def test_download_links_carry_the_download_attribute():
    ctx = {"body": '<a class="hca-download reference external" href="../_data/scorecard.json">'
                   'JSON</a> <a class="reference internal" href="x.html">x</a> '
                   '<a class="figure-download reference external" '
                   'href="../_figures/p/fig-pca-spectrum.svg">SVG</a> '
                   '<a class="figure-permalink reference internal" href="#fig-pca">Link</a>'}
    downloads.add_download_attribute(None, "p", "t", ctx, None)
    assert 'download="scorecard.json" href="../_data/scorecard.json"' in ctx["body"]
    assert 'download="fig-pca-spectrum.svg" href="../_figures/p/fig-pca-spectrum.svg"' in \
        ctx["body"]
    assert ctx["body"].count("download=") == 2


def test_interactive_caption_and_eval_expression():
    html = '{"caption": "Every claim \\"quoted\\".", "classes": ["hca-numbered"]}'
    assert tables.interactive_caption(html) == 'Every claim "quoted".'
    assert tables.interactive_caption("<table></table>") is None
    m = inline.EXPRESSION.match('text(G, "v2_rows:,d")')
    assert m and m.group(2) == "v2_rows:,d"
    assert inline.EXPRESSION.match("G['v2_rows']") is None
    assert inline.EXPRESSION.match('__import__("os").system("x")') is None
