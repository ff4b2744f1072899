"""JupyterLab shows a chapter's prose as the book does (called by scripts/check_rerun.sh).

A reader opens an executed chapter in JupyterLab and runs it (Run > Run All Cells); jupyterlab-
myst then renders the markdown cells and evaluates their inline expressions in the kernel:
numbers, ``{eval}`text(G, "name:fmt")```, and cross-references, ``{eval}`R.numref("fig-x")```,
``R.ref``, ``R.doc``, ``R.md`` (scripts/convert_lab_refs.py). This script does just that in
headless Chromium (Playwright, the browser of tests_browser) against a running JupyterLab and
checks, for each notebook given:

1. its markdown has no role JupyterLab cannot show: ``{glue:...}`` (the key would show instead
   of the number), ``{numref}``, ``{ref}``, ``{doc}`` (convert them with
   scripts/convert_lab_refs.py);
2. after Run All, the first inline expression of a glued number reads, after the three words
   before it, the value the executed notebook glued under its name, formatted as the book does;
3. every inline expression of the markdown is rendered (as many as the notebook has), and no
   rendered markdown shows jupyterlab-myst's warning marks ("Cross Reference Not Found", an
   expression's error) or unrendered markup (``{eval}``, ``{glue``, ``text(G, "...")``: an
   expression not evaluated shows as its code). Citations (``{cite:p}``) are not converted: JupyterLab shows their key
   marked "Citation Not Found"; they are counted and printed, not failed.

    python scripts/check_lab_numbers.py URL TOKEN build/run/01_data.ipynb [more.ipynb ...]

JupyterLab must run with windowing off (check_rerun.sh sets ``windowingMode: none`` in a
settings folder of its own), so that every cell is in the page. Exit status 0 when every
notebook passes, 1 (with what the page shows) otherwise.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

EVAL = re.compile(r"""\{eval\}`text\(\s*\w+\s*,\s*["']([^"':]+)(?::([^"']*))?["']\s*\)`""")
ANY_EVAL = re.compile(r"\{eval\}`([^`]+)`")
#: Roles JupyterLab (jupyterlab-myst) cannot render as the book does.
RAW_ROLE = re.compile(r"\{(?:glue(?::\w+)?|numref|ref|doc)\}`[^`]*`")
#: Unrendered markup in the rendered text, or an expression's error ("KeyError: ...").
RAW_TEXT = re.compile(r"\{eval\}|\{glue|\btext\(\s*\w+\s*,\s*[\"']|\b[A-Z]\w*(?:Error|Exception): ")
CHROMIUM = os.environ.get("HCA_CHROMIUM", "/usr/bin/chromium")

#: What the rendered markdown shows: its text (without the cells' editors), jupyterlab-myst's
#: warning marks (a yellow span titled with the problem) and the inline expressions rendered
#: from their result (an expression not evaluated yet shows as its code instead).
_READ = """() => {
  // the notebook in view (Lab may keep a notebook opened before in a hidden tab)
  const panel = [...document.querySelectorAll('.jp-NotebookPanel')]
    .find((p) => !p.classList.contains('lm-mod-hidden') && p.getClientRects().length);
  const cells = panel ? [...panel.querySelectorAll('.jp-Notebook .jp-MarkdownCell')] : [];
  const rendered = cells.map((cell) => {
    const c = cell.cloneNode(true);
    c.querySelectorAll('.jp-InputArea-editor, .cm-editor').forEach((e) => e.remove());
    return c;
  });
  return {
    cells: cells.length,
    text: rendered.map((c) => c.textContent).join('\\n'),
    marks: rendered.flatMap((c) => [...c.querySelectorAll('span.text-yellow-600[title]')]
      .map((s) => ({title: s.getAttribute('title'), text: s.textContent.trim().slice(0, 80)}))),
    expressions: rendered.reduce((n, c) => n
      + c.querySelectorAll('.myst-RenderedExpression').length, 0),
    code: rendered.flatMap((c) => [...c.querySelectorAll('code')].map((e) => e.textContent)),
  };
}"""


def glued_values(nb: dict) -> dict[str, str]:
    """The text/plain of every value the executed notebook glued (myst-nb's ``glue``)."""
    out = {}
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            book = o.get("metadata", {}).get("scrapbook", {})
            key = book.get("mime_prefix", "") + "text/plain"
            if book.get("name") and key in o.get("data", {}):
                text = o["data"][key]
                out[book["name"]] = "".join(text) if isinstance(text, list) else text
    return out


def markdown_sources(nb: dict) -> list[str]:
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb["cells"] if c["cell_type"] == "markdown"]


def raw_roles(nb: dict) -> list[str]:
    """The roles of the notebook's markdown that JupyterLab cannot show as the book does."""
    return [m.group(0) for src in markdown_sources(nb) for m in RAW_ROLE.finditer(src)]


#: A glued text that is a number as the page shows it.
NUMBER = re.compile(r"[-+−]?\d[\d,]*(?:\.\d+)?%?")


def first_expression(nb: dict, glued: dict[str, str]) -> tuple[list[str], str, str]:
    """(the three words before it, the glue name, the text the book shows) of the first inline
    expression whose value is a glued number (or a number glued as its text)."""
    import ast

    for src in markdown_sources(nb):
        for m in EVAL.finditer(src):
            name, fmt = m.group(1), m.group(2) or ""
            if name not in glued:
                continue
            try:
                value = ast.literal_eval(glued[name])
            except (ValueError, SyntaxError):  # not a number (e.g. glued markdown)
                continue
            before = re.sub(r"\{\w+\}`[^`]*`", " ", src[: m.start()]).split()[-3:]
            if any("$" in w for w in before):  # Lab shows math as KaTeX, not as its source
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool) and before:
                return before, name, format(value, fmt)
            # a number glued as the text the page shows ("3,913", "0.91"), as chapters do
            # whose numbers are written with hca.paper.words
            if isinstance(value, str) and NUMBER.fullmatch(value) and not fmt and before:
                return before, name, value
    raise SystemExit("check_lab_numbers: no {eval}`text(G, ...)` of a glued number in the prose")


def problems_shown(shown: dict, expressions: list[str]) -> tuple[list[str], list[str]]:
    """(problems, notes) of what the page shows after Run All, for a notebook whose markdown
    has the inline ``expressions``."""
    problems, citations = [], []
    unevaluated = sorted(set(shown["code"]) & set(expressions))
    problems += [f"not evaluated (shown as code): {e}" for e in unevaluated[:10]]
    for mark in shown["marks"]:
        if mark["title"] == "Citation Not Found":
            citations.append(mark["text"])
        else:
            problems.append(f"marked {mark['title']!r}: {mark['text']!r}")
    for m in RAW_TEXT.finditer(shown["text"]):
        problems.append(f"unrendered: {shown['text'][max(0, m.start() - 40): m.end() + 40]!r}")
    if shown["expressions"] != len(expressions):
        problems.append(f"{shown['expressions']} of the {len(expressions)} inline "
                        "expressions rendered")
    notes = [f"{len(citations)} citations show their key ({', '.join(sorted(set(citations)))})"
             ] if citations else []
    return problems, notes


def check(page, url: str, token: str, path: str) -> bool:
    """Open ``path`` in JupyterLab, run it, and print what is wrong; True when nothing is."""
    nb = json.load(open(path, encoding="utf-8"))
    name = os.path.basename(path)
    raw = raw_roles(nb)
    expressions = [e for src in markdown_sources(nb) for e in ANY_EVAL.findall(src)]
    expected = len(expressions)
    before, glue_name, value = first_expression(nb, glued_values(nb))
    print(f"check_lab_numbers: {name}: {expected} inline expressions; {glue_name} should read "
          f"{value!r} after {' '.join(before)!r}")
    page.goto(f"{url}/lab/tree/{path}?token={token}", wait_until="load")
    # the visible notebook's cells (those of notebooks opened before stay in hidden tabs)
    page.wait_for_selector(".jp-Notebook .jp-Cell >> visible=true", timeout=120_000)
    # The kernel is up: the status bar names it as idle (the toolbar's indicator reads 'idle'
    # before any kernel is attached, and jupyterlab-myst drops the expressions of a markdown
    # cell run while the notebook has no kernel yet).
    page.wait_for_function("""() => /\\|\\s*Idle/.test(
        document.querySelector('.jp-StatusBar-Widget, #jp-main-statusbar')?.textContent
        ?? '')""", timeout=180_000)

    def run_all() -> None:
        for dialog in page.locator(".jp-Dialog").all():  # e.g. a notice about the file
            print(f"check_lab_numbers: {name}: JupyterLab asks: {dialog.inner_text()!r}; "
                  "dismissed")
            page.keyboard.press("Escape")
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_text("Run All Cells", exact=True).click()

    idle = """() => /\\|\\s*Idle/.test(document.querySelector('.jp-StatusBar-Widget, '
        + '#jp-main-statusbar')?.textContent ?? '')"""
    run_all()
    runs, changed = 1, time.time()
    pattern = re.compile(r"\s*".join(map(re.escape, before + [value])))
    deadline = time.time() + 600
    shown: dict = {"text": "", "marks": [], "expressions": 0, "code": []}
    while time.time() < deadline:
        time.sleep(2)
        last, shown = shown, page.evaluate(_READ)
        if pattern.search(" ".join(shown["text"].split())) and shown["expressions"] >= expected:
            break
        if shown["expressions"] != last["expressions"]:
            changed = time.time()
        # Run All renders a markdown cell as soon as it is reached, while the code cells before
        # it may still be queued: an expression can miss its value. As a reader would, run all
        # again once the kernel is idle and nothing has changed for 20 s (at most three runs).
        elif time.time() - changed > 20 and runs < 3 and page.evaluate(idle):
            run_all()
            runs, changed = runs + 1, time.time()
            print(f"check_lab_numbers: {name}: {shown['expressions']} of {expected} expressions "
                  "shown and the kernel idle; Run All Cells again")
    problems, notes = problems_shown(shown, expressions)
    problems = [f"raw role in the markdown: {r}" for r in raw[:10]] + (
        [f"... and {len(raw) - 10} more raw roles"] if len(raw) > 10 else []) + problems
    text = " ".join(shown["text"].split())
    if not pattern.search(text):
        i = text.find(before[-1])
        problems.append(f"{value!r} not shown after {' '.join(before)!r}; the page reads: "
                        f"{text[max(0, i - 80): i + 160]!r}")
    for note in notes:
        print(f"check_lab_numbers: {name}: note: {note}")
    if problems:
        shot = os.path.join(os.path.dirname(path) or ".", f"lab_{name.removesuffix('.ipynb')}.png")
        page.screenshot(path=shot, full_page=True)
        print(f"check_lab_numbers: {name}: {len(problems)} problems (screenshot {shot}):\n"
              + "\n".join(f"  - {p}" for p in problems[:30]))
        return False
    print(f"check_lab_numbers: {name}: JupyterLab shows {' '.join(before)} {value} (the glued "
          f"{glue_name}); all {shown['expressions']} inline expressions rendered, no raw role, "
          "no warning mark")
    return True


def main(url: str, token: str, paths: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            ok = [check(page, url, token, path) for path in paths]
        finally:
            browser.close()
    return 0 if all(ok) else 1


if __name__ == "__main__":
    if len(sys.argv) < 4:
        raise SystemExit("usage: check_lab_numbers.py URL TOKEN NOTEBOOK.ipynb [NOTEBOOK.ipynb ...]")
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
