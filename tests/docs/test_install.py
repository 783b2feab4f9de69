"""Install paths: ``pip install -e .`` is the env alone, the extras are declared, a missing extra is named.

* (default run) ``pip install -e .`` of a copy of the project into a fresh venv installs the
  core dependencies only (no torch, no numba, no SB3, no OpenSpiel); there both games pass
  PettingZoo's ``api_test``, ``gymnasium.make("mtrain_env/MexicanTrain-v0")`` plays, and the
  commands that need OpenSpiel stop with one line naming the ``openspiel`` extra;
* (slow) a regular, non-editable ``pip install`` of the copy plays too, carries its license
  and its ``py.typed`` markers (a user's mypy reads the packages' annotations);
* the declared extras are the documented ones, and ``[all]`` names every other.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from mtrain_env.tilegame import extras
from tests.isolated import ROOT, run_script
from training.app import main as mtrain

PACKAGES = ("mtrain_env", "agents", "training")
#: the core dependencies (``pip install -e .``) and the extras, by distribution name
CORE = {"numpy", "gymnasium", "pettingzoo", "pillow", "tqdm"}
EXTRAS = {"train", "fast", "openspiel", "rllib", "web", "docs", "dev", "all"}
#: never installed by the core: the heavy or optional top-level modules
NOT_IN_CORE = ("torch", "numba", "stable_baselines3", "sb3_contrib", "pyspiel", "tensorboard", "matplotlib")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def _copy_project(dest: Path) -> Path:
    """The installable part of this checkout (packages, pyproject, README, LICENSE) under ``dest``."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__", "*.pt"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, dest)
    return dest


def _fresh_venv(path: Path) -> str:
    """A venv with no package at all (no pip either: this interpreter's pip installs into it)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    return str(path / "bin" / "python")


def _pip_install(python: str, *args: str) -> None:
    """``pip install`` into ``python``'s venv, from the configured indexes (a local one here)."""
    cmd = [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "SetuptoolsDeprecationWarning" not in proc.stdout + proc.stderr


def test_the_core_dependencies_and_the_extras_are_the_documented_ones() -> None:
    project = _pyproject()["project"]
    assert {_name(r) for r in project["dependencies"]} == CORE
    extras_table = project["optional-dependencies"]
    assert set(extras_table) == EXTRAS
    assert {_name(r) for r in extras_table["train"]} >= {"torch", "stable-baselines3", "sb3-contrib"}
    assert [_name(r) for r in extras_table["openspiel"]] == ["open-spiel"]
    assert [_name(r) for r in extras_table["fast"]] == ["numba", "threadpoolctl"]
    assert {_name(r) for r in extras_table["docs"]} >= {"mkdocs", "mkdocs-material", "mkdocstrings"}
    assert "open-spiel" not in {_name(r) for r in extras_table["train"]}
    (everything,) = extras_table["all"]
    assert everything == f"mtrain_env[{','.join(e for e in extras_table if e != 'all')}]"


#: run inside the fresh venv: what is installed, and both games through their API tests
_CORE_VENV = """
import importlib.metadata as md
import importlib.util
import json
import sys
import warnings

import gymnasium
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import mtrain_env

result = {"file": mtrain_env.__file__, "prefix": sys.prefix}
result["found"] = [m for m in sys.argv[1].split(",") if importlib.util.find_spec(m) is not None]
result["distributions"] = sorted(d.metadata["Name"].lower() for d in md.distributions())
result["extras"] = sorted(md.metadata("mtrain_env").get_all("Provides-Extra"))
api_test(mtrain_env.env(num_players=3, max_pips=6), num_cycles=200)
api_test(mtrain_env.block_dominoes_env(), num_cycles=200)
env = gymnasium.make("mtrain_env/MexicanTrain-v0", opponents=["planner", "greedy"], num_players=3, max_pips=6)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the checker's random actions are illegal: reported as warnings
    check_env(env.unwrapped, skip_render_check=True)
obs, info = env.reset(seed=0)
done = False
while not done:
    action = int(env.get_wrapper_attr("action_masks")().nonzero()[0][-1])
    obs, reward, terminated, truncated, info = env.step(action)
    done = terminated or truncated
result["episode_done"] = done
result["loaded"] = sorted({m.partition(".")[0] for m in sys.modules} & set(sys.argv[1].split(",")))
print(json.dumps(result))
"""


def test_pip_install_e_gives_the_env_alone_in_a_fresh_venv(tmp_path: Path) -> None:
    source = _copy_project(tmp_path / "src")
    python = _fresh_venv(tmp_path / "venv")
    _pip_install(python, "-e", str(source))
    result = run_script(_CORE_VENV, ",".join(NOT_IN_CORE), python=python, checkout=False)
    assert result["file"] == str(source / "mtrain_env" / "__init__.py")  # the editable copy
    assert result["found"] == [] and result["loaded"] == []
    assert {"torch", "numba", "stable-baselines3", "open-spiel"}.isdisjoint(result["distributions"])
    assert set(result["distributions"]) >= CORE
    assert set(result["extras"]) == EXTRAS
    assert result["episode_done"] is True
    # the commands that need OpenSpiel say so in one line, and exit 2
    for module in ("mtrain_env.bench_speed",):
        proc = subprocess.run(
            [python, "-m", module], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 2, proc.stderr
        assert "pyspiel, which is not installed (install the `openspiel` extra" in proc.stderr
        assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_the_package_installs_and_plays_with_the_core_dependencies_only(tmp_path: Path) -> None:
    """A regular (non-editable) ``pip install`` of a copy: wheel contents, license, play."""
    source = _copy_project(tmp_path / "src")
    python = _fresh_venv(tmp_path / "venv")
    _pip_install(python, str(source))
    result = run_script(_CORE_VENV, ",".join(NOT_IN_CORE), python=python, checkout=False)
    assert result["file"].startswith(result["prefix"])  # the installed copy
    assert result["found"] == [] and result["episode_done"] is True
    license_query = "import importlib.metadata as m, json; "
    license_query += (
        "d = m.distribution('mtrain_env'); text = [f.read_text() for f in d.files if f.name == 'LICENSE']; "
    )
    license_query += "print(json.dumps({'license': d.metadata['License-Expression'], 'text': text}))"
    shipped = run_script(license_query, python=python, checkout=False)
    assert shipped == {"license": "MIT", "text": [(ROOT / "LICENSE").read_text()]}  # its text in the wheel
    # PEP 561: a user's mypy, pointed at that venv, reads the installed packages' annotations
    user = tmp_path / "user.py"
    user.write_text(
        "import mtrain_env\nfrom agents.registry import make_agent\n"
        "reveal_type(mtrain_env.raw_env)\nreveal_type(make_agent)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--python-executable", python, "--no-incremental", str(user)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "import-not-found" not in proc.stdout and "import-untyped" not in proc.stdout, proc.stdout
    assert 'Revealed type is "Any"' not in proc.stdout and proc.stdout.count("Revealed type is") == 2


def test_mtrain_names_the_missing_openspiel_extra_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    command = "bench-speed"
    monkeypatch.setitem(extras.EXTRA_MODULES, "openspiel", "no_such_module_for_the_test")
    assert mtrain(["dev", command]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtrain dev {command}: ") and err.count("\n") == 1
    assert "install the `openspiel` extra: pip install 'mtrain_env[openspiel]'" in err


def test_the_citation_file_names_this_version_and_license() -> None:
    """``CITATION.cff`` (GitHub's "Cite this repository") cites the version and license
    that ``pyproject.toml`` declares, with the fields CFF 1.2.0 requires."""
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    project = _pyproject()["project"]
    assert {"cff-version", "message", "title", "authors"} <= set(cff) and cff["cff-version"] == "1.2.0"
    assert all(isinstance(a, dict) and ("name" in a or "family-names" in a) for a in cff["authors"])
    assert (cff["version"], cff["license"]) == (project["version"], project["license"])
