"""One layered house: the import contracts hold, and the envs run without the optional extras.

* ``lint-imports`` (the contracts in ``pyproject.toml``) passes, and each contract breaks
  when an import it forbids is added (so none of them is vacuous);
* ``import mtrain_env`` and ``import agents`` never even try to import torch,
  stable-baselines3, sb3-contrib or OpenSpiel, and both games play without them;
* the ``mtrain`` program lists every layer's commands.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import REPO
from tests.isolated import BLOCK_IMPORTS, run_script
from training.app import build_parser

ROOT = REPO
PACKAGES = ("mtrain_env", "agents", "training")
#: top-level modules of the extras ``train`` and ``openspiel``: never needed to import or play the envs
OPTIONAL = ("torch", "stable_baselines3", "sb3_contrib", "pyspiel", "open_spiel")


def _contract_names() -> list[str]:
    """The contracts' names, from the ``[tool.importlinter]`` tables of ``pyproject.toml``."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    tables = re.findall(r"^\[\[?tool\.importlinter[^\n]*\n(.*?)(?=^\[)", text, flags=re.MULTILINE | re.DOTALL)
    return [name for table in tables for name in re.findall(r'^name = "(.+)"$', table, flags=re.MULTILINE)]


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the packages under ``cwd`` (no cache: tests may run in parallel)."""
    script = Path(sys.executable).with_name("lint-imports")
    if not script.exists():
        pytest.fail(f"lint-imports is not installed next to {sys.executable} (pip install import-linter)")
    env = {**os.environ, "PYTHONPATH": str(cwd), "COLUMNS": "200"}  # one summary line per contract
    return subprocess.run(
        [str(script), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _verdicts(output: str) -> dict[str, str]:
    """Contract name -> ``KEPT`` or ``BROKEN``, from lint-imports' summary lines."""
    return dict(re.findall(r"^(.+) (KEPT|BROKEN)$", output, flags=re.MULTILINE))


def test_import_contracts_are_kept() -> None:
    proc = _lint_imports(ROOT)
    names = _contract_names()
    assert len(names) >= 7
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _verdicts(proc.stdout) == dict.fromkeys(names, "KEPT")
    assert f"Contracts: {len(names)} kept, 0 broken." in proc.stdout


#: file -> (an import appended to it, the contract it breaks, how lint-imports reports it)
VIOLATIONS: dict[str, tuple[str, str, str]] = {
    "mtrain_env/tilegame/aec.py": (
        "import agents.registry",
        "training > agents > mtrain_env",
        "mtrain_env.tilegame.aec -> agents.registry",
    ),
    "mtrain_env/block/env.py": (
        "import mtrain_env.mexican_train.codec",
        "mtrain_env: entry points > games (independent) > tilegame",
        "mtrain_env.block.env -> mtrain_env.mexican_train.codec",
    ),
    "mtrain_env/tilegame/layout.py": (
        "import gymnasium",
        "pure cores import no framework",
        "mtrain_env.tilegame.layout -> gymnasium",
    ),
    "mtrain_env/block/render.py": (
        "import sb3_contrib",
        "mtrain_env imports no learning framework",
        "mtrain_env.block.render -> sb3_contrib",
    ),
    "agents/demo.py": (
        "import pyspiel",
        "OpenSpiel only in the speed benchmark and the OpenSpiel modules",
        "agents.demo -> pyspiel",
    ),
    "agents/block/simple.py": (
        "import agents.mexican_train.greedy",
        "agents: commands > tournament > game agents (independent) > shared",
        "agents.block.simple -> agents.mexican_train.greedy",
    ),
    "agents/base.py": ("import agents.registry", "no import cycles", "No cycles are allowed in agents."),
    "agents/play.py": (
        "import ray",
        "Ray only in the Ray backends and training.rllib",
        "agents.play -> ray",
    ),
    "mtrain_env/mexican_train/render.py": (
        "import ray.rllib",
        "mtrain_env never imports Ray",
        "mtrain_env.mexican_train.render -> ray",
    ),
    "training/run_dir.py": (
        "import torch",
        "training's run configurations and run files import no learning framework",
        "training.run_dir -> torch",
    ),
}


def test_every_contract_breaks_on_the_import_it_forbids(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("*.pt", "__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    assert {name for _line, name, _report in VIOLATIONS.values()} == set(_contract_names())
    for path, (line, _name, _report) in VIOLATIONS.items():
        with (tmp_path / path).open("a", encoding="utf-8") as f:
            f.write(f"\n{line}  # injected by the test\n")
    proc = _lint_imports(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _verdicts(proc.stdout) == dict.fromkeys(_contract_names(), "BROKEN")
    for _line, _name, report in VIOLATIONS.values():
        assert report in proc.stdout, proc.stdout


#: run in a subprocess: the optional extras made unimportable, then both games played
_PLAY_WITHOUT_EXTRAS = (
    BLOCK_IMPORTS
    + """
import agents
import agents.block
import mtrain_env


def play(env, players, decision_for):
    env.reset(seed=0)
    seats = dict(zip(env.possible_agents, players))
    steps = 0
    for seat in env.agent_iter():
        _obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(seats[seat].act(decision_for(env, seat)))
        steps += 1
    return steps


mexican = play(
    mtrain_env.env(num_players=3, max_pips=6),
    [agents.make_agent(name, seed=k) for k, name in enumerate(["greedy", "random", "planner"])],
    agents.decision_for,
)
block = play(
    mtrain_env.block_dominoes_env(),
    [agents.block.make_agent("classic", seed=k) for k in range(4)],
    agents.block.decision_for,
)
loaded = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
print(json.dumps({"tried": tried, "loaded": loaded, "mexican": mexican, "block": block}))
"""
)


def test_envs_and_agents_run_without_the_optional_extras() -> None:
    result = run_script(_PLAY_WITHOUT_EXTRAS, ",".join(OPTIONAL))
    assert result["tried"] == [] and result["loaded"] == []
    assert result["mexican"] > 0 and result["block"] > 0


def test_mtrain_lists_every_layers_commands_with_a_line_of_help(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    text = parser.format_help()
    commands = [
        *("demo", "bench", "benchmark", "play", "serve"),
        *("train", "selfplay", "replay", "dev"),
    ]
    listed = re.findall(r"^  (\S+)\s+\w", text.split("commands:")[1], flags=re.MULTILINE)
    assert listed == commands, text  # the user's commands; the developer tools under dev
    assert "register" not in text
    tools = ["bench-speed", "bench-selfplay"]
    for command in [[c] for c in commands] + [["dev", t] for t in tools]:
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args([*command, "--help"])
        assert exit_info.value.code == 0
        page = capsys.readouterr().out
        assert page.startswith(f"usage: mtrain {' '.join(command)} ")
        assert "``" not in page and ":mod:" not in page, page


def test_python_m_training_app_runs_the_mtrain_program() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "training.app", "--help"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: mtrain ")


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("tests.env.soak", ["--steps", "50"]),
        ("tests.openspiel.block_crosscheck", ["--hands", "5", "--players", "2"]),
        ("tests.compiled.backend_diff", ["--decisions", "50", "--quiet"]),
    ],
)
def test_the_developer_checks_run_as_python_m_from_the_root(module: str, argv: list[str]) -> None:
    """The long checks of the contributing guide run as documented, from a checkout."""
    pytest.importorskip("pyspiel" if "openspiel" in module else "numpy")
    if "compiled" in module:
        pytest.importorskip("numba")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", module, *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
