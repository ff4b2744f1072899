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
    short_first = "Domain sizes. " + "The models of each base model, " * 10 + "counted."
    alt = figures.alt_text(short_first, limit=100)
    assert alt.startswith("Domain sizes. The models of each base model,") and alt.endswith("…")
    assert len(alt) <= 100
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


# ---------------------------------------------------------------------------------------------
# Cross-references JupyterLab shows too: the kernel's side (hca.paper.glue.References), the
# book's side (the eval role's R.numref / R.ref / R.doc / R.md forms) and the conversion script.

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import convert_lab_refs  # noqa: E402

_CHAPTER = '''---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Recovering the hierarchy

Opening: see {numref}`fig-b`, {ref}`why-differ`, {doc}`01_data` and {doc}`the data <01_data>`.

```{code-cell} ipython3
:tags: [hide-input]
%matplotlib inline
import numpy as np
from hca.paper.glue import (
    Glued,
    text,
)
G = Glued()
G.markdown("answer", "As {numref}`fig-a` shows; see {ref}`why-differ`.")
```

{eval}`text(G, "answer")` and {eval}`text(G, "n:,d")`.

```{code-cell} ipython3
---
mystnb:
  figure:
    caption: |
      A caption that says {numref}`fig-b`.
    name: fig-a
---
plot()
```

```{code-cell} ipython3
---
tags: [remove-output]
mystnb:
  figure:
    name: fig-hidden
---
plot()
```

(why-differ)=
## Why the setups differ

```{figure} ../pipeline.svg
:alt: a drawing
:name: fig-b

The pipeline.
```
'''


def _pages(tmp_path: Path) -> Path:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "03_hca_recovery.md").write_text(_CHAPTER, encoding="utf-8")
    (folder / "01_data.md").write_text("# The data\n\n(data-provenance)=\n### Provenance\n",
                                       encoding="utf-8")
    return folder


def test_references_read_as_the_book_does(tmp_path):
    from hca.paper.glue import References

    folder = _pages(tmp_path)
    R = References("03_hca_recovery", folder)
    # figures numbered by chapter and place; a cell whose output is removed shows no figure
    assert R.numref("fig-a").value == "Figure 3.1" and R.numref("fig-b").value == "Figure 3.2"
    assert R.ref("why-differ").value == "Why the setups differ"  # text: Lab has no such link
    assert R.ref("the cause <why-differ>").value == "the cause"
    assert R.ref("data-provenance").value == "Provenance"  # on another page: its title, as text
    assert R.doc("01_data").value == "[The data](01_data.md)"
    assert R.doc("the data <01_data>").value == "[the data](01_data.md)"
    assert R.doc("/notebooks/01_data").value == "[The data](01_data.md)"
    G = {"answer": "As {numref}`fig-a` shows; see {ref}`why-differ` and {doc}`01_data`."}
    assert R.md(G, "answer").value == ("As Figure 3.1 shows; see Why the setups differ"
                                       " and [The data](01_data.md).")
    with pytest.raises(KeyError, match="fig-hidden"):
        R.numref("fig-hidden")
    # a page that is not there (a downloaded notebook): its name or the given text, unlinked
    assert R.doc("02_latent_pca").value == "02_latent_pca"
    assert R.doc("the PCA <02_latent_pca>").value == "the PCA"
    with pytest.raises(KeyError, match="no page '04_x'"):
        References("04_x", folder).numref("fig-a")
    # the same from the downloaded notebook (.ipynb, no .md beside it)
    import jupytext

    (folder / "03_hca_recovery.md").rename(tmp_path / "moved.md")
    jupytext.write(jupytext.read(tmp_path / "moved.md"), folder / "03_hca_recovery.ipynb")
    R = References("03_hca_recovery", folder)
    assert (R.numref("fig-a").value, R.numref("fig-b").value) == ("Figure 3.1", "Figure 3.2")


def test_eval_reference_forms():
    m = inline.REFERENCE.match('R.numref("fig-recovery-fig4-authors")')
    assert m and (m.group(1), m.group(3)) == ("numref", "fig-recovery-fig4-authors")
    m = inline.REFERENCE.match("R.doc('the \"scorecard\" <09_scorecard>')")
    assert m and m.group(3) == 'the "scorecard" <09_scorecard>'
    assert inline.MARKDOWN.match('R.md(ANSWER, "answer")').group(2) == "answer"
    for bad in ('R.cite("x")', 'R.numref(x)', 'os.system("x")', 'R.numref("a") + 1'):
        assert not inline.REFERENCE.match(bad) and not inline.MARKDOWN.match(bad), bad


def test_convert_lab_refs_rewrites_the_prose_only_and_is_idempotent():
    out = convert_lab_refs.convert(_CHAPTER, "03_hca_recovery")
    assert ('Opening: see {eval}`R.numref("fig-b")`, {eval}`R.ref("why-differ")`, '
            '{eval}`R.doc("01_data")` and {eval}`R.doc("the data <01_data>")`.') in out
    assert '{eval}`R.md(G, "answer")` and {eval}`text(G, "n:,d")`.' in out
    # code cells and their metadata (captions, glued markdown) are left as they are
    assert "A caption that says {numref}`fig-b`." in out
    assert 'G.markdown("answer", "As {numref}`fig-a` shows; see {ref}`why-differ`.")' in out
    # R is defined once, right after the first cell's imports (a parenthesised import included)
    assert out.count("R = References(") == 1
    cell = out[out.index("```{code-cell}"):]
    assert cell.index("    text,\n)\nfrom hca.paper.glue import References") > 0
    assert cell.index('R = References("03_hca_recovery")\nG = Glued()') > 0
    assert convert_lab_refs.convert(out, "03_hca_recovery") == out  # idempotent
    intro = convert_lab_refs.convert(_CHAPTER, "intro", "I")
    assert 'R = References("intro", number="I")' in intro
    nothing = "# A page\n\nNo roles; {eval}`text(G, \"n\")`.\n"
    assert convert_lab_refs.convert(nothing, "x") == nothing
    with pytest.raises(ValueError, match="no code cell"):
        convert_lab_refs.convert("# A page\n\nSee {doc}`01_data`.\n", "x")


def test_convert_lab_refs_command(tmp_path, capsys):
    page = tmp_path / "03_hca_recovery.md"
    page.write_text(_CHAPTER, encoding="utf-8")
    assert convert_lab_refs.main(["--check", str(page)]) == 1
    assert page.read_text(encoding="utf-8") == _CHAPTER  # --check writes nothing
    assert convert_lab_refs.main([str(page)]) == 0
    assert convert_lab_refs.main(["--check", str(page)]) == 0
    assert "would convert" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        convert_lab_refs.main([str(tmp_path / "missing.md")])


@pytest.mark.slow
def test_eval_references_render_as_the_roles_they_replace(tmp_path):
    """A small Sphinx build with the book's eval role: the paragraph of R.numref / R.ref /
    R.doc forms is, in HTML, the paragraph of the roles {numref}, {ref}, {doc}."""
    import re

    from sphinx.cmd.build import build_main

    src = tmp_path / "src"
    src.mkdir()
    ext = Path(__file__).resolve().parents[1] / "book" / "_ext"
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ext)!r})\n"
        "from hca_book import inline\n"
        "extensions = ['myst_nb']\nnumfig = True\nnumfig_secnum_depth = 1\n"
        "nb_execution_mode = 'off'\nexclude_patterns = ['_build']\n"
        "def setup(app):\n    inline.setup(app)\n", encoding="utf-8")
    (src / "index.md").write_text("# Book\n\n```{toctree}\n:numbered:\npage\nother\n```\n",
                                  encoding="utf-8")
    (src / "other.md").write_text("# The other page\n\nText.\n", encoding="utf-8")
    (src / "fig.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="10" '
                                 'height="10"></svg>', encoding="utf-8")
    (src / "page.md").write_text(
        "# A page\n\n```{figure} fig.svg\n:name: fig-a\n\nA figure.\n```\n\n"
        "(sec-b)=\n## Section B\n\n"
        "ROLES {numref}`fig-a` / {ref}`sec-b` / {ref}`words <sec-b>` / {doc}`other` / "
        "{doc}`Other <other>`.\n\n"
        "EVAL {eval}`R.numref(\"fig-a\")` / {eval}`R.ref(\"sec-b\")` / "
        "{eval}`R.ref(\"words <sec-b>\")` / {eval}`R.doc(\"other\")` / "
        "{eval}`R.doc(\"Other <other>\")`.\n", encoding="utf-8")
    out = tmp_path / "html"
    assert build_main(["-b", "html", "-q", "-W", str(src), str(out)]) == 0
    html = (out / "page.html").read_text(encoding="utf-8")
    paragraphs = {m[1]: m[2] for m in re.finditer(r"<p>(ROLES|EVAL) (.*?)</p>", html, re.S)}
    assert set(paragraphs) == {"ROLES", "EVAL"}, html[:2000]
    assert paragraphs["EVAL"] == paragraphs["ROLES"]
    assert "Fig. 1.1" in paragraphs["EVAL"] and "Section B" in paragraphs["EVAL"]
    assert "The other page" in paragraphs["EVAL"] and ">Other<" in paragraphs["EVAL"]
