"""The one agent-spec parser: every entry point refuses what it does not understand alike."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from agents.registry import make_agent, resolve
from agents.spec import AgentSpec
from agents.tournament import TournamentConfig, make_plan, run_tournament
from mtrain_env.mexican_train import GameConfig
from training.app import main
from training.checks import ConfigError, check_agent
from training.evaluate import evaluate_agent

#: malformed specs: syntax, unknown names, unknown knobs, wrong types, the harness's seed,
#: values out of range, missing files
MALFORMED = [
    "mc[sims=8", "mc]", "[sims=8]", "mc[sims]", "mc[=8]", "mc[sims=8,]", "mc[,]",
    "mc[sims=8,sims=9]", "mc[sims=8][z=2]", "", " ", "mc sims", "mc[sims=8]x", "mc[[sims=8]]",
    "nosuch", "nosuch[sims=1]", "MC", "agents.nosuch:X", "agents.registry:make_agent", "json:loads",
    "mc[nosuchknob=1]", "planner[sims=8]", "random[depth=2]", "greedy[x=1]", "ismcts[foo=bar]",
    "champion[nope=1]", "oracle[x=1]",
    "mc[sims=abc]", "mc[sims=1.5]", "mc[sims=true]", 'mc[sims="8"]', "mc[threads=abc]", "mc[z=abc]",
    "mc[ms=abc]", "ismcts[sims=abc]", "champion[sims=abc]", "mc[depth=x]", "mc[extend=x]",
    "mc[rollouts=abc]", "ppo[deterministic=maybe]",
    "mc[seed=1]", "planner[seed=3]",
    "mc[sims=-1]", "mc[sims=0]", "mc[threads=0]", "mc[threads=1000]", "ismcts[sims=0]", "champion[sims=-5]",
    "ppo[path=my_model.zip]", "ppo[path=/nonexistent/x.npz]", "champion[path=missing.npz]",
]  # fmt: skip


def python_refusal(spec: str) -> str:
    with pytest.raises(ValueError) as info:
        run_tournament(TournamentConfig(agents=[spec, "planner"], deals=1, progress=False, plots=False))
    return str(info.value)


def cli_refusal(spec: str, out: Path) -> tuple[int, str]:
    err = io.StringIO()
    argv = ["bench", "--agents", spec, "planner", "--deals", "1", "--out", str(out), "--no-progress"]
    with contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue().strip()


def test_fifty_malformed_specs() -> None:
    assert len(set(MALFORMED)) == len(MALFORMED) >= 50


@pytest.mark.parametrize("spec", MALFORMED)
def test_python_api_and_cli_refuse_alike(spec: str, tmp_path: Path) -> None:
    message = python_refusal(spec)
    code, stderr = cli_refusal(spec, tmp_path / "out")
    assert code == 2
    assert stderr == f"mtrain bench: --agents: {message}"
    assert not (tmp_path / "out").exists()  # refused before anything was written


@pytest.mark.parametrize("spec", ["mc[sims=abc]", "mc[nosuchknob=1]", "ppo[path=my_model.zip]"])
def test_every_entry_point_refuses_what_the_harness_refuses(spec: str) -> None:
    message = python_refusal(spec)
    with pytest.raises(ValueError):
        make_agent(spec, seed=0).check_game(GameConfig())  # a policy file is read for a table
    with pytest.raises(ValueError, match=r"sims|nosuchknob|no policy file"):
        evaluate_agent(spec, "planner", deals=1, seed=0)
    with pytest.raises(ConfigError) as info:
        check_agent("opponents", spec, GameConfig())
    assert message.split(": ")[-1] in str(info.value)


def test_spec_text_and_parts_are_one_spec() -> None:
    assert AgentSpec("mc[sims=64,z=2]") == AgentSpec("mc", {"sims": 64, "z": 2})
    assert AgentSpec(" mc [sims=64] ").name == "mc"
    assert AgentSpec("mc[sims=64]").default_label() == "mc[sims=64]"
    assert AgentSpec.of("planner") == AgentSpec("planner")
    with pytest.raises(ValueError, match="gives sims twice"):
        AgentSpec("mc[sims=8]", {"sims": 9})
    with pytest.raises(ValueError, match="must be a spec string, an AgentSpec or an agent"):
        AgentSpec.of(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be a string"):
        AgentSpec(None)  # type: ignore[arg-type]


def test_the_spec_text_plays_its_parameters() -> None:
    plan = make_plan(TournamentConfig(agents=["mc[sims=8]", "planner"], deals=1, progress=False, plots=False))
    assert plan.names == ("mc", "planner")
    assert plan.params[0] == {"sims": 8}
    assert plan.agent_params[0]["rollouts"] == 8  # what the agent reports it plays with
    assert plan.labels[0] == "mc[sims=8]"
    cls, params = resolve("mc[sims=8]", params={"z": 2.0})
    assert cls.name == "mc" and params == {"sims": 8, "z": 2.0}
