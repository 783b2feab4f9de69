"""``python -m tests.env.soak``: a short soak in the default suite, and proof that it sees a broken rule.

The soak plays random legal games over random configurations of both games and checks
every invariant after every step (the same checks ``load_state_dict`` makes). Here: a few
thousand steps find nothing; a rules core broken on purpose is caught, named, and replayed
at the same step by the command the soak prints.
"""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np
import pytest

import mtrain_env
import mtrain_env.block
from mtrain_env.block.core.rules import BlockDominoes
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.aec import TileGameEnv
from tests.env import soak


@pytest.mark.parametrize("game", ["mexican_train", "block", "both"])
def test_a_short_soak_finds_no_violation(game: str) -> None:
    result = soak.run(3000, seed=11, game=game)
    assert result.violations == [], "\n".join(v.describe(11, game) for v in result.violations)
    assert result.steps == 3000
    assert result.configurations >= 2 and result.episodes >= result.configurations
    assert result.round_trips >= 3
    assert re.fullmatch(
        r"soak: 3,000 steps, [\d,]+ episodes, [\d,]+ configurations, [\d,]+ snapshot round trips, "
        r"0 violations, [\d,]+ steps/s",
        result.summary(),
    )


def test_random_configurations_vary_and_are_accepted() -> None:
    rng = random.Random(5)
    mexican = [soak.random_config(rng, "mexican_train") for _ in range(40)]
    block = [soak.random_config(rng, "block") for _ in range(40)]
    assert len({k["num_players"] for k in mexican}) >= 4
    assert len({k["max_pips"] for k in mexican}) >= 4
    assert len({k["rules"] for k in mexican}) == 3
    assert any(k["rounds"] > 1 for k in mexican) and any(k["rounds"] == 1 for k in mexican)
    assert {k["num_players"] for k in block} == {2, 4}
    assert any(k["match"] for k in block) and not all(k["match"] for k in block)
    for k in mexican:
        mtrain_env.raw_env(**k)
    for k in block:
        mtrain_env.block.raw_env(**k)


def _lose_drawn_tiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Break R1 on purpose: a draw (outside the engine search) loses the tile it takes."""
    original = MexicanTrain._apply_draw

    def draw(self: MexicanTrain, s: GameState) -> None:
        hand = s.hands[s.current]
        original(self, s)
        if s.engine_placed and s.hands[s.current] != hand:
            s.hands[s.current] = hand

    monkeypatch.setattr(MexicanTrain, "_apply_draw", draw)


def test_the_soak_catches_a_broken_rule_and_replays_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _lose_drawn_tiles(monkeypatch)
    result = soak.run(5000, seed=3, game="mexican_train")
    assert result.violations, "a tile lost on every draw must be seen"
    first = result.violations[0]
    text = first.describe(3, "mexican_train")
    assert "R1" in first.error and f"reset(seed={first.seed})" in text
    command = re.search(r"replay: python -m tests.env.soak --seed 3 --game mexican_train --steps (\d+)", text)
    assert command and int(command[1]) == first.step
    again = soak.run(first.step, seed=3, game="mexican_train")  # the printed command, as a call
    assert again.violations and again.violations[0] == first


def test_the_soak_catches_broken_block_bookkeeping(monkeypatch: pytest.MonkeyPatch) -> None:
    """Break B8's record of who laid what: a tile laid on the right end is not credited."""
    original = BlockDominoes.apply

    def apply(self: BlockDominoes, s: Any, move: int) -> None:
        seat = s.current
        original(self, s, move)
        if move != self.PASS and move & 1:
            s.played_by[seat] &= ~(1 << (move >> 1))

    monkeypatch.setattr(BlockDominoes, "apply", apply)
    result = soak.run(3000, seed=1, game="block")
    assert result.violations and all("'played_by': B8" in v.error for v in result.violations)


def test_the_soak_catches_a_snapshot_that_does_not_restore(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``load_state_dict`` that forgot the RNG is seen by the round trips (the copy differs)."""
    original = TileGameEnv.load_state_dict

    def load(self: TileGameEnv, d: dict[str, Any]) -> None:
        original(self, d)
        self._rng = np.random.default_rng(0)

    monkeypatch.setattr(TileGameEnv, "load_state_dict", load)
    result = soak.run(3000, seed=4, game="both")
    assert result.violations
    assert all("round trip: the copy's snapshot differs at $.env.rng" in v.error for v in result.violations)


def test_the_soak_exit_status(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert soak.main(["--steps", "400", "--seed", "2", "--game", "block"]) == 0
    assert capsys.readouterr().out.strip().startswith("soak: 400 steps,")
    _lose_drawn_tiles(monkeypatch)
    assert soak.main(["--steps", "3000", "--seed", "3", "--game", "mexican_train"]) == 1
    out = capsys.readouterr().out
    assert "VIOLATION at step" in out and "replay: python -m tests.env.soak" in out
    assert re.search(r"soak: 3,000 steps, .* [1-9]\d* violations", out)


def test_check_bookkeeping_sees_a_live_env_that_lies() -> None:
    env = mtrain_env.raw_env(num_players=3)
    env.reset(seed=0)
    env.check_bookkeeping()
    env.truncations["player_1"] = True
    with pytest.raises(ValueError, match=r"state dict 'env\.truncations': AEC"):
        env.check_bookkeeping()
    env.truncations["player_1"] = False
    env._mask = env._zero_mask
    with pytest.raises(ValueError, match=r"'current_player': AEC: the action mask"):
        env.check_bookkeeping()
