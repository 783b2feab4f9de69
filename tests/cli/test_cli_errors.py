"""Every ``mtrain`` command answers a bad command line with one line and exit status 2.

(``mtrain train``'s own table of bad options is in ``tests/training/test_train_cli.py``.)
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from tests import REPO
from training.app import main

POLICIES = REPO / "agents" / "policies"
TWO_PLAYER_NET = POLICIES / "graph_2p.npz"  # a 2-player network: refused at the 4-player table


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["bench", "--agents", "planer"], "--agents"),
        (["bench", "--agents", "planner", "--players", "20"], "--players"),
        (["bench", "--agents", "planner", "--max-pips", "3"], "--max-pips"),
        (["bench", "--agents", "planner", "--rounds", "20"], "--rounds"),
        (["bench", "--agents", "planner", "--hand-size", "40"], "--hand-size"),
        (["bench", "--agents", "planner", "--rules", "nope"], "--rules"),
        (["bench", "--agents", "planner", "--flag", "nope"], "--flag"),
        (["bench", "--agents", "planner", "--flag", "one_tile_opening=maybe"], "--flag"),
        (["bench", "--agents", "planner", "--deals", "-1"], "--deals"),
        (["bench", "--agents", "planner", "--workers", "x"], "--workers"),
        (["bench", "--agents", "mc[rolouts=3]"], "--agents"),
        (["bench", "--agents", "planner", "--deals", "0"], "--deals: must be an int >= 1, got 0"),
        # the agents' parameters, checked against their constructors' signatures
        (
            ["bench", "--agents", "mc[sims=abc]", "planner"],
            "--agents: mc: sims must be an int or None, got 'abc'",
        ),
        (
            ["bench", "--agents", "mc[nosuch=1]", "planner"],
            "--agents: mc has no parameter 'nosuch'; its parameters: rollouts",
        ),
        (["bench", "--agents", "mc[seed=3]", "planner"], "--agents: mc: seed is set by the harness"),
        (
            ["bench", "--agents", "ppo[deterministic=0]", "planner"],
            "ppo: deterministic must be true or false, got 0",
        ),
        # what the agents read, checked against the table before the first deal (Agent.check_game)
        (
            ["bench", "--agents", "ppo[path=missing.npz]", "planner"],
            "--agents: ppo[path=missing.npz]: no policy file at missing.npz",
        ),
        (
            ["bench", "--agents", f"champion[path={TWO_PLAYER_NET}]", "planner"],
            "trained for another table (272 inputs, 275 actions); this game has 338 and 457 (4 players",
        ),
        (
            ["bench", "--agents", f"mc[leaf=policy,prior=planner,path={TWO_PLAYER_NET}]", "planner"],
            "the network was trained for another table",
        ),
        (
            ["bench", "--agents", "champion", "planner", "--max-pips", "9"],
            "--agents: champion: champion's networks ship for",
        ),
        (["bench", "--agents", "mc", "--agent-param", "xx.rollouts=3"], "--agent-param"),
        (
            ["bench", "--agents", "planner", "greedy", "--lineup", "planner", "foo", "planner", "planner"],
            "--lineup",
        ),
        (["bench", "--game", "block", "--agents", "classic", "--max-pips", "9"], "--max-pips"),
        (["bench", "--game", "block", "--agents", "planner"], "--agents"),
        (["bench", "--game", "chess", "--agents", "planner"], "--game"),
        (["dev", "bench-speed", "--seconds", "-1"], "--seconds"),
        (["dev", "bench-speed", "--slices", "0"], "--slices"),
        (["demo", "--agents", "random", "planer"], "--agents"),
        (["demo", "--seed", "-3"], "--seed: must be an int >= 0, got -3"),
        (["demo", "--bogus"], "unrecognized arguments: --bogus"),
        (["nosuchcommand"], "nosuchcommand"),
        (["soak"], "soak"),  # the soak is a tool of tests/, not a command
        (["dev", "soak"], "soak"),
        (["dev", "nosuchtool"], "nosuchtool"),
    ],
)
def test_bad_command_lines_get_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], names: str
) -> None:
    out = tmp_path / "out"
    if argv[0] in ("bench", "demo"):
        argv = [*argv, "--out", str(out)]
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(argv))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert names in err and err.startswith("mtrain") and len(err.strip().splitlines()) == 1, err
    assert not out.exists()  # nothing written


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["bench", "--agents", "planner", "--deals", "1", "--out", "{blocker}/run"], "--out"),
        (
            [
                "bench",
                "--agents",
                "planner",
                "--deals",
                "1",
                "--out",
                "{tmp}/run",
                "--save-replays",
                "{blocker}/r",
            ],
            "--save-replays",
        ),
        (["demo", "--deals", "1", "--out", "{blocker}/run"], "--out"),
        (["train", "--steps", "64", "--out", "{blocker}/run"], "--out"),
        (["selfplay", "--out", "{blocker}/run"], "--out"),
        (["play", "--agents", "random", "random", "--save", "{blocker}/game.jsonl"], "--save"),
        (["replay", "gif", "{replay}", "--out", "{blocker}/game.gif"], "--out"),
    ],
)
def test_an_output_path_that_cannot_be_written_is_refused_before_any_work(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    option: str,
) -> None:
    """Every command that writes checks where before it plays, trains or draws (a file
    where a directory must go), not with a traceback at the end."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory")
    replay = tmp_path / "game.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))  # the human seat quits at once
    assert main(["play", "--agents", "random", "random", "--seed", "1", "--save", str(replay)]) == 0
    capsys.readouterr()
    before = sorted(tmp_path.rglob("*"))
    argv = [a.format(blocker=blocker, replay=replay, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mtrain") and f"{option}: cannot create " in err and "is a file" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert sorted(tmp_path.rglob("*")) == before


def test_output_problem_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mtrain_env.tilegame import argtypes as cli  # output_problem (mtrain_env.cli re-exports it)

    (tmp_path / "f").write_text("x")
    assert cli.output_problem(tmp_path / "new" / "deeper" / "file.txt") is None
    assert cli.output_problem(tmp_path / "new" / "run", "directory") is None
    assert cli.output_problem(tmp_path, "file") == f"{tmp_path} is a directory"
    assert cli.output_problem(tmp_path / "f", "directory") == f"{tmp_path / 'f'} is a file, not a directory"
    assert (
        cli.output_problem(tmp_path / "f" / "x")
        == f"cannot create {tmp_path / 'f' / 'x'}: {tmp_path / 'f'} is a file"
    )

    def refuse(**_kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cli.tempfile, "TemporaryFile", refuse)  # as a read-only directory would
    assert (
        cli.output_problem(tmp_path / "run", "directory") == f"cannot write in {tmp_path} (Permission denied)"
    )
    assert list(tmp_path.iterdir()) == [tmp_path / "f"]


@pytest.mark.parametrize(
    ("module", "argv", "says"),
    [
        ("tests.env.soak", ["--steps", "0"], "--steps: must be an int >= 1, got 0"),
        ("mtrain_env.bench_speed", ["--seconds", "0", "--slices", "1"], "--seconds: must be a number > 0"),
        ("mtrain_env.bench_speed", ["--seconds", "nan"], "--seconds: must be a number >= 0, got nan"),
        ("mtrain_env.bench_speed", ["--slices", "0"], "--slices: must be an int >= 1, got 0"),
        ("tests.openspiel.block_crosscheck", ["--hands", "0"], "--hands: must be an int >= 1, got 0"),
        (
            "tests.compiled.backend_diff",
            ["--episodes", "0", "--decisions", "1"],
            "--episodes: must be an int >= 1, got 0",
        ),
    ],
)
def test_the_python_m_tools_refuse_bad_numbers(
    capsys: pytest.CaptureFixture[str], module: str, argv: list[str], says: str
) -> None:
    """Budgets and seeds out of range are usage errors (exit 2) in one line, not tracebacks at
    the end (nor argparse's usage block above the line)."""
    import importlib

    _skip_without_extra(module)
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err


#: the modules that import an optional extra (skipped without it)
EXTRAS = {
    "tests.compiled.backend_diff": "numba",
    "tests.openspiel.block_crosscheck": "pyspiel",
    "agents.policy_net": "sb3_contrib",
}


def _skip_without_extra(module: str) -> None:
    if module in EXTRAS:
        pytest.importorskip(EXTRAS[module])


@pytest.mark.parametrize(
    ("module", "argv", "says"),
    [
        ("mtrain_env.bench_speed", ["--players", "9"], "--players: R3: num_players must be in 2..8"),
        ("mtrain_env.bench_speed", ["--players", "1", "--only", "core"], "--players: R3"),
    ],
)
def test_the_python_m_tools_check_every_option_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], module: str, argv: list[str], says: str
) -> None:
    """A game the rules refuse (R1, R3: named by its option), or an output that cannot be
    written, is refused up front: exit 2, no traceback, nothing written."""
    import importlib

    _skip_without_extra(module)
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main([a.format(tmp=tmp_path) for a in argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("src", ["missing.pt", "garbage.pt", "empty.pt", "folder"])
def test_policy_net_names_a_bad_source_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], src: str
) -> None:
    _skip_without_extra("agents.policy_net")
    from agents import policy_net

    (tmp_path / "garbage.pt").write_text("not a pickle")
    (tmp_path / "empty.pt").write_bytes(b"")
    (tmp_path / "folder").mkdir()
    before = sorted(tmp_path.iterdir())
    assert policy_net.main([str(tmp_path / src), str(tmp_path / "out.npz")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"python -m agents.policy_net: {tmp_path / src}: "), err
    assert len(err.strip().splitlines()) == 1, err
    assert sorted(tmp_path.iterdir()) == before


def test_policy_net_refuses_an_unwritable_destination_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _skip_without_extra("agents.policy_net")
    from agents import policy_net

    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    assert policy_net.main([str(tmp_path / "missing.pt"), str(blocker / "out.npz")]) == 2
    err = capsys.readouterr().err
    assert err == f"python -m agents.policy_net: DST: cannot create {blocker}/out.npz: {blocker} is a file\n"


@pytest.mark.parametrize(
    ("module", "argv"),
    [
        ("agents.tournament.paired", ["{tmp}/a", "{tmp}/a"]),
    ],
)
def test_a_results_file_that_is_not_utf8_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], module: str, argv: list[str]
) -> None:
    import importlib

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "results.csv").write_bytes(b"agent,deal,deal_seed,penalty\n\xff\xfe,0,1,2\n")
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main([a.format(tmp=tmp_path) for a in argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'a' / 'results.csv'}: not UTF-8 text" in err and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["bench", "--agents", "nosuch.module:Agent", "random", "--deals", "1"],
            "mtrain bench: --agents: 'nosuch.module:Agent': no module named 'nosuch'",
        ),
        (
            ["demo", "--agents", "nosuch.module:Agent", "random", "--deals", "1"],
            "mtrain demo: --agents: 'nosuch.module:Agent': no module named 'nosuch'",
        ),
        (
            ["bench", "--agents", "mc[sims=1,sims=2]", "random", "--deals", "1"],
            "mtrain bench: --agents: agent spec 'mc[sims=1,sims=2]' gives sims twice",
        ),
        (
            ["play", "--agents", "mc[sims=1,sims=2]"],
            "mtrain play: --agents: agent spec 'mc[sims=1,sims=2]' gives sims twice",
        ),
        (
            ["bench", "--agents", "random", "greedy", "--deals", "1", "--rounds", "0"],
            "mtrain bench: --rounds: R25: rounds must be in 1..13",
        ),
        (
            ["play", "--agents", "random", "--rounds", "0"],
            "mtrain play: --rounds: R25: rounds must be in 1..13",
        ),
        (
            ["bench", "--agents", "random", "greedy", "--game", "block", "--flag", "nosuch=1"],
            "mtrain bench: --flag: unknown config keyword(s) ['nosuch']",
        ),
    ],
)
def test_mtrain_refuses_bad_agents_and_game_options_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    """A missing plugin module, a key given twice in a spec (the last silently won), zero
    rounds (silently one) and an unknown block keyword (blamed on --players) are usage errors
    naming their option; nothing is written."""
    from training.app import main

    out = ["--out", str(tmp_path / "o")] if argv[0] in ("bench", "demo") else ["--save", str(tmp_path / "p")]
    assert main([*argv, *out]) == 2
    err = capsys.readouterr().err
    assert err.startswith(says) and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("address", "says"),
    [
        ("notanaddr", "expected HOST:PORT"),
        ("127.0.0.1:70000", "the port must be in 1..65535"),
        ("127.0.0.1:1", "cannot reach a Ray cluster at 127.0.0.1:1"),
    ],
)
def test_bench_checks_a_ray_address_before_ray_or_any_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str, says: str
) -> None:
    """A malformed address was Ray's traceback after run.json and results.csv existed; an
    address nobody answers made Ray wait a minute. Both are one line now, nothing written."""
    pytest.importorskip("ray")
    from training.app import main

    out = tmp_path / "o"
    argv = ["bench", "--agents", "random", "greedy", "--deals", "1", "--backend", "ray", "--address", address]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtrain bench: --address: {says}") and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["play", "--agents", "random", "--save", ""], "mtrain play: --save: expected a path"),
        (["bench", "--agents", "random", "--out", ""], "mtrain bench: --out: expected a path"),
        (
            ["replay", "gif", "tests/golden/mt_2p_double6_pagat.jsonl", "--out", ""],
            "mtrain replay gif: --out: expected a path",
        ),
    ],
)
def test_an_empty_output_path_is_refused_not_replaced_by_the_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str], says: str
) -> None:
    """``--save ''`` wrote the default file, as if the option were not given."""
    from training.app import main

    monkeypatch.chdir(REPO)
    assert main(argv) == 2
    assert capsys.readouterr().err == says + "\n"


def _commands() -> list[Any]:
    """Every leaf command of ``mtrain`` (``replay check``, not ``replay``) with its parser."""
    import argparse

    from training.app import build_parser

    found: list[Any] = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for name, child in subs[0].choices.items() if subs else ():
            walk(child, [*path, name])
        if not subs:
            found.append(pytest.param(path, parser, id=" ".join(path)))

    walk(build_parser(), [])
    return found


def _required_args(parser: Any) -> list[str]:
    """Values for what ``parser`` requires (positionals, required options): enough to parse."""
    argv: list[str] = []
    for action in parser._actions:
        if not action.option_strings:
            argv.append("x")
        elif action.required:
            argv += [action.option_strings[0], "1"]
    return argv


@pytest.mark.parametrize(("path", "parser"), _commands())
def test_every_command_prefixes_its_argparse_errors_with_its_own_name(
    path: list[str], parser: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad option value and an unknown option: one line, exit 2, ``mtrain COMMAND: ...``
    (argparse hands unknown options back to the top parser, which said ``mtrain: ...``)."""
    prefix = f"mtrain {' '.join(path)}: "
    typed = next(a for a in parser._actions if a.option_strings and (a.choices or a.type not in (None, str)))
    for argv, says in (
        ([typed.option_strings[0], "bogus"], typed.option_strings[0]),
        ([*_required_args(parser), "--no-such-option"], "--no-such-option"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main([*path, *argv])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith(prefix) and says in err and err.count("\n") == 1, err
