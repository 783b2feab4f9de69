"""MkDocs hooks: the README as a page, and Sphinx roles in docstrings shown as code.

* ``on_files``: the repository's README becomes ``readme.md`` (links into ``docs/`` made
  relative to the site, links to other repository files shown as their path), so the
  home page links its sections and the README stays the one source.
* ``on_page_markdown``: a page of ``docs/`` links the README as ``../README.md`` (right on
  GitHub); on the site that page is ``readme.md``.
* ``on_page_content``: the docstrings are written for Sphinx (``:class:`~a.b.C```);
  rendered by Markdown that is ``:class:<code>~a.b.C</code>``, turned into an optional
  cross-reference that mkdocs-autorefs makes a link to ``a.b.C``'s entry where the site
  documents it, and leaves as ``<code>C</code>`` where not (no warning either way).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
_ROLE = re.compile(r":(?:class|mod|func|meth|attr|data|exc|obj|const|ref|py:\w+):<code>(~?)([^<]+)</code>")
_REPO_LINK = re.compile(r"\[([^\]]+)\]\((?!https?://|#|docs/)([^)]+)\)")


def readme_page() -> str:
    """The README with links that work from the site's ``readme/`` page."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    text = _REPO_LINK.sub(lambda m: f"{m[1]} (`{m[2]}` in the repository)", text)
    return text.replace("](docs/", "](")


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "readme.md", content=readme_page()))
    return files


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri == "readme.md":
        return markdown
    return markdown.replace("](../README.md", "](readme.md")


def _role(match: re.Match[str]) -> str:
    target = match[2].rstrip("()")
    title = target.rsplit(".", 1)[-1] if match[1] else target
    return f'<autoref identifier="{target}" optional><code>{title}</code></autoref>'


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub(_role, html)
