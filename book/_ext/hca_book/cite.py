"""How to cite the paper and this replication, computed when the book is built.

The ``{hca-citation}`` directive takes one argument:

``replication``
    A citation of this replication: title (``_config.yml``'s ``title``), authors
    (``CITATION.cff``), version (``hca.__version__``), the git commit the book was built from and
    the repository URL, or the commit alone while the URL is empty; as text and as BibTeX, with a
    link to the completed ``CITATION.cff``.
``paper``
    The paper's BibTeX entry, read from the book's bibliography (``:key:`` option, default
    ``jin2025hierarchical``).

The repository URL is ONE setting, ``repository: url:`` in ``_config.yml``; this page and the
``CITATION.cff`` served with the book (``_build/html/CITATION.cff``: the repository's file with
``version``, ``commit`` and ``repository-code`` filled in) both read it. The repository's own
``CITATION.cff`` must not type those three fields (the build fails if it does). Pages with the
directive are re-read on every build, so the commit is never stale.
"""

from __future__ import annotations

import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.osutil import relative_uri

logger = logging.getLogger(__name__)

CFF_NAME = "CITATION.cff"
# Jupyter Book's default for `repository: url:`: seeing it means the book's setting was deleted.
_JB_DEFAULT_URL = "https://github.com/executablebooks/jupyter-book"
_COMPUTED_FIELDS = ("version", "commit", "repository-code")


@dataclass(frozen=True)
class BuildInfo:
    """What the book was built from."""

    title: str
    authors: list[dict]
    version: str
    commit: str
    dirty: bool
    year: str
    repository_url: str

    @property
    def short_commit(self) -> str:
        return self.commit[:10]

    @property
    def commit_label(self) -> str:
        return self.commit + (" (with uncommitted changes)" if self.dirty else "")


def _git(root: Path, *args: str) -> str:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                             timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def _repository_url(app: Sphinx) -> str:
    url = (app.config.html_theme_options or {}).get("repository_url") or ""
    url = str(url).strip()
    if url.rstrip("/") == _JB_DEFAULT_URL:
        logger.warning("hca_book: `repository: url:` is missing from _config.yml (Jupyter Book "
                       "filled in its own default); set it, or leave it empty (\"\")")
        return ""
    return url


def read_cff(app: Sphinx) -> dict:
    path = Path(app.confdir) / CFF_NAME
    if not path.is_file():
        logger.warning(f"hca_book: {CFF_NAME} not found next to _config.yml ({path})")
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    typed = [field for field in _COMPUTED_FIELDS if field in data]
    if typed:
        logger.warning(f"hca_book: {path} types {typed}; these are computed at build time "
                       "(hca.__version__, git, _config.yml's repository: url:), remove them")
    return data


def build_info(app: Sphinx) -> BuildInfo:
    """Version, commit and URL of this build (cached on the app for one build)."""
    cached = getattr(app, "_hca_build_info", None)
    if cached is not None:
        return cached
    import hca

    root = Path(app.confdir)
    cff = read_cff(app)
    commit = _git(root, "rev-parse", "HEAD") or "unknown"
    dirty = bool(_git(root, "status", "--porcelain", "--untracked-files=no"))
    year = _git(root, "log", "-1", "--format=%cd", "--date=format:%Y") or "n.d."
    authors = cff.get("authors") or [{"name": str(app.config.author)}]
    info = BuildInfo(title=str(cff.get("title") or app.config.project), authors=authors,
                     version=hca.__version__, commit=commit, dirty=dirty, year=year,
                     repository_url=_repository_url(app))
    app._hca_build_info = info  # type: ignore[attr-defined]
    return info


def _author_names(authors: list[dict]) -> list[str]:
    names = []
    for a in authors:
        if "name" in a:
            names.append(str(a["name"]))
        else:
            names.append(" ".join(str(a[k]) for k in ("given-names", "family-names") if k in a))
    return names


def wrap_bibtex(text: str, width: int = 72) -> str:
    """Wrap long field lines (BibTeX allows line breaks inside a value) to fit the column."""
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        out.extend(textwrap.wrap(line, width=width, subsequent_indent=indent,
                                 break_long_words=False, break_on_hyphens=False))
    return "\n".join(out)


def replication_bibtex(info: BuildInfo) -> str:
    authors = " and ".join("{" + n + "}" if "given-names" not in a else
                           f"{a.get('family-names', '')}, {a.get('given-names', '')}"
                           for a, n in zip(info.authors, _author_names(info.authors)))
    fields = [("title", "{" + info.title + "}"), ("author", authors),
              ("version", info.version), ("year", info.year),
              ("note", f"git commit {info.commit_label}")]
    if info.repository_url:
        fields.append(("url", info.repository_url))
    body = ",\n".join(f"  {k:<8}= {{{v}}}" for k, v in fields)
    return wrap_bibtex("@software{hca_replication,\n" + body + "\n}")


def paper_bibtex(app: Sphinx, key: str) -> str:
    from pybtex.database import BibliographyData, parse_file

    for bibfile in app.config.bibtex_bibfiles:
        data = parse_file(str(Path(app.srcdir) / bibfile))
        if key in data.entries:
            return wrap_bibtex(
                BibliographyData({key: data.entries[key]}).to_string("bibtex").strip())
    raise KeyError(f"no entry {key!r} in {list(app.config.bibtex_bibfiles)}")


class CitationDirective(SphinxDirective):
    required_arguments = 1
    option_spec = {"key": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        what = self.arguments[0].strip()
        self.env.hca_citation_docs.add(self.env.docname)  # re-read on every build
        if what == "paper":
            key = self.options.get("key", "jin2025hierarchical")
            try:
                bib = paper_bibtex(self.env.app, key)
            except KeyError as exc:
                raise self.error(str(exc)) from exc
            return [nodes.literal_block(bib, bib, language="bibtex")]
        if what == "replication":
            return self._replication()
        raise self.error(f"hca-citation: expected `replication` or `paper`, got {what!r}")

    def _replication(self) -> list[nodes.Node]:
        info = build_info(self.env.app)
        text = nodes.paragraph()
        text += nodes.Text(f"{', '.join(_author_names(info.authors))} ({info.year}). ")
        text += nodes.emphasis("", info.title)
        text += nodes.Text(f". Version {info.version}, built from git commit ")
        text += nodes.literal("", info.short_commit)
        text += nodes.Text(". ")
        if info.repository_url:
            text += nodes.reference("", info.repository_url, refuri=info.repository_url)
        else:
            text += nodes.Text("(The repository's URL is not published yet: cite the commit.)")
        facts = nodes.bullet_list()
        for label, value in [("hca version", info.version), ("git commit", info.commit_label),
                             ("repository", info.repository_url or "not published yet")]:
            item = nodes.list_item()
            para = nodes.paragraph()
            para += nodes.Text(f"{label}: ")
            para += nodes.literal("", value)
            item += para
            facts += item
        bib = replication_bibtex(info)
        page_uri = self.env.app.builder.get_target_uri(self.env.docname)
        cff = nodes.paragraph()
        cff += nodes.Text("Citation metadata in the Citation File Format: ")
        cff += nodes.reference("", CFF_NAME, refuri=relative_uri(page_uri, CFF_NAME))
        cff += nodes.Text(" (this build's version and commit filled in).")
        return [text, facts, nodes.literal_block(bib, bib, language="bibtex"), cff]


def write_cff(app: Sphinx, exc: Exception | None) -> None:
    """Serve the repository's CITATION.cff with version, commit and URL filled in."""
    if exc is not None or getattr(app.builder, "format", "") != "html":
        return
    data = read_cff(app)
    if not data:
        return
    info = build_info(app)
    data["version"] = info.version
    data["commit"] = info.commit
    if info.repository_url:
        data["repository-code"] = info.repository_url
    text = ("# Written by the book build from the repository's CITATION.cff, hca.__version__,\n"
            "# git and _config.yml's `repository: url:`.\n"
            + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))
    (Path(app.outdir) / CFF_NAME).write_text(text, encoding="utf-8")


def _init_env(app: Sphinx, env: Any, docnames: list[str]) -> None:
    if not hasattr(env, "hca_citation_docs"):
        env.hca_citation_docs = set()


def _outdated(app: Sphinx, env: Any, added: set, changed: set, removed: set) -> list[str]:
    docs = getattr(env, "hca_citation_docs", set())
    return sorted(d for d in docs if d in env.found_docs and d not in added | changed)


def _purge(app: Sphinx, env: Any, docname: str) -> None:
    getattr(env, "hca_citation_docs", set()).discard(docname)


def _merge(app: Sphinx, env: Any, docnames: list[str], other: Any) -> None:
    env.hca_citation_docs |= getattr(other, "hca_citation_docs", set())


def setup(app: Sphinx) -> None:
    app.add_directive("hca-citation", CitationDirective)
    app.connect("env-before-read-docs", _init_env)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", write_cff)
