"""Tests mirror the code (tests/layout.py): every test file sits in a package folder.

* no ``test_*.py`` at ``tests/`` top level, and every test file sits one folder down, in a
  folder ``FOLDERS`` names, which is a package (``__init__.py``: pytest names its modules
  ``tests.<folder>.test_x``, the agent paths the tests hand to workers);
* ``FOLDER_OF`` places every name in a known folder and no two names on one file;
* a test file finds the repository through ``tests.REPO``, never by climbing from its own
  path (which breaks when a file moves);
* nothing in tests/ or docs/ still names a module or file at its old place, and the layout
  script's rewrite, run again, changes nothing there.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tests import REPO
from tests.layout import FOLDER_OF, FOLDERS, NOT_REWRITTEN, _rules, destination, main, rewrite, unmapped

TESTS = REPO / "tests"


def test_no_test_file_is_left_at_top_level() -> None:
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []
    assert unmapped(REPO) == []


def test_every_test_file_sits_in_a_named_package_folder() -> None:
    files = sorted(TESTS.rglob("test_*.py"))
    assert len(files) > 100, "the suite's test files were not found"
    for path in files:
        parts = path.relative_to(TESTS).parts
        assert len(parts) == 2 and parts[0] in FOLDERS, f"{path}: not in one of {sorted(FOLDERS)}"
    for folder in FOLDERS:
        assert (TESTS / folder / "__init__.py").is_file(), f"tests/{folder}: no __init__.py"


def test_the_map_places_each_name_in_a_known_folder_once() -> None:
    places = [destination(name) for name in FOLDER_OF]
    for name, place in zip(FOLDER_OF, places, strict=True):
        assert name.startswith("test_") and name.endswith(".py"), name
        assert re.fullmatch(r"tests/(\w+)/test_\w+\.py", place), f"{name}: {place}"
        assert place.split("/")[1] in FOLDERS, f"{name}: {place}"
    assert [place for place, n in Counter(places).items() if n > 1] == []


def test_test_files_find_the_repository_through_tests_repo() -> None:
    climbing = re.compile(r"__file__\)[\w.()]*\.parents?\b")
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sorted(TESTS.glob("*/test_*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if climbing.search(line)
    ]
    assert offenders == [], "use `from tests import REPO` instead of climbing from __file__"


def test_nothing_in_tests_or_docs_names_an_old_place() -> None:
    rules = _rules()
    stale = [
        str(path.relative_to(REPO))
        for folder in (TESTS, REPO / "docs")
        for path in sorted(folder.rglob("*"))
        if path.suffix in {".py", ".md"}
        and str(path.relative_to(REPO)) not in NOT_REWRITTEN
        and rewrite(text := path.read_text(encoding="utf-8"), rules) != text
    ]
    assert stale == []


def test_the_rewrite_follows_modules_paths_and_script_runs_once() -> None:
    rules = _rules()
    old = (
        'agents=["tests.test_tournament:Crashes"]\n'
        "from tests.test_core_mutants import x\n"
        "pytest tests/test_core_mutants.py::test_a\n"
        "python tests/test_readme.py; tests.scripted\n"
    )
    new = rewrite(old, rules)
    assert new == (
        'agents=["tests.tournament.test_tournament:Crashes"]\n'
        "from tests.core.test_rules_edge_cases import x\n"
        "pytest tests/core/test_rules_edge_cases.py::test_a\n"
        "python -m tests.docs.test_readme; tests.scripted\n"
    )
    assert rewrite(new, rules) == new


def test_an_unmapped_top_level_file_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("tests.layout.unmapped", lambda root: ["test_new_thing.py"])
    assert main(["--check"]) == 2
    err = capsys.readouterr().err
    assert "tests/test_new_thing.py" in err and "FOLDER_OF" in err
