"""The command lines and Python blocks the docs quote still work.

Every ``mtrain ...``, ``python -m <module of mtrain_env, agents or training> ...`` and
``make <target>`` quoted in README.md, the guide's pages (docs/*.md), training/README.md
(and agents/policies/README.md when it exists), in code fences and in inline code spans, is
parsed by the real argparse parser of its command without running it:

* ``mtrain``: :func:`training.app.build_parser` (the parser ``mtrain`` itself uses);
* ``python -m MODULE``: each module builds its parser inside ``main(argv)`` and calls
  ``parser.parse_args(argv)`` first thing, so ``main`` is called with
  ``ArgumentParser.parse_args`` patched to stop (raise :class:`_Parsed`) right after the
  parse: nothing past the parse runs (no training, tournament, Ray or network);
* ``make``: the target is a rule of the Makefile.

Every ``python`` code block of those files runs, each in a fresh interpreter in an empty
directory (:func:`test_python_block_runs`); a block that imports a package of
:data:`NOT_INSTALLED` is skipped while that package is missing, with the reason shown.

The research record (:data:`RESEARCH`, docs/research.md) is not API: its commands are "as of
commit X" and are neither parsed nor run (:func:`test_the_research_record_is_not_run`).

A command is taken as quoted: a ``$ `` prompt stripped, backslash-continued lines joined,
the shell tail (``|``, ``&&``, ``;``, ``>``, ``2>``, ``&``, a ``#`` comment) cut off, and
leading ``VAR=value`` / ``time`` dropped. Templates (``...``, ``<dir>``, ``[--seed S]``) are
skipped (:func:`skip_reason`), and so is a case whose only refusal is of a placeholder value
(``--decisions N``: :func:`placeholder`). An inline span may name a command without its
required options (``mtrain bench``) or end with an option (``mtrain bench --save-replays``);
a fenced command must be complete. A fenced command followed by the error line it gets
(``mtrain train: --net-arch: ...``) must be refused with exactly that line, if the parser
refuses it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, NoReturn
from unittest import mock

import pytest

from tests import REPO

ROOT = REPO

#: the research record: commands "as of commit X", not API, so never parsed or run here
RESEARCH = "docs/research.md"

#: the markdown files whose commands are checked (agents/policies/README.md when it exists)
DOC_FILES: tuple[str, ...] = tuple(
    name
    for name in (
        "README.md",
        *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")),
        "training/README.md",
        "agents/policies/README.md",
    )
    if (ROOT / name).is_file() and name != RESEARCH
)

#: packages a guide example uses that no extra of pyproject.toml installs: a block importing
#: one is skipped while it is missing (and runs once it is installed)
NOT_INSTALLED: dict[str, str] = {
    "tianshou": "tianshou is in no extra of pyproject.toml (pip install tianshou)",
    "torchrl": "torchrl is in no extra of pyproject.toml (pip install torchrl)",
}

#: ``python -m`` modules of these packages are checked; others (pytest, pip, tests.*) are not ours
PACKAGES = ("mtrain_env", "agents", "training")
#: the developer checks of tests/ that the contributing guide quotes, checked as the packages are
TOOLS = ("tests.env.soak", "tests.compiled.backend_diff", "tests.openspiel.block_crosscheck")

#: shell tokens after which the rest of a line is not the command's argv
SHELL_STOPS = frozenset({"|", "||", "&", "&&", ";", "<", "<<"})
SHELL_STOP_PREFIXES = (">", "1>", "2>", "&>", "|")

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
SHELL_FENCES = frozenset({"", "bash", "sh", "shell", "console", "text"})
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", flags=re.DOTALL)


@dataclass(frozen=True)
class DocCommand:
    """One command line quoted in a markdown file."""

    file: str  #: relative to the repository
    line: int  #: 1-based line where it starts
    text: str  #: normalised: prompt, continuations and shell tail removed
    argv: tuple[str, ...]  #: the program's arguments (after ``mtrain``, ``python -m M``, ``make``)
    program: str  #: ``mtrain``, ``python -m MODULE`` or ``make``
    inline: bool  #: from an inline code span (else a code fence): may name a command, not run one
    raw: str  #: as quoted (prompt stripped, continuations joined)
    shown_error: str | None = None  #: the error the fence shows right after it (``mtrain X: ...``)


def _words(text: str) -> list[str]:
    """Shell words of ``text`` up to the first shell operator; a ``#`` comment removed."""
    words: list[str] = []
    for word in shlex.split(re.sub(r"(^|\s)#.*$", "", text)):
        if word in SHELL_STOPS or word.startswith(SHELL_STOP_PREFIXES):
            break
        if word.endswith(";"):  # "cmd; next"
            words.append(word[:-1])
            break
        words.append(word)
    return words


def _command(raw: str) -> tuple[str, tuple[str, ...]] | None:
    """``(program, argv)`` of a quoted line, or None if it is not an mtrain / python -m / make
    command (or not a shell line at all: unbalanced quotes)."""
    try:
        words = _words(raw)
    except ValueError:  # shlex: no closing quotation — prose or output, not a command line
        return None
    while words and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]) or words[0] in ("time", "env", "nohup")):
        words = words[1:]
    if not words:
        return None
    name = words[0].rsplit("/", 1)[-1]
    if name == "mtrain":
        program, argv = "mtrain", words[1:]
    elif re.fullmatch(r"python(3(\.\d+)?)?", name) and len(words) >= 3 and words[1] == "-m":
        program, argv = f"python -m {words[2]}", words[3:]
    elif words[0] == "make":
        program, argv = "make", words[1:]
    else:
        return None
    if argv and argv[0].endswith(":"):  # output, e.g. "mtrain train: --steps: required"
        return None
    return program, tuple(argv)


def _fenced(lines: list[str]) -> Iterator[tuple[int, str, str]]:
    """``(index, raw line, the line after it)`` of the shell lines of one fence's content (in a
    block with ``$`` prompts only the prompted lines; backslash continuations joined)."""
    prompted = any(line.lstrip().startswith("$ ") for line in lines)
    i = 0
    while i < len(lines):
        start, line = i, lines[i].strip()
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        after = lines[i].strip() if i < len(lines) else ""
        if line.startswith("$ "):
            yield start, line[2:].strip(), after
        elif not prompted:
            yield start, line, after


def _inline(lines: list[str]) -> Iterator[tuple[int, str]]:
    """``(index, span text)`` of the inline code spans of prose lines (a span may wrap)."""
    para: list[str] = []
    first = 0
    for index, line in enumerate([*lines, ""]):
        if line.strip():
            if not para:
                first = index
            para.append(line)
            continue
        text = "\n".join(para)
        for match in CODE_SPAN.finditer(text):
            span = " ".join(match.group(2).split())
            if span.startswith("$ "):
                span = span[2:]
            yield first + text.count("\n", 0, match.start()), span
        para = []


def _shown_error(program: str, argv: Sequence[str], after: str) -> str | None:
    """``after`` if it is the one-line error of ``program`` (``mtrain bench: ...``, ``mtrain
    replay check: ...``, ``python -m M: ...``, ``M: ...`` or ``M's last name: ...``), else None."""
    if program == "mtrain":
        shown = bool(argv) and re.match(rf"mtrain {re.escape(argv[0])}( [\w-]+)?: ", after) is not None
    elif program.startswith("python -m "):
        module = program.split()[-1]
        shown = after.startswith((f"{program}: ", f"{module}: ", f"{module.rsplit('.', 1)[-1]}: "))
    else:
        shown = False
    return after if shown else None


def extract(file: str, text: str) -> list[DocCommand]:
    """Every mtrain / python -m / make command quoted in the markdown ``text`` of ``file``."""
    lines = text.splitlines()
    found: list[tuple[int, str, bool, str]] = []
    prose: list[str] = []  # the lines outside fences (fence lines blank), for the inline spans
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            prose.append(lines[i])
            i += 1
            continue
        marker, language = opening.group(2), opening.group(3).lower()
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(marker):
            end += 1
        if language in SHELL_FENCES:
            found += [(i + 1 + k, raw, False, after) for k, raw, after in _fenced(lines[i + 1 : end])]
        prose += [""] * (end + 1 - i)  # a fence ends the paragraph before it
        i = end + 1
    found += [(k, raw, True, "") for k, raw in _inline(prose)]
    commands = []
    for index, raw, inline, after in sorted(found):
        parsed = _command(raw)
        if parsed is not None:
            program, argv = parsed
            norm = " ".join([program, *(shlex.quote(a) for a in argv)])
            shown = _shown_error(program, argv, after)
            commands.append(DocCommand(file, index + 1, norm, argv, program, inline, raw, shown))
    return commands


@cache
def doc_commands() -> tuple[DocCommand, ...]:
    """The commands of every file of :data:`DOC_FILES`."""
    return tuple(c for f in DOC_FILES for c in extract(f, (ROOT / f).read_text(encoding="utf-8")))


def skip_reason(command: DocCommand) -> str | None:
    """Why ``command`` is not checked, or None.

    A quoted command holding ``...`` (or ``…``: "and so on"), ``<...>`` (a placeholder such as
    ``<dir>``) or ``[...`` (an optional part: ``[--seed S]``) is a template, not a runnable line;
    a ``python -m`` of a module outside the project's packages (pytest, pip, venv,
    tests.golden_games) is not ours to check. (Placeholder *values* such as ``N`` or ``DIR`` are
    checked: only a refusal of the placeholder itself skips the case, see :func:`placeholder`.)
    """
    words = [command.program, *command.argv]
    if any("..." in w or "…" in w for w in words):
        return "placeholder '...'"
    if any("<" in w for w in words):
        return "placeholder '<...>'"
    if any(w.startswith("[") for w in command.argv):
        return "optional part '[...]'"
    if command.program.startswith("python -m "):
        module = command.program.split()[-1]
        if module.split(".")[0] not in PACKAGES and module not in TOOLS:
            return f"{module}: not a module of {', '.join(PACKAGES)}"
    return None


def placeholder(command: DocCommand, refused: str) -> str | None:
    """The placeholder value of ``command`` (``N``, ``DIR``, ``NAME``, a lone ``k``) that
    ``refused`` (a parser error) names, or None: a type or choice the placeholder cannot meet
    is the docs' template, not a stale command."""
    for word in command.argv:
        if re.fullmatch(r"[A-Z][A-Z0-9_]*|[a-z]", word) and re.search(rf"(got |')\b{word}\b'?", refused):
            return word
    return None


class _Parsed(BaseException):
    """Raised by the patched ``parse_args`` once the command line is parsed: main() stops there.
    A BaseException, so that no ``except Exception`` in a main() can swallow it."""


def _relax(parser: argparse.ArgumentParser) -> None:
    """Nothing required of ``parser`` and its subcommands' parsers (for a fragment)."""
    for action in parser._actions:
        action.required = False
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _relax(child)


@cache
def _mtrain_parser(fragment: bool) -> argparse.ArgumentParser:
    """The ``mtrain`` parser (built once: parsing leaves it unchanged), relaxed for fragments."""
    from training.app import build_parser

    parser = build_parser()
    if fragment:
        _relax(parser)
    return parser


def _stop_after_parse(original: Callable[..., argparse.Namespace], fragment: bool) -> Callable[..., NoReturn]:
    """``ArgumentParser.parse_args`` that parses (a relaxed parser for a fragment), then raises
    :class:`_Parsed`."""

    def parse_args(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        if fragment:
            _relax(self)
        original(self, *args, **kwargs)
        raise _Parsed

    return parse_args


def _parse_with_main(module: str, argv: list[str], fragment: bool) -> None:
    """Run ``module.main(argv)`` (``python -m module``) up to its parse; raises :class:`_Parsed`
    (accepted) or SystemExit (refused)."""
    main: Callable[[list[str]], object] = importlib.import_module(module).main
    original = argparse.ArgumentParser.parse_args
    with mock.patch.object(argparse.ArgumentParser, "parse_args", _stop_after_parse(original, fragment)):
        main(argv)
    raise AssertionError(f"python -m {module}: main() returned without parsing its command line")


@cache
def _make_targets() -> frozenset[str]:
    """The rules of the Makefile."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return frozenset(re.findall(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", text, flags=re.MULTILINE))


def refusal(program: str, argv: Sequence[str], fragment: bool = False) -> str | None:
    """Why the parser of ``program`` (``mtrain``, ``python -m MODULE``, ``make``) refuses
    ``argv`` (its one-line error), or None if it accepts it. Nothing past the parse runs.

    A ``fragment`` (an inline span naming a command or option, ``mtrain bench --game block``)
    need not give the required arguments, and may end with an option without its value.
    """
    if program == "make":
        missing = [t for t in argv if not t.startswith("-") and "=" not in t and t not in _make_targets()]
        return f"no Makefile target {', '.join(missing)}" if missing else None
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            module = program.split()[-1]
            if program == "mtrain":
                _mtrain_parser(fragment).parse_args(list(argv))
            else:
                _parse_with_main(module, list(argv), fragment)
        except _Parsed:
            return None
        except SystemExit as exit_:
            if exit_.code in (0, None):  # --help
                return None
            message = err.getvalue().strip() or f"exit status {exit_.code}"
            last = argv[-1] if argv else ""
            if (
                fragment
                and last.startswith("-")
                and re.search(rf"{re.escape(last)}: expected .*argument", message)
            ):
                return None  # the span names the option (known: argparse wants its value)
            return message
    return None


def _cases() -> list[Any]:
    """One pytest case per checked command, id ``file:line: command``."""
    cases = []
    for command in doc_commands():
        if skip_reason(command) is not None:
            continue
        cases.append(pytest.param(command, id=f"{command.file}:{command.line}: {command.text}"))
    return cases


def _mtrain_commands() -> frozenset[str]:
    """The commands of the ``mtrain`` parser (``demo``, ``bench``, ...)."""
    parser = _mtrain_parser(False)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return frozenset(sub.choices)


def pending(command: DocCommand) -> str | None:
    """Why ``command`` cannot be checked on this checkout yet, or None: the guide writes the
    developer tools as ``mtrain dev TOOL``; until the parser has ``dev``, those are skipped
    (with this reason), and checked as soon as it has."""
    if command.program == "mtrain" and command.argv[:1] == ("dev",) and "dev" not in _mtrain_commands():
        return "mtrain dev: not a command of this checkout's parser yet"
    return None


@pytest.mark.parametrize("command", _cases())
def test_quoted_command_is_accepted(command: DocCommand) -> None:
    """The parser accepts the command (or refuses it with the very error the doc shows)."""
    waiting = pending(command)
    if waiting is not None:
        pytest.skip(waiting)
    refused = refusal(command.program, command.argv, fragment=command.inline)
    if refused is not None and command.shown_error is not None:
        assert refused == command.shown_error, f"the doc shows another error: {command.shown_error}"
        return
    if refused is not None and placeholder(command, refused) is not None:
        pytest.skip(f"placeholder {placeholder(command, refused)!r}: {refused}")
    assert refused is None, f"{command.file}:{command.line}: `{command.text}` is refused: {refused}"


def test_the_extraction_finds_the_commands() -> None:
    per_file = Counter(c.file for c in doc_commands())
    assert per_file["README.md"] >= 10
    guide = sum(n for f, n in per_file.items() if f.startswith("docs/"))
    assert guide >= 60 and per_file["docs/training.md"] >= 5 and per_file["docs/tournaments.md"] >= 5
    programs = Counter(c.program.split()[0] for c in doc_commands())
    assert programs["mtrain"] >= 50 and programs["python"] >= 5 and programs["make"] >= 2
    assert any(c.inline for c in doc_commands()) and any(not c.inline for c in doc_commands())
    checked = [c for c in doc_commands() if skip_reason(c) is None]
    assert len(checked) >= len(doc_commands()) // 2


def test_the_extraction_reads_prompts_continuations_and_shell_tails() -> None:
    text = (
        "Run `mtrain demo --seed 3 | less` or\n`python -m agents.tournament.paired\nruns/a runs/b`.\n\n"
        "```\n$ PYTHONPATH=. time mtrain bench --games 10 \\\n"
        "    --agents random greedy 2>/dev/null && echo ok\n"
        "2 players, output\n```\n\n```python\nmtrain = 1\n```\n\n"
        "```bash\nmake lint  # the linters\nmtrain train --steps x\nmtrain train: --steps: bad\n```\n"
    )
    found = [(c.line, c.program, c.argv, c.inline, c.shown_error) for c in extract("x.md", text)]
    assert found == [
        (1, "mtrain", ("demo", "--seed", "3"), True, None),
        (2, "python -m agents.tournament.paired", ("runs/a", "runs/b"), True, None),
        (6, "mtrain", ("bench", "--games", "10", "--agents", "random", "greedy"), False, None),
        (16, "make", ("lint",), False, None),
        (17, "mtrain", ("train", "--steps", "x"), False, "mtrain train: --steps: bad"),
    ]


def test_a_made_up_option_is_refused() -> None:
    bench = ["bench", "--agents", "random", "greedy", "--out", "runs/x"]
    assert refusal("mtrain", bench) is None
    refused = refusal("mtrain", [*bench, "--no-such-option"])
    assert refused is not None and "unrecognized arguments: --no-such-option" in refused
    assert refusal("mtrain", ["bench", "--no-such-option"]) is not None
    assert "--no-such-option" in (refusal("mtrain", ["bench", "--no-such-option"], fragment=True) or "")
    assert refusal("mtrain", ["bench"], fragment=True) is None  # a fragment need not give --agents, --out
    assert refusal("mtrain", ["bench", "--out"], fragment=True) is None  # nor its last option's value
    assert refusal("mtrain", ["no-such-command"]) is not None
    assert refusal("python -m agents.tournament.paired", ["a", "b"]) is None
    assert refusal("python -m agents.tournament.paired", ["a", "b", "--no-such-option"]) is not None
    assert refusal("python -m agents.policy_net", ["src.pt", "dst.npz"]) is None
    assert refusal("python -m agents.policy_net", ["src.pt"]) is not None  # DST missing
    assert refusal("make", ["demo", "no-such-target"]) == "no Makefile target no-such-target"


# ----------------------------------------------------------------------------- the research record
def test_the_research_record_is_not_run() -> None:
    """docs/research.md quotes commands "as of commit X": none is parsed or run here, and
    the record does quote some (so leaving it out is a real exclusion)."""
    assert RESEARCH not in DOC_FILES and (ROOT / RESEARCH).is_file()
    assert all(c.file != RESEARCH for c in doc_commands())
    assert all(block.file != RESEARCH for block in python_blocks())
    quoted = extract(RESEARCH, (ROOT / RESEARCH).read_text(encoding="utf-8"))
    assert len(quoted) >= 10
    assert re.search(r"as of commit `?[0-9a-f]{7,40}`?", (ROOT / RESEARCH).read_text(encoding="utf-8"))


def test_mtrain_dev_commands_wait_for_the_parser_only() -> None:
    """A quoted ``mtrain dev TOOL`` is skipped only while the parser has no ``dev``."""
    dev = DocCommand(
        "x.md", 1, "mtrain dev bench-speed", ("dev", "bench-speed"), "mtrain", False, "mtrain dev bench-speed"
    )
    bench = DocCommand("x.md", 1, "mtrain bench", ("bench",), "mtrain", True, "mtrain bench")
    assert pending(bench) is None
    assert (pending(dev) is None) == ("dev" in _mtrain_commands())


# ----------------------------------------------------------------------------- python blocks
@dataclass(frozen=True)
class PythonBlock:
    """One ``python`` code fence of a markdown file."""

    file: str  #: relative to the repository
    line: int  #: 1-based line of the opening fence
    code: str


def extract_python(file: str, text: str) -> list[PythonBlock]:
    """The ``python`` fences of the markdown ``text`` of ``file`` (indented fences too)."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, marker, language = opening.group(1), opening.group(2), opening.group(3).lower()
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(marker):
            end += 1
        if language in ("python", "py"):
            body = [line[len(indent) :] if line.startswith(indent) else line for line in lines[i + 1 : end]]
            blocks.append(PythonBlock(file, i + 1, "\n".join(body) + "\n"))
        i = end + 1
    return blocks


@cache
def python_blocks() -> tuple[PythonBlock, ...]:
    """The python blocks of every file of :data:`DOC_FILES`."""
    return tuple(b for f in DOC_FILES for b in extract_python(f, (ROOT / f).read_text(encoding="utf-8")))


def missing_package(code: str) -> str | None:
    """The first package of :data:`NOT_INSTALLED` that ``code`` imports and that is not
    installed, or None."""
    for name in re.findall(r"^\s*(?:import|from)\s+(\w+)", code, flags=re.MULTILINE):
        if name in NOT_INSTALLED and importlib.util.find_spec(name) is None:
            return name
    return None


def test_python_block_extraction() -> None:
    text = "x\n```python\nprint(1)\n```\n\n* item\n\n  ```python\n  import tianshou\n  ```\n"
    text += "```bash\nls\n```\n"
    blocks = extract_python("x.md", text)
    assert [(b.line, b.code) for b in blocks] == [(2, "print(1)\n"), (8, "import tianshou\n")]
    assert missing_package("import numpy\n") is None
    if importlib.util.find_spec("tianshou") is None:
        assert missing_package(blocks[1].code) == "tianshou"


def test_every_python_block_is_found() -> None:
    per_file = Counter(b.file for b in python_blocks())
    assert per_file["README.md"] >= 2 and per_file["docs/env.md"] >= 3 and per_file["docs/ecosystem.md"] >= 4


@pytest.mark.parametrize("block", [pytest.param(b, id=f"{b.file}:{b.line}") for b in python_blocks()])
def test_python_block_runs(block: PythonBlock, tmp_path: Path) -> None:
    """The block runs to the end in a fresh interpreter, in an empty directory."""
    missing = missing_package(block.code)
    if missing is not None:
        pytest.skip(f"not run: {NOT_INSTALLED[missing]}")
    script = tmp_path / "block.py"
    script.write_text(block.code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{block.file}:{block.line}: the block fails:\n{done.stderr[-3000:]}"
