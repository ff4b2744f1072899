"""JupyterLab shows a chapter's glued numbers in its prose (called by scripts/check_rerun.sh).

A reader opens an executed chapter in JupyterLab and runs it (Run > Run All Cells); the prose's
inline expressions ``{eval}`text(G, "name:fmt")``` are evaluated by jupyterlab-myst in the
kernel and shown as the formatted number, the very text the book shows for
``{glue:text}`name:fmt```. This script does just that in headless Chromium (Playwright, the
browser of tests_browser) against a running JupyterLab, and checks that the first inline
expression of the notebook renders the value the executed notebook glued under its name.

    python scripts/check_lab_numbers.py URL TOKEN build/run/01_data.ipynb

Exit status 0 when the number is on the page, 1 (with what the page shows) otherwise.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

EVAL = re.compile(r"""\{eval\}`text\(\s*\w+\s*,\s*["']([^"':]+)(?::([^"']*))?["']\s*\)`""")
CHROMIUM = os.environ.get("HCA_CHROMIUM", "/usr/bin/chromium")


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


def first_expression(nb: dict, glued: dict[str, str]) -> tuple[list[str], str, str]:
    """(the three words before it, the glue name, the text the book shows) of the first inline
    expression whose value is a glued number."""
    import ast

    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        src = "".join(cell["source"])
        for m in EVAL.finditer(src):
            name, fmt = m.group(1), m.group(2) or ""
            if name not in glued:
                continue
            value = ast.literal_eval(glued[name])
            before = re.sub(r"\{\w+\}`[^`]*`", " ", src[: m.start()]).split()[-3:]
            if isinstance(value, (int, float)) and not isinstance(value, bool) and before:
                return before, name, format(value, fmt)
    raise SystemExit("check_lab_numbers: no {eval}`text(G, ...)` of a glued number in the prose")


def main(url: str, token: str, path: str) -> int:
    from playwright.sync_api import sync_playwright

    nb = json.load(open(path, encoding="utf-8"))
    before, name, expected = first_expression(nb, glued_values(nb))
    print(f"check_lab_numbers: {name} should read {expected!r} after {' '.join(before)!r}")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}/lab/tree/{path}?token={token}", wait_until="load")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        # The kernel is up: the status bar names it as idle (the toolbar's indicator reads
        # 'idle' before any kernel is attached, and jupyterlab-myst drops the expressions of a
        # markdown cell run while the notebook has no kernel yet).
        page.wait_for_function("""() => /\\|\\s*Idle/.test(
            document.querySelector('.jp-StatusBar-Widget, #jp-main-statusbar')?.textContent
            ?? '')""", timeout=180_000)

        def run_all() -> None:
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_text("Run All Cells", exact=True).click()

        run_all()
        runs, last_run = 1, time.time()
        pattern = re.compile(r"\s*".join(map(re.escape, before + [expected])))
        deadline = time.time() + 600
        shown = ""
        while time.time() < deadline:
            if time.time() - last_run > 120 and runs < 3:  # a reader runs it again
                run_all()
                runs, last_run = runs + 1, time.time()
                print(f"check_lab_numbers: not shown after 120 s; Run All Cells again ({runs})")
            # the rendered markdown of the cells in the DOM (Lab keeps only the cells near the
            # view in it: back to the top first), without the cells' hidden editors (their source)
            page.evaluate("""() => document.querySelectorAll('.jp-WindowedPanel-outer')
                .forEach((e) => e.scrollTo(0, 0))""")
            time.sleep(1)
            shown = page.evaluate("""() => [...document.querySelectorAll('.jp-MarkdownCell')]
                .map((cell) => { const c = cell.cloneNode(true);
                  c.querySelectorAll('.jp-InputArea-editor, .cm-editor').forEach((e) => e.remove());
                  return c.textContent; }).join('\\n')""")
            if pattern.search(" ".join(shown.split())):
                print(f"check_lab_numbers: JupyterLab shows {' '.join(before)} {expected} "
                      f"(the glued {name})")
                browser.close()
                return 0
            time.sleep(2)
        page.screenshot(path="build/run/lab_numbers.png", full_page=True)
        errors = page.evaluate("""() => [...document.querySelectorAll(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
            .map((e) => e.textContent).join('\\n')""")
        if errors.strip():
            print("check_lab_numbers: a cell's error output in JupyterLab:\n" + errors[-1500:])
        browser.close()
    i = " ".join(shown.split()).find(before[-1])
    print(f"check_lab_numbers: {expected!r} not shown; the page reads: "
          f"{' '.join(shown.split())[max(0, i - 80): i + 160]!r} (build/run/lab_numbers.png)")
    return 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit("usage: check_lab_numbers.py URL TOKEN NOTEBOOK.ipynb")
    sys.exit(main(*sys.argv[1:]))
