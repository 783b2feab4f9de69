"""Where each test file lives: ``tests/`` mirrors the packages, one folder per part of the code.

``FOLDERS`` names the folders and what they pin; ``FOLDER_OF`` maps the name a test file has at
``tests/`` top level to its folder (``"agents"``), or to its folder and a new name
(``"core/test_rules_edge_cases.py"``) where the old name told how the tests were found
rather than what they pin. Run from the repository root::

    python -m tests.layout             # move, then rewrite every reference
    python -m tests.layout --check     # change nothing; exit 1 if anything is left to do

It refuses to touch anything while a top-level ``tests/test_*.py`` is missing from
``FOLDER_OF`` (add it with its folder and run again). Otherwise it ``git mv``s each top-level
test file into its folder, gives every folder an ``__init__.py``, makes a moved file that
climbed from its own path (``Path(__file__).resolve().parent.parent``) use ``tests.REPO``,
and rewrites the references to moved modules across the tracked files: imports and
``module:Class`` agent paths (``tests.test_x`` -> ``tests.f.test_x``), file paths
(``tests/test_x.py`` -> ``tests/f/test_x.py``) and script runs (``python tests/test_x.py``
-> ``python -m tests.f.test_x``, which finds the ``tests`` package from the root). The
shared helpers (``conftest.py``, ``scripted.py``, ``golden/`` ...) stay at top level. Every
step looks for what it would change, so a second run changes nothing.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

#: the folders, each with what its tests pin (the folder's ``__init__.py`` docstring)
FOLDERS: dict[str, str] = {
    "core": "The rules cores (mtrain_env/mexican_train/core, mtrain_env/block/core): scripted deals, "
    "rule variants and flags, invariants, determinizers, properties and golden playthroughs.",
    "compiled": "The compiled engine (mtrain_env/mexican_train/compiled) and the batched API against "
    "the pure reference: backends, batches, kernels, rollouts, the batched planner.",
    "env": "The envs as the frameworks see them (AEC, wrappers, Gymnasium, the PettingZoo suite): "
    "codec, observation, hidden information, bad input, snapshots, rendering, determinism.",
    "tilegame": "What both games share (mtrain_env/tilegame): atomic files, JSON text, validation, "
    "the flat observation layout.",
    "openspiel": "The OpenSpiel games (mtrain_env/openspiel) against the envs and OpenSpiel's own.",
    "agents": "The agents (agents/): baselines, search, the play loop, specs and the registry, "
    "policy files and pickles, custom agents, features and networks.",
    "tournament": "The tournament harness (agents/tournament): seating, results, statistics, "
    "paired runs, evaluation, replays of a tournament.",
    "training": "Training (training/): the trainers and their CLI, runs, checkpoints and resume, "
    "self-play, vectorised envs, Ray and RLlib.",
    "replays_web": "Replays (mtrain_env/replay*), the terminal game (agents/terminal.py) and the "
    "web table (agents/web).",
    "cli": "The ``mtrain`` command line as a whole (mtrain_env/cli.py): errors, interrupts, the demo.",
    "docs": "The README, the guide and what they promise: doc commands, notebooks, install, "
    "layers, this layout.",
}

#: a top-level test file's name -> its folder, or its folder and new name
FOLDER_OF: dict[str, str] = {
    # core
    "test_rules_doubles.py": "core",
    "test_rules_opening.py": "core",
    "test_rules_scoring.py": "core",
    "test_rules_turns.py": "core",
    "test_rules_variants.py": "core",
    "test_flag_combinations.py": "core",
    "test_sample_state.py": "core",
    "test_train_orientation.py": "core",
    "test_golden.py": "core",
    "test_core_mutants.py": "core/test_rules_edge_cases.py",
    "test_core_mutants_invariants.py": "core/test_invariants.py",
    "test_block_rules.py": "core",
    "test_block_properties.py": "core",
    "test_block_sample_state.py": "core",
    "test_block_mutants.py": "core/test_block_rules_edge_cases.py",
    # compiled
    "test_backend.py": "compiled",
    "test_backend_diff.py": "compiled",
    "test_batch.py": "compiled",
    "test_batch_snapshot.py": "compiled",
    "test_batched_adapters.py": "compiled",
    "test_batched_planner.py": "compiled",
    "test_compiled_core.py": "compiled",
    "test_compiled_observation.py": "compiled",
    "test_rollout.py": "compiled",
    "test_compiled_mutants.py": "compiled/test_engine_edge_cases.py",
    "test_compiled_kernels_mutants.py": "compiled/test_kernels_edge_cases.py",
    # env
    "test_bad_actions.py": "env",
    "test_bad_input.py": "env",
    "test_codec_layout.py": "env",
    "test_determinism.py": "env",
    "test_hidden_info.py": "env",
    "test_gymnasium.py": "env",
    "test_pettingzoo_suite.py": "env",
    "test_wrappers.py": "env",
    "test_observation_reference.py": "env",
    "test_properties.py": "env",
    "test_render.py": "env",
    "test_round_result_snapshot.py": "env",
    "test_snapshot_types.py": "env",
    "test_state_dict.py": "env",
    "test_state_dict_properties.py": "env",
    "test_state_dict_validation.py": "env",
    "test_block_env.py": "env",
    "test_soak.py": "env",
    "test_bench_speed.py": "env",
    "test_env_mutants.py": "env/test_encoding_edge_cases.py",
    "test_env_mutants_rest.py": "env/test_env_edge_cases.py",
    "test_uncovered_refusals.py": "env/test_refusals.py",
    # tilegame
    "test_files.py": "tilegame",
    "test_json_text.py": "tilegame",
    "test_validate.py": "tilegame",
    "test_flat_layout.py": "tilegame",
    # openspiel
    "test_openspiel_games.py": "openspiel",
    "test_openspiel_infostates.py": "openspiel",
    "test_block_openspiel.py": "openspiel",
    # agents
    "test_agents.py": "agents",
    "test_block_agents.py": "agents",
    "test_champion.py": "agents",
    "test_compat.py": "agents",
    "test_custom.py": "agents",
    "test_sb3_model.py": "agents",
    "test_features.py": "agents",
    "test_ismcts.py": "agents",
    "test_numpy_nets.py": "agents",
    "test_openspiel_ismcts.py": "agents",
    "test_oracle.py": "agents",
    "test_pickles.py": "agents",
    "test_planner_key.py": "agents",
    "test_play.py": "agents",
    "test_policy_files.py": "agents",
    "test_policy_format.py": "agents",
    "test_spec.py": "agents",
    "test_value_leaf.py": "agents",
    "test_agents_mutants.py": "agents/test_heuristics_edge_cases.py",
    # tournament
    "test_tournament.py": "tournament",
    "test_paired.py": "tournament",
    "test_evaluate.py": "tournament",
    "test_tasks.py": "tournament",
    "test_replay_tournament.py": "tournament",
    "test_tournament_mutants.py": "tournament/test_harness_edge_cases.py",
    # training
    "test_training.py": "training",
    "test_train_cli.py": "training",
    "test_resume_checks.py": "training",
    "test_rllib_trainer_file.py": "training",
    "test_checks.py": "training",
    "test_selfplay_interrupt.py": "training",
    "test_selfplay_league.py": "training",
    "test_selfplay_learner.py": "training",
    "test_selfplay_bench.py": "training",
    "test_selfplay_collector.py": "training",
    "test_selfplay_ray_collect.py": "training",
    "test_selfplay_seatbook.py": "training",
    "test_vec.py": "training",
    "test_ray.py": "training",
    "test_run_files_mutants.py": "training/test_run_files.py",
    "test_readers_mutants.py": "training/test_file_readers.py",
    # replays_web
    "test_replay.py": "replays_web",
    "test_replay_view.py": "replays_web",
    "test_terminal.py": "replays_web",
    "test_web.py": "replays_web",
    "test_web_browser.py": "replays_web",
    "test_web_fuzz.py": "replays_web",
    "test_views_mutants.py": "replays_web/test_seat_views.py",
    # cli
    "test_cli_errors.py": "cli",
    "test_interrupts.py": "cli",
    "test_demo.py": "cli",
    # docs
    "test_readme.py": "docs",
    "test_docs.py": "docs",
    "test_doc_commands.py": "docs",
    "test_notebooks.py": "docs",
    "test_install.py": "docs",
    "test_layers.py": "docs",
}

#: prose that names several old files at once (no per-file rule reaches it): old -> new
PROSE: dict[str, str] = {
    "the tests it produced are the `tests/test_*_mutants.py`": (
        "the tests it produced are the `tests/*/test_*_edge_cases.py`"
    ),
}

#: files never rewritten: this map and its test name the old files on purpose
NOT_REWRITTEN = frozenset({"tests/layout.py", "tests/docs/test_layout.py"})
#: tracked files whose references are rewritten, by suffix (and a few by name)
TEXT_SUFFIXES = frozenset({".py", ".md", ".toml", ".cfg", ".ini", ".yml", ".yaml", ".txt", ".ipynb", ".cff"})
TEXT_NAMES = frozenset({"Makefile", "run"})

PACKAGE_INIT = '''"""The test suite: a folder per part of the code (tests/layout.py); shared helpers here."""

from pathlib import Path

#: the repository's root, for tests that read its files (docs, policies, the web's static files)
REPO = Path(__file__).resolve().parent.parent
'''

# a moved file's climb from its own path to the root, or to tests/
_FILE = r"Path\(__file__\)(?:\.resolve\(\))?"
_TO_ROOT = re.compile(_FILE + r"(?:\.parent\.parent|\.parents\[1\])(?![\w.\[])")
_TO_TESTS = re.compile(_FILE + r"\.parent(?=\s*/)")
_ROOT_LINE = re.compile(r"^(\w+) = REPO\n", re.MULTILINE)


def destination(name: str) -> str:
    """The path (from the repository root) that top-level ``tests/<name>`` moves to."""
    place = FOLDER_OF[name]
    folder, _, new_name = place.partition("/")
    return f"tests/{folder}/{new_name or name}"


#: a rewrite: a pattern and what a match becomes
Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]


def _rules() -> list[Rule]:
    """The reference rewrites, from the map: script runs first, then modules and paths (one
    pattern of every old name each, so a file is scanned three times, not three per name)."""
    new_path = {name.removesuffix(".py"): destination(name).removesuffix(".py") for name in FOLDER_OF}
    stems = "|".join(re.escape(stem) for stem in sorted(new_path, key=len, reverse=True))

    def module(stem: str) -> str:
        return new_path[stem].replace("/", ".")

    return [
        (
            re.compile(rf"(?<![\w.])(python3?) tests/({stems})\.py\b"),
            lambda m: f"{m.group(1)} -m {module(m.group(2))}",
        ),
        (re.compile(rf"(?<![\w.])tests\.({stems})(?!\w)"), lambda m: module(m.group(1))),
        (re.compile(rf"(?<![\w.])tests/({stems})(?!\w)"), lambda m: new_path[m.group(1)]),
    ]


def rewrite(text: str, rules: list[Rule]) -> str:
    """``text`` with every reference to an old test module or file pointing at its new place."""
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    for old, new in PROSE.items():
        text = text.replace(old, new)
    return text


def unmapped(root: Path) -> list[str]:
    """The top-level test files ``FOLDER_OF`` does not place."""
    return sorted(p.name for p in (root / "tests").glob("test_*.py") if p.name not in FOLDER_OF)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _text_files(root: Path, leave: frozenset[str]) -> list[str]:
    """The tracked text files whose references may be rewritten."""
    files = []
    for rel in _git(root, "ls-files", "-z").split("\0"):
        path = Path(rel)
        if not rel or rel in NOT_REWRITTEN or rel in leave or rel.startswith("tests/golden/"):
            continue
        if (path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES) and (root / rel).is_file():
            files.append(rel)
    return files


def repo_relative(text: str) -> str:
    """A moved test file's text with its climbs from ``__file__`` replaced by ``tests.REPO``."""
    new = _TO_TESTS.sub('(REPO / "tests")', _TO_ROOT.sub("REPO", text))
    if new == text:
        return text
    new = re.sub(r'\(REPO / "tests"\) /', 'REPO / "tests" /', new)
    new = _ROOT_LINE.sub(lambda m: "" if m.group(1) == "REPO" else m.group(0), new)
    if not re.search(r"^from tests import .*\bREPO\b", new, re.MULTILINE):
        new = _add_import(new, "from tests import REPO")
    return new


def _add_import(text: str, line: str) -> str:
    """``text`` with ``line`` after the last top-level import above the first definition."""
    tree = ast.parse(text)
    last = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            break
        if isinstance(node, ast.Import | ast.ImportFrom):
            last = node.end_lineno or node.lineno
    lines = text.splitlines(keepends=True)
    lines.insert(last, line + "\n")
    return "".join(lines)


def _docstring(doc: str) -> str:
    """A module made of ``doc`` as its docstring, wrapped to the house's line length."""
    lines = textwrap.wrap(doc, 96)
    return '"""' + "\n".join(lines) + ('\n"""\n' if len(lines) > 1 else '"""\n')


def _ruff(root: Path, files: list[str]) -> None:
    """Sort the imports and format the files the move touched (ruff, if installed)."""
    found = shutil.which("ruff") or shutil.which("ruff", path=str(Path(sys.executable).parent))
    if not files:
        return
    if found is None:
        print("tests/layout.py: ruff not found; run `ruff check --fix --select I,F401` and `ruff format` on:")
        print("  " + " ".join(files))
        return
    subprocess.run([found, "check", "--quiet", "--fix", "--select", "I,F401", *files], cwd=root, check=False)
    subprocess.run([found, "format", "--quiet", *files], cwd=root, check=True)
    long_lines = subprocess.run(
        [found, "check", "--select", "E501", "--output-format", "concise", *files],
        cwd=root,
        check=False,
        capture_output=True,
        text=True,
    ).stdout
    if "E501" in long_lines:
        print("tests/layout.py: a rewritten path made these lines too long; rewrap them by hand:")
        print(long_lines)


def plan(root: Path, leave: frozenset[str] = frozenset()) -> tuple[list[tuple[str, str]], list[str]]:
    """What a run would do: the moves (old, new) and the files whose text it would rewrite."""
    moves = [(f"tests/{p.name}", destination(p.name)) for p in sorted((root / "tests").glob("test_*.py"))]
    rules = _rules()
    edits = []
    for rel in _text_files(root, leave):
        text = (root / rel).read_text("utf-8")
        if rewrite(text, rules) != text:
            edits.append(rel)
    return moves, edits


def apply(root: Path, leave: frozenset[str], say: Callable[[str], None]) -> None:
    """Move every top-level test file to its folder and rewrite the references (see module doc)."""
    clashes = [
        new for p in (root / "tests").glob("test_*.py") if (root / (new := destination(p.name))).exists()
    ]
    if clashes:
        raise SystemExit(
            "tests/layout.py: already there, refusing to overwrite: " + ", ".join(sorted(clashes))
        )
    init = root / "tests" / "__init__.py"
    if not re.search(r"^REPO = ", init.read_text("utf-8") if init.exists() else "", re.MULTILINE):
        old = init.read_text("utf-8").strip() if init.exists() else ""
        init.write_text(PACKAGE_INIT + (f"\n{old}\n" if old else ""), encoding="utf-8")
        _git(root, "add", "tests/__init__.py")
        say("tests/__init__.py: REPO, the repository's root")
    for folder, doc in FOLDERS.items():
        folder_init = root / "tests" / folder / "__init__.py"
        if not folder_init.exists():
            folder_init.parent.mkdir(exist_ok=True)
            folder_init.write_text(_docstring(doc), encoding="utf-8")
            _git(root, "add", str(folder_init.relative_to(root)))
    touched: list[str] = []
    for path in sorted((root / "tests").glob("test_*.py")):
        old, new = f"tests/{path.name}", destination(path.name)
        _git(root, "mv", old, new)
        text = (root / new).read_text("utf-8")
        fixed = repo_relative(text)
        if fixed != text:
            (root / new).write_text(fixed, encoding="utf-8")
        touched.append(new)
        say(f"{old} -> {new}")
    rules = _rules()
    for rel in _text_files(root, leave):
        text = (root / rel).read_text("utf-8")
        new_text = rewrite(text, rules)
        if new_text != text:
            (root / rel).write_text(new_text, encoding="utf-8")
            say(f"{rel}: references rewritten")
            touched.append(rel)
    changed = sorted(set(touched))
    _ruff(root, [rel for rel in changed if rel.endswith(".py")])
    if changed:
        _git(root, "add", "--", *changed)


def main(argv: list[str] | None = None) -> int:
    """Run the move (or, with ``--check``, only report what is left to do)."""
    parser = argparse.ArgumentParser(prog="python -m tests.layout", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if anything is left to do"
    )
    parser.add_argument(
        "--leave",
        action="append",
        default=[],
        metavar="PATH",
        help="a tracked file not to rewrite (repeatable)",
    )
    args = parser.parse_args(argv)
    root = Path(_git(Path.cwd(), "rev-parse", "--show-toplevel").strip())
    missing = unmapped(root)
    if missing:
        print(
            "tests/layout.py: no folder in FOLDER_OF for (add each, then run again): "
            + ", ".join(f"tests/{name}" for name in missing),
            file=sys.stderr,
        )
        return 2
    leave = frozenset(args.leave)
    if args.check:
        moves, edits = plan(root, leave)
        for old, new in moves:
            print(f"to move: {old} -> {new}")
        for rel in edits:
            print(f"to rewrite: {rel}")
        return 1 if moves or edits else 0
    apply(root, leave, print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
