"""``mtrain play`` (agents/terminal.py): a human at seat 0 in the terminal."""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

from agents.terminal import TerminalSession
from mtrain_env.replay import check_replay, read_replay
from tests import REPO
from training.app import main

ROOT = REPO
PROMPT = r"your move \[1-(\d+), q quits\]: "


def _spawn(tmp_path: Path, *args: str) -> pexpect.spawn:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return pexpect.spawn(
        sys.executable,
        ["-m", "training.app", "play", *args],
        cwd=str(tmp_path),
        env=env,
        encoding="utf-8",
        timeout=120,
    )


def test_a_full_round_through_a_terminal(tmp_path: Path) -> None:
    """pexpect plays a whole round against three planners: bad input re-prompts, every
    prompt gets a legal choice, the round's result is shown, the replay re-simulates."""
    save = tmp_path / "game.jsonl"
    child = _spawn(
        tmp_path,
        "--agents",
        "planner",
        "planner",
        "planner",
        "--seed",
        "11",
        "--max-pips",
        "9",
        "--save",
        str(save),
    )
    child.logfile_read = log = io.StringIO()
    answers = 0
    child.expect(PROMPT)
    child.sendline("seven")  # not a number: asked again
    child.expect("please type a number from 1 to")
    child.expect(PROMPT)
    child.sendline("0")  # out of range: asked again
    child.expect("please type a number from 1 to")
    while True:
        i = child.expect([PROMPT, r"game over; replay saved: (\S+)"])
        if i == 1:
            break
        options = int(child.match.group(1))
        child.sendline(str(1 + answers % options))  # vary the choices
        answers += 1
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    out = log.getvalue()
    assert "== round 1 over" in out and "final scores:" in out and "you placed" in out
    assert re.search(r"player_[123] \(planner\): ", out)  # the opponents' moves are shown
    assert "player_1's hand" not in out and "player_2's hand" not in out
    replay = read_replay(save)
    check_replay(replay)
    assert replay.finished and replay.agents == ["human", "planner", "planner", "planner"]
    forced = out.count("(your only move: played for you)")  # a lone draw or pass is not asked
    assert sum(1 for s in replay.steps if s.seat == 0) == answers + forced


def test_q_quits_and_saves_the_game_so_far(tmp_path: Path) -> None:
    save = tmp_path / "q.jsonl"
    child = _spawn(
        tmp_path, "--agents", "greedy", "random", "--seed", "2", "--max-pips", "6", "--save", str(save)
    )
    child.logfile_read = log = io.StringIO()
    for _ in range(2):
        child.expect(PROMPT)
        child.sendline("1")
    child.expect(PROMPT)
    child.sendline("q")
    child.expect("you quit; the game so far is saved")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    replay = read_replay(save)
    forced = log.getvalue().count("(your only move: played for you)")  # a lone draw or pass is not asked
    assert replay.final is None and sum(1 for s in replay.steps if s.seat == 0) == 2 + forced
    check_replay(replay)


def test_a_session_shows_session_scores_and_block_plays_too(tmp_path: Path) -> None:
    for game, config, opponents in (
        ("mexican_train", {"num_players": 2, "max_pips": 6, "rounds": 3}, ["planner"]),
        ("block", {}, ["classic", "classic", "classic"]),
    ):
        out = io.StringIO()
        session = TerminalSession(game, config, opponents, 5, read=lambda prompt: "1", out=out)
        save = tmp_path / f"{game}.jsonl"
        assert session.run(save) == 0
        text = out.getvalue()
        replay = read_replay(save)
        check_replay(replay)
        assert replay.finished and "game over; replay saved" in text
        if game == "mexican_train":
            assert text.count("session scores:") == 3 and "== round 3 over" in text
        for seat in range(1, len(opponents) + 1):  # the human never sees another hand in play
            assert f"player_{seat}'s hand" not in text


def test_opponents_can_be_agent_specs(tmp_path: Path) -> None:
    """``--agents "mc[sims=8]"``: an opponent with parameters, named so in the replay, which
    re-simulates like any other."""
    out = io.StringIO()
    config = {"num_players": 2, "max_pips": 6}
    session = TerminalSession("mexican_train", config, ["mc[sims=8]"], 3, read=lambda prompt: "1", out=out)
    assert session.agents[1].rollouts == 8
    assert session.run(tmp_path / "s.jsonl") == 0
    replay = read_replay(tmp_path / "s.jsonl")
    check_replay(replay)
    assert replay.finished and "player_1 (mc[sims=8])" in out.getvalue()


def test_an_agent_that_raises_stops_the_game_saves_it_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plugin opponent's bug: its own traceback and one line naming it and its seat, the
    game so far saved (a replay that re-simulates), exit status 1."""
    out = io.StringIO()
    config = {"num_players": 2, "max_pips": 6}
    crashes = "tests.tournament.test_tournament:Crashes"
    session = TerminalSession("mexican_train", config, [crashes], 3, read=lambda prompt: "1", out=out)
    assert session.run(tmp_path / "c.jsonl") == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and 'raise ZeroDivisionError("a bug in the agent")' in err
    assert err.rstrip().endswith("at seat 1 raised ZeroDivisionError: a bug in the agent")
    assert "the game so far is saved" in out.getvalue()
    replay = read_replay(tmp_path / "c.jsonl")
    check_replay(replay)
    assert replay.final is None


def test_end_of_input_quits_and_saves(tmp_path: Path) -> None:
    def eof(prompt: str) -> str:
        raise EOFError

    session = TerminalSession(
        "mexican_train", {"num_players": 2, "max_pips": 6}, ["random"], 1, read=eof, out=io.StringIO()
    )
    assert session.run(tmp_path / "e.jsonl") == 0
    assert read_replay(tmp_path / "e.jsonl").final is None


def test_a_forced_draw_or_pass_is_played_for_the_human(tmp_path: Path) -> None:
    """When a draw or a pass is the only legal move there is nothing to choose: it is played
    at once and said in one line, never asked for; the replay holds it as the human's move."""
    out = io.StringIO()
    asked: list[list[str]] = []

    def choose_first(prompt: str) -> str:
        asked.append([session.env.unwrapped.decode_action(int(a)).kind for a in session.env.legal_actions()])
        return "1"

    config = {"num_players": 2, "max_pips": 6}
    session = TerminalSession("mexican_train", config, ["random"], 0, read=choose_first, out=out)
    assert session.run(tmp_path / "f.jsonl") == 0
    assert asked and all(kinds not in (["draw"], ["pass"]) for kinds in asked), asked
    lines = out.getvalue().splitlines()
    forced = [line for line in lines if line.endswith(" (your only move: played for you)")]
    assert "  player_0 (you): draw (your only move: played for you)" in forced
    assert "  player_0 (you): pass (your only move: played for you)" in forced
    replay = read_replay(tmp_path / "f.jsonl")
    check_replay(replay)
    assert replay.finished and sum(1 for step in replay.steps if step.seat == 0) == len(asked) + len(forced)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--agents", "nobody"], "--agents"),
        (["--agents", "planner", "--max-pips", "99"], "--max-pips"),
        (["--agents", "planner", "--game", "block"], "--agents"),
        (["--agents", "planner", "--flag", "no_such_flag"], "--flag"),
        (["--agents", "mc[sims=many]"], "--agents: mc: sims must be an int or None, got 'many'"),
        (
            ["--agents", "ppo[path=nowhere.npz]"],
            "--agents: ppo[path=nowhere.npz]: no policy file at nowhere.npz",
        ),
    ],
)
def test_bad_options_exit_2_with_one_line(
    args: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["play", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and option in err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--agents", "random", "--players", "12"],
            "mtrain play: --players: not an option of play; the table is you (seat 0) plus one seat per "
            "agent of --agents (name 11 for 12 players)",
        ),
        (
            ["--agents", *["random"] * 9],
            "mtrain play: --agents: R3: num_players must be in 2..8 with a double-12 set, got 10; the "
            "table is you (seat 0) plus one seat per agent of --agents, 9 here",
        ),
        (
            ["--game", "block", "--agents", "classic", "classic"],
            "mtrain play: --agents: B2: num_players must be 4 (two pairs) or 2 (no partners), got 3; the "
            "table is you (seat 0) plus one seat per agent of --agents, 2 here",
        ),
    ],
)
def test_the_table_size_errors_say_it_comes_from_agents(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``play`` has no ``--players``: asking for one, or naming agents for a table the game
    cannot seat, says where the size comes from, under ``mtrain play:`` (not ``mtrain:``,
    nor blaming a ``--players`` the command does not have)."""
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(["play", *args]))
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == says + "\n"


def test_a_random_deal_s_seed_is_shown_only_when_the_game_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seed deals every hand and the boneyard again: one the player did not choose is
    drawn from 63 bits (not a million seeds to try against its own hand) and printed after
    the game only (the player may quit at the first choice, or never get one: a deal whose
    every move of the player's is forced is played to the end for them); a chosen one is
    printed at the start."""
    save = tmp_path / "r.jsonl"
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert main(["play", "--agents", "random", "--max-pips", "6", "--save", str(save)]) == 0
    *shown, last = capsys.readouterr().out.splitlines()
    seed = read_replay(save).seed
    assert "a random deal (its seed is shown at the end)" in shown[0]
    assert not [line for line in shown if str(seed) in line]
    assert last == f"the deal's seed: {seed}"
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert main(["play", "--agents", "random", "--max-pips", "6", "--seed", "5", "--save", str(save)]) == 0
    assert capsys.readouterr().out.startswith("mtrain play: you are player_0; seed 5\n")
