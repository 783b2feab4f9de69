"""The site's sources hold together (``make docs`` builds them with ``--strict``).

* every page of ``docs/`` is in the nav, and every ``::: module`` names a module of the
  project (once); the guide, the research record and the API reference are its sections;
* every other file of ``docs/`` (pictures, CSV) is used by a page or the README;
* the build fetches nothing: no web fonts, and the README page's links stay inside the site
  (the other pages link the README page, not the repository file);
* Sphinx roles in docstrings become optional cross-references.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests import REPO

ROOT = REPO
DOCS = ROOT / "docs"
CONFIG = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def _hooks() -> ModuleType:
    pytest.importorskip("mkdocs", reason="the docs extra")
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _directives() -> dict[str, str]:
    """``module -> page`` for every ``::: module`` of the API pages."""
    found: dict[str, str] = {}
    for page in sorted(DOCS.rglob("*.md")):
        for name in re.findall(r"^::: ([\w.]+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE):
            assert name not in found, f"{name} is documented twice ({found[name]}, {page.name})"
            found[name] = page.name
    return found


def _source(module: str) -> Path:
    path = ROOT / module.replace(".", "/")
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def test_every_page_is_in_the_nav_and_every_directive_names_a_module() -> None:
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")} | {"readme.md"}
    nav = set(re.findall(r"^\s+- [^:]+: (\S+\.md)$", CONFIG, flags=re.MULTILINE))
    assert nav == pages
    directives = _directives()
    assert len(directives) >= 40
    for module in directives:
        assert _source(module).is_file(), f"::: {module}: no such module"


def test_the_nav_has_the_guide_the_research_record_and_the_api_reference() -> None:
    sections = re.findall(r"^  - ([^:]+):", CONFIG.split("\nnav:\n")[1], flags=re.MULTILINE)
    assert sections == ["Home", "README", "Guide", "The research record", "API reference"]
    guide = CONFIG.split("  - Guide:")[1].split("\n  - ")[0]
    for page in ("install", "env", "variants", "agents", "tournaments", "training", "replays", "ecosystem",
                 "benchmarks", "architecture", "contributing"):  # fmt: skip
        assert f": {page}.md" in guide, page
    api = CONFIG.split("  - API reference:")[1]
    pages = sorted(p.relative_to(DOCS).as_posix() for p in (DOCS / "api").glob("*.md"))
    assert sorted(re.findall(r"(api/\S+\.md)", api)) == pages


def _used_files() -> set[str]:
    """The files of ``docs/`` (relative to it) that a page of ``docs/`` or the README names."""
    texts = [p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md")]
    texts.append((ROOT / "README.md").read_text(encoding="utf-8").replace("](docs/", "]("))
    named: set[str] = set()
    for text in texts:
        named |= set(re.findall(r"\]\(([^)#\s]+)", text))
    return named


def test_every_file_of_docs_is_used_by_a_page() -> None:
    files = {
        p.relative_to(DOCS).as_posix()
        for p in DOCS.rglob("*")
        if p.is_file() and p.suffix not in (".md", ".py") and "__pycache__" not in p.parts
    }
    assert files  # pictures and the ladder's CSV
    used = {name.removeprefix("../") for name in _used_files()}
    assert sorted(files - used) == []


def test_the_used_files_check_sees_a_link() -> None:
    used = _used_files()
    assert "table.png" in used and "img/web_play.png" in used and "ladder.csv" in used


def test_the_build_is_strict_and_fetches_no_font() -> None:
    assert re.search(r"^strict: true$", CONFIG, flags=re.MULTILINE)
    assert re.search(r"^  font: false", CONFIG, flags=re.MULTILINE)
    assert re.search(r"^  anchors: warn", CONFIG, flags=re.MULTILINE)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test: .*\bdocs\b", makefile, flags=re.MULTILINE)
    assert "mkdocs build --strict" in makefile
    mkdocs = next(line for line in makefile.splitlines() if "mkdocs build" in line)
    assert "--quiet" not in mkdocs and " -q" not in mkdocs  # quiet drops the warnings strict counts
    assert "site/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_the_readme_page_keeps_its_links_inside_the_site() -> None:
    text = _hooks().readme_page()
    assert "](docs/" not in text and "](RULES.md)" in text and "](img/web_play.png)" in text
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        assert target.startswith(("http://", "https://")) or (DOCS / target).is_file(), target
    assert "the license text (`LICENSE` in the repository)" in text  # a repository file


def test_sphinx_roles_become_optional_cross_references() -> None:
    hooks = _hooks()
    html = "see :class:<code>~agents.base.BaseAgent</code> and :meth:<code>reset()</code>, not <code>x</code>"
    assert hooks.on_page_content(html) == (
        'see <autoref identifier="agents.base.BaseAgent" optional><code>BaseAgent</code></autoref> and '
        '<autoref identifier="reset" optional><code>reset</code></autoref>, not <code>x</code>'
    )


def test_the_docs_pages_link_the_readme_page_not_the_repository_file() -> None:
    hooks = _hooks()

    class _File:
        def __init__(self, src_uri: str) -> None:
            self.src_uri = src_uri

    class _Page:
        def __init__(self, src_uri: str) -> None:
            self.file = _File(src_uri)

    text = (DOCS / "training.md").read_text(encoding="utf-8")
    assert "](../README.md#quick-start)" in text  # right on GitHub
    page = hooks.on_page_markdown(text, page=_Page("training.md"))
    assert "../README.md" not in page and "](readme.md#quick-start)" in page
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page):
        assert (
            target.startswith(("http://", "https://")) or target == "readme.md" or (DOCS / target).is_file()
        ), target
    readme = "see [x](../README.md)"
    assert hooks.on_page_markdown(readme, page=_Page("readme.md")) == readme
