"""Replays (mtrain_env/replay.py): recording, the file format, strict reading, re-simulation."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mtrain_env
from agents import make_agent
from agents.block import make_agent as make_block_agent
from agents.play import play_game
from mtrain_env import block
from mtrain_env.replay import (
    MAX_REPLAY_BYTES,
    REPLAY_FORMAT,
    REPLAY_VERSION,
    DamagedReplayError,
    Replay,
    ReplayMismatchError,
    ReplayRecorder,
    ReplayStep,
    check_replay,
    dumps_replay,
    loads_replay,
    read_replay,
    replay_frames,
    write_replay,
)


def _record(env: Any, agents: list[Any], names: list[str], seed: int, options: Any = None) -> Replay:
    """Play a seeded game through the play loop with a recorder as its observer."""
    env.reset(seed=seed, options=options)
    recorder = ReplayRecorder(env, seed, names, options=options)
    play_game(env, agents, seed=seed, options=options, observer=recorder)
    return recorder.replay


def _session(seed: int = 5) -> Replay:
    env = mtrain_env.raw_env(num_players=3, max_pips=9, rounds=2)
    agents = [
        make_agent("planner", seed=1),
        make_agent("mc", seed=2, rollouts=12),
        make_agent("random", seed=3),
    ]
    return _record(env, agents, ["planner", "mc", "random"], seed)


@pytest.fixture(scope="module")
def session() -> Replay:
    return _session()


def test_a_recorded_session_round_trips_and_re_simulates(session: Replay, tmp_path: Path) -> None:
    assert session.finished and len(session.rounds) == 2
    assert session.round_ends[-1] == len(session.steps) - 1
    path = tmp_path / "g.jsonl"
    write_replay(path, session)
    back = read_replay(path)
    assert back == session
    check_replay(back)
    assert dumps_replay(back) == path.read_text(encoding="utf-8")


def test_the_same_game_gives_byte_identical_files(session: Replay) -> None:
    assert dumps_replay(_session()) == dumps_replay(session)
    assert dumps_replay(_session(seed=6)) != dumps_replay(session)


def test_file_layout(session: Replay) -> None:
    lines = [json.loads(x) for x in dumps_replay(session).splitlines()]
    head = lines[0]
    assert (head["format"], head["version"], head["game"], head["seed"]) == (
        REPLAY_FORMAT,
        REPLAY_VERSION,
        "mexican_train",
        5,
    )
    assert head["agents"] == ["planner", "mc", "random"]
    assert head["versions"] == {"mtrain_env": mtrain_env.__version__, "replay": REPLAY_VERSION}
    assert lines[-2] == {"final": session.final}
    assert session.final is not None
    body = dumps_replay(session).rsplit("\n", 2)[0] + "\n"  # every line before the closing one
    assert lines[-1] == {
        "end": {
            "decisions": len(session.steps),
            "scores": session.final["scores"],
            "sha256": hashlib.sha256(body.encode("utf-8")).hexdigest(),
        }
    }
    ends = [i for i, x in enumerate(lines) if "round_end" in x]
    assert len(ends) == 2 and ends[-1] == len(lines) - 3
    steps = [x for x in lines if "seat" in x]
    assert len(steps) == len(session.steps)
    # the mc agent (seat 1) annotates its non-forced decisions with its action values,
    # over legal actions of its own; the others never annotate
    noted = [x for x in steps if "annotations" in x]
    assert noted and all(x["seat"] == 1 for x in noted)
    assert all(str(x["action"]) in x["annotations"]["values"] for x in noted)
    # final scores are the sums of the rounds' scores
    assert session.final is not None
    assert session.final["scores"] == [sum(r["scores"][i] for r in session.rounds) for i in range(3)]


def test_moves_are_decoded_with_absolute_seats() -> None:
    env = mtrain_env.raw_env(num_players=3, max_pips=6)
    env.reset(seed=0)
    from mtrain_env.replay import describe_move

    n = 3
    assert describe_move(env, 1, env.unwrapped.encode_action((2, 5), 0)) == "2|5 on player_1's train"
    assert describe_move(env, 2, env.unwrapped.encode_action((2, 5), 2)) == "2|5 on player_1's train"
    assert describe_move(env, 2, env.unwrapped.encode_action((6, 6), n)) == "6|6 on the Mexican train"
    assert describe_move(env, 0, env.unwrapped.DRAW) == "draw"
    assert describe_move(env, 0, env.unwrapped.PASS) == "pass"


def test_block_dominoes_replays(tmp_path: Path) -> None:
    env = block.raw_env()
    agents = [make_block_agent("classic", seed=s) for s in range(4)]
    replay = _record(env, agents, ["classic"] * 4, seed=11)
    assert replay.game == "block" and replay.finished
    assert any(s.move.endswith("end") for s in replay.steps)
    write_replay(tmp_path / "b.jsonl", replay)
    check_replay(read_replay(tmp_path / "b.jsonl"))


def test_tournament_style_reset_options_are_recorded() -> None:
    """A fixed deal and first player (as the tournament plays) replay from the header."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6)
    env.reset(seed=1)
    s = env.state_obj
    tiles = env.config.tiles.tiles
    from mtrain_env.tilegame.tiles import bits_list

    options = {
        "deal": {
            "hands": [[list(tiles[i]) for i in bits_list(h)] for h in s.hands],
            "boneyard": [list(tiles[i]) for i in reversed(s.boneyard)],
        },
        "first_player": 1,
    }
    replay = _record(
        env, [make_agent("greedy"), make_agent("random", seed=4)], ["greedy", "random"], 9, options
    )
    assert replay.options == options and replay.steps[0].seat == 1
    check_replay(replay)
    with pytest.raises(ReplayMismatchError):
        check_replay(Replay(**{**vars(replay), "options": {}}))


def test_the_recorder_refuses_a_wrong_seed() -> None:
    env = mtrain_env.raw_env(num_players=2, max_pips=6)
    env.reset(seed=3)
    with pytest.raises(ValueError, match="freshly reset"):
        ReplayRecorder(env, 4, ["a", "b"])
    with pytest.raises(ValueError, match="2 seats"):
        ReplayRecorder(env, 3, ["a"])


def test_recording_by_hand_around_env_step_and_a_cut_short_game() -> None:
    env = mtrain_env.env(num_players=2, max_pips=6)  # the wrapped env works too
    env.reset(seed=2)
    rec = ReplayRecorder(env, 2, ["me", "me too"])
    rng = np.random.default_rng(0)
    for _ in range(7):
        seat = env.unwrapped.current_seat
        action = int(rng.choice(env.unwrapped.legal_actions()))
        env.step(action)
        rec.record(seat, action, {"note": "by hand"})
    replay = rec.replay
    assert replay.final is None and len(replay.steps) == 7
    assert replay.steps[0].annotations == {"note": "by hand"}
    check_replay(replay)  # a game cut short checks up to where it stopped
    frames = list(replay_frames(replay))
    assert [f.index for f in frames] == list(range(8))
    assert frames[0].step is None and frames[-1].step == replay.steps[-1]
    text = dumps_replay(replay)  # closed all the same: 7 decisions, no final scores
    assert json.loads(text.splitlines()[-1])["end"]["decisions"] == 7
    assert json.loads(text.splitlines()[-1])["end"]["scores"] is None
    assert loads_replay(text) == replay


def _tamper(replay: Replay, index: int, **change: Any) -> Replay:
    steps = list(replay.steps)
    steps[index] = ReplayStep(**{**vars(steps[index]), **change})
    return Replay(**{**vars(replay), "steps": steps})


def test_check_fails_loudly_at_the_first_difference(session: Replay) -> None:
    i = next(k for k, s in enumerate(session.steps) if s.move not in ("draw", "pass") and k > 3)
    with pytest.raises(ReplayMismatchError) as err:
        check_replay(_tamper(session, i, move="0|0 on the Mexican train"))
    assert err.value.step_index == i and "step " + str(i) in str(err.value)
    with pytest.raises(ReplayMismatchError, match="illegal action") as err:
        check_replay(_tamper(session, i, action=session.steps[i].action + 1))
    assert err.value.step_index == i
    with pytest.raises(ReplayMismatchError, match="seat on turn"):
        check_replay(_tamper(session, i, seat=(session.steps[i].seat + 1) % 3))
    rounds = [dict(r) for r in session.rounds]
    rounds[0]["pips"] = [p + 1 for p in rounds[0]["pips"]]
    with pytest.raises(ReplayMismatchError, match="round 0 result") as err:
        check_replay(Replay(**{**vars(session), "rounds": rounds}))
    assert err.value.step_index == session.round_ends[0]
    assert session.final is not None
    final = {**session.final, "scores": [0.0, 0.0, 1.0]}
    with pytest.raises(ReplayMismatchError, match="final"):
        check_replay(Replay(**{**vars(session), "final": final}))
    with pytest.raises(ReplayMismatchError, match="final"):  # cut short, but claims an end
        check_replay(Replay(**{**vars(session), "steps": session.steps[:-1], "rounds": session.rounds[:1]}))


# ------------------------------------------------------------------ damaged files
def _lines(session: Replay) -> list[str]:
    return dumps_replay(session).splitlines(keepends=True)


DAMAGE = {
    "empty": lambda lines: [],
    "not json": lambda lines: [lines[0], "{not json\n", *lines[2:]],
    "no newline": lambda lines: [*lines[:-1], lines[-1].rstrip("\n")],
    "not an object": lambda lines: [lines[0], "[1, 2]\n", *lines[2:]],
    "bad format": lambda lines: [lines[0].replace("mtrain-replay", "other"), *lines[1:]],
    "future version": lambda lines: [
        lines[0].replace(f'"version": {REPLAY_VERSION}', '"version": 9'),
        *lines[1:],
    ],
    "bad config": lambda lines: [lines[0].replace('"num_players": 3', '"num_players": 99'), *lines[1:]],
    "bad seat": lambda lines: [lines[0], lines[1].replace('"seat": 0', '"seat": 7'), *lines[2:]],
    "bool action": lambda lines: [
        lines[0],
        json.dumps({"seat": 0, "action": True, "move": "x"}) + "\n",
        *lines[2:],
    ],
    "extra key": lambda lines: [lines[0], lines[1].replace("{", '{"cheat": 1, ', 1), *lines[2:]],
    "after final": lambda lines: [*lines[:-1], lines[1], lines[-1]],
    "after closing": lambda lines: [*lines, lines[1]],
    "NaN": lambda lines: [
        *lines[:-2],
        '{"final": {"returns": [NaN, 0, 0], "scores": [0, 0, 0]}}\n',
        lines[-1],
    ],
    "short final": lambda lines: [*lines[:-2], '{"final": {"returns": [0], "scores": [0]}}\n', lines[-1]],
    "deep nesting": lambda lines: [lines[0], "[" * 5000 + "]" * 5000 + "\n", *lines[2:]],
    "first player not a seat": lambda lines: [_options(lines[0], first_player=7), *lines[1:]],
    "first player a string": lambda lines: [_options(lines[0], first_player="a"), *lines[1:]],
    "deal not a deal": lambda lines: [_options(lines[0], deal=5), *lines[1:]],
    "a tile of another set": lambda lines: [
        _options(lines[0], deal=_deal_with(lines[0], [0, 99])),
        *lines[1:],
    ],
    "unknown option": lambda lines: [_options(lines[0], shuffle=True), *lines[1:]],
}


def _options(header: str, **options: Any) -> str:
    """The header line with its reset options replaced (the replays' ``options``)."""
    return json.dumps({**json.loads(header), "options": options}) + "\n"


def _deal_with(header: str, tile: list[int]) -> dict[str, Any]:
    """A deal of the header's game whose first hand holds ``tile``."""
    from agents.tournament.games import MexicanTrainGame
    from mtrain_env.mexican_train import GameConfig

    config = GameConfig.make(**json.loads(header)["config"])
    deal = MexicanTrainGame().deal_options(config, np.random.default_rng(0))["deal"]
    deal = json.loads(json.dumps(deal))
    deal["hands"][0][0] = tile
    return dict(deal)


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_files_are_refused_with_their_line(session: Replay, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(DAMAGE[kind](_lines(session))), encoding="utf-8")
    with pytest.raises(DamagedReplayError) as err:
        read_replay(path)
    assert str(path) in str(err.value)
    if kind.startswith(("first player", "deal", "a tile", "unknown")):  # named at its header, not later
        assert f"{path}:1: options: " in str(err.value)


def _closing(line: str, **changes: Any) -> str:
    """The closing line with some of its values changed."""
    closing = json.loads(line)
    closing["end"].update(changes)
    return json.dumps(closing) + "\n"


def _header(line: str, **changes: Any) -> str:
    return json.dumps({**json.loads(line), **changes}) + "\n"


def _new_versions(lines: list[str]) -> list[str]:
    return [_header(lines[0], versions={"mtrain_env": "9.9", "replay": REPLAY_VERSION}), *lines[1:]]


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda lines: lines[:-1], r'no closing line \(the "end" line: .*\): the file was cut short after'),
        (lambda lines: lines[:-3], "no closing line"),  # cut after a decision
        (lambda lines: [_header(lines[0], agents=["a", "b", "c"]), *lines[1:]], "the file was edited"),
        (_new_versions, "the closing line's sha256 does not match the lines before it: the file was edited"),
        (lambda lines: [lines[0], *lines[2:]], "the closing line counts \\d+ decisions, the file holds"),
        (lambda lines: [*lines[:-1], _closing(lines[-1], decisions=3)], "counts 3 decisions"),
        (lambda lines: [*lines[:-1], _closing(lines[-1], scores=None)], "scores None are not the final"),
        (lambda lines: [*lines[:-1], _closing(lines[-1], sha256=None)], "sha256 does not match"),
        (lambda lines: [*lines[:-1], _closing(lines[-1], extra=1)], "must hold exactly"),
    ],
    ids=["cut-at-final", "cut-at-a-decision", "agents", "versions", "a-decision-gone", "count", "scores",
         "sha256", "extra-key"],
)  # fmt: skip
def test_a_cut_or_edited_replay_is_refused_by_its_closing_line(
    session: Replay, tmp_path: Path, edit: Any, reason: str
) -> None:
    """The closing line counts the decisions, repeats the final scores and holds the sha256
    of every line before it: a file cut at a line boundary or edited anywhere (the header's
    agent names and versions too) is refused, naming its last line."""
    lines = edit(_lines(session))
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(DamagedReplayError, match=f"^{path}:{len(lines)}: .*{reason}"):
        read_replay(path)


def test_a_version_1_replay_is_refused_naming_the_missing_closing_line(
    session: Replay, tmp_path: Path
) -> None:
    """Replays written before the closing line existed (format version 1) are refused, not
    read as if whole."""
    lines = _lines(session)[:-1]
    old = json.loads(lines[0])
    old["version"] = 1
    old["versions"]["replay"] = 1
    path = tmp_path / "old.jsonl"
    path.write_text("".join([json.dumps(old) + "\n", *lines[1:]]), encoding="utf-8")
    with pytest.raises(DamagedReplayError, match=f"^{path}:1: replay format version 1 has no closing line"):
        read_replay(path)


def test_a_file_past_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    """A replay is read to at most MAX_REPLAY_BYTES (a FIFO or a device is not read at all:
    tests/replays_web/test_replay_view.py runs those through ``mtrain replay check``)."""
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate(MAX_REPLAY_BYTES + 1)  # sparse: no disk used
    with pytest.raises(OSError, match=f"larger than {MAX_REPLAY_BYTES} bytes"):
        read_replay(big)


def test_non_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bin.jsonl"
    path.write_bytes(b"\xff\xfe\x00garbage\n")
    with pytest.raises(DamagedReplayError, match="UTF-8"):
        read_replay(path)


def test_a_damaged_line_is_named(session: Replay, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    lines = _lines(session)
    lines[4] = "{oops\n"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(DamagedReplayError) as err:
        read_replay(path)
    assert err.value.line == 5


def test_write_is_atomic(session: Replay, tmp_path: Path) -> None:
    """A failed write leaves neither a partial file nor a temp file behind."""
    bad = Replay(**{**vars(session), "final": {"returns": [float("nan")] * 3, "scores": [0, 0, 0]}})
    with pytest.raises(ValueError):
        write_replay(tmp_path / "x.jsonl", bad)
    assert list(tmp_path.iterdir()) == []


def test_ppo_annotates_its_policy_probabilities() -> None:
    """The reference policy's masked softmax over its legal actions; it plays the argmax."""
    env = mtrain_env.raw_env()
    agents = [
        make_agent("ppo", seed=0),
        make_agent("planner"),
        make_agent("greedy"),
        make_agent("random", seed=1),
    ]
    replay = _record(env, agents, ["ppo", "planner", "greedy", "random"], seed=8)
    noted = [s for s in replay.steps if s.annotations is not None]
    assert noted and all(s.seat == 0 for s in noted)
    for step in noted:
        probs = {int(a): p for a, p in step.annotations["probs"].items()}  # type: ignore[index]
        assert abs(sum(probs.values()) - 1) < 1e-3 and step.action == max(probs, key=probs.__getitem__)
    check_replay(replay)
