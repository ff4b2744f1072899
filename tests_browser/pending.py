"""Pages not yet converted to the book's reader rules, per check: THE one list of exceptions.

Each key is a test of ``test_book.py``; its value the pages (paths in the build, as in the test
ids) on which that check is known to fail until the chapter is rewritten (issue 19: SVG figures
with legible text, collapsed setup/assert cells, tables and code within the column, captions
naming "Paper Figure N"; issue 46: the answer paragraph first on a phone). On these pages the check runs as a strict ``xfail``: it still runs,
the failure is reported as expected, and once a rewrite makes the page pass the test fails with
XPASS(strict) until the page is removed here. A chapter rewrite removes its page from every
set; the list is empty when the book is done. Never add a page to hide a new failure.

``HCA_BROWSER_IGNORE_PENDING=1`` runs every check on every page as a plain test (to list
what still fails).
"""

from __future__ import annotations

import os

# Every chapter meets every check; a page listed here again would be a regression.
PENDING: dict[str, set[str]] = {
    "test_figures_are_svg": set(),
    "test_figure_text_is_legible": set(),
    "test_figures_have_downloads": set(),
    "test_blocks_fit_the_column": set(),
    "test_setup_and_assert_cells_collapsed": set(),
    "test_captions_name_paper_figures": set(),
    "test_phone_answer_first": set(),
}


def is_pending(check: str, page: str) -> bool:
    """True when ``check`` is known to fail on ``page`` (and pending is not ignored)."""
    if os.environ.get("HCA_BROWSER_IGNORE_PENDING"):
        return False
    return page in PENDING.get(check, set())
