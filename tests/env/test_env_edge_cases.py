"""The env (``mexican_train/env.py``) and the core state (``core/state.py``): behaviours
mutation testing found unpinned.

Mostly the compiled backend's fast path (:class:`~mtrain_env.mexican_train.env.CompiledRawEnv`),
held to what the python backend does: ``try_step``'s answer, the dead agent's step after an
illegal move, a second ``observe``, renders on each step, positional arguments; and the
public view's config.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mtrain_env
from mtrain_env.mexican_train.core.public import public_view, sample_state
from mtrain_env.tilegame.actions import IllegalMoveError

BACKENDS = ["python", "compiled"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_r15_try_step_plays_a_legal_action_and_refuses_an_illegal_one(backend: str) -> None:
    """R15 (each seat makes its own moves): ``try_step`` plays a legal action of the seat on
    turn and answers True; an illegal one changes nothing and answers False."""
    e = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=5, backend=backend)
    e.reset(seed=4)
    illegal = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0])
    before = e.state_dict()
    assert e.try_step(illegal) is False
    assert e.state_dict() == before
    for _ in range(20):
        history = e.state_dict()["history_len"]
        assert e.try_step(e.legal_actions()[0]) is True
        assert e.state_dict()["history_len"] == history + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dead_agent_after_an_illegal_move_may_only_step_none(backend: str) -> None:
    """``env()`` ends the game on an illegal move (offender -1); the agents are then dead and
    an integer action of theirs is refused (PettingZoo's dead step takes ``None`` only), even
    one their last mask allowed."""
    e = mtrain_env.env(num_players=2, max_pips=6, hand_size=5, backend=backend)
    e.reset(seed=1)
    mask = e.observe(e.agent_selection)["action_mask"]
    e.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(e.terminations.values())
    with pytest.raises(IllegalMoveError, match="the only valid action is None"):
        e.step(int(np.flatnonzero(mask)[0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_observing_twice_gives_the_same_observation(backend: str) -> None:
    """A seat observed twice after a step sees the same arrays both times (the compiled fast
    path hands out the observation it wrote once, then encodes again)."""
    e = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=5, backend=backend)
    e.reset(seed=2)
    for _ in range(12):
        e.step(e.legal_actions()[0])
        agent = e.agent_selection
        first, second = e.observe(agent), e.observe(agent)
        assert isinstance(second["observation"], np.ndarray)
        np.testing.assert_array_equal(first["observation"], second["observation"])
        np.testing.assert_array_equal(first["action_mask"], second["action_mask"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_render_modes_on_each_step(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``render_mode="human"`` prints the table after every step; ``None`` renders nothing
    (no "without specifying any render mode" warning while stepping)."""
    e = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=5, render_mode="human", backend=backend)
    e.reset(seed=3)
    capsys.readouterr()
    for _ in range(5):
        e.step(e.legal_actions()[0])
        assert capsys.readouterr().out.strip()
    quiet = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=5, backend=backend)
    quiet.reset(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(20):
            quiet.step(quiet.legal_actions()[0])
    assert capsys.readouterr().out == ""


def test_r1_r3_positional_arguments_reach_the_compiled_backend() -> None:
    """R1/R3/R4: ``raw_env(num_players, max_pips, hand_size, ...)`` positionally, on both
    backends (the compiled one is built by ``__new__`` and must pass them on)."""
    for backend in BACKENDS:
        e = mtrain_env.raw_env(3, 6, 5, backend=backend)
        assert (e.config.num_players, e.config.max_pips, e.config.hand_size) == (3, 6, 5)
    e = mtrain_env.raw_env(3, 6, 5, "pagat", 1, "zero_sum", None, "compiled")
    assert e.backend == "compiled" and e.config.num_players == 3 and e.possible_agents[-1] == "player_2"


@pytest.mark.parametrize("backend", BACKENDS)
def test_r4_r8_the_public_view_knows_the_config_and_what_is_unseen(backend: str) -> None:
    """R4/R8: a seat's public view carries the env's config; its unseen tiles are exactly the
    other hands and the boneyard."""
    e = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=5, backend=backend)
    e.reset(seed=5)
    d = e.state_dict()
    view = e.public_view("player_1")
    assert view.config == e.config
    tiles = e.config.tiles
    hidden = [*d["hands"][0], *d["hands"][2], *d["boneyard"]]
    assert view.unseen == sum(1 << tiles.tile_id(min(t), max(t)) for t in hidden)


# ------------------------------------------------------------------ core/state.py
@pytest.mark.parametrize("backend", BACKENDS)
def test_r15_a_fresh_episode_has_applied_no_action(backend: str) -> None:
    """R15: ``history_len`` counts the actions applied this episode: 0 after reset, whatever
    the seed, then one per step."""
    e = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=5, backend=backend)
    for seed in (0, 1):
        e.reset(seed=seed)
        assert e.state_dict()["history_len"] == 0
        e.step(e.legal_actions()[0])
        assert e.state_dict()["history_len"] == 1


def test_r23_a_determinization_of_a_live_round_is_not_blocked() -> None:
    """R23: a round under way is not blocked, and neither is any state ``sample_state`` deals
    from a seat's view of it (the view carries the flag, clear while the round goes on)."""
    e = mtrain_env.raw_env(num_players=3, max_pips=6, hand_size=5)
    e.reset(seed=6)
    for _ in range(6):
        e.step(e.legal_actions()[0])
    s = e.state_obj
    assert s.blocked is False
    view = public_view(s, e.config, 1)
    for k in range(3):
        sample = sample_state(e.pure_game, view, np.random.default_rng(k))
        assert sample.blocked is False
        assert sample.hands[1] == s.hands[1] and sample.trains == s.trains
