"""The OpenSpiel games (mtrain_env.openspiel) against the envs, and as OpenSpiel games.

* Differential: the env and the OpenSpiel game, fed the env's deal and draws as chance
  outcomes, agree at every step on the seat on turn, the legal actions, the observation
  tensor, and at the end on the returns; random games over several configs (2-8 players,
  variant flags, sessions; block with 4 and 2 players, matches).
* Chance: the deal is one chance node per tile, a draw one per boneyard tile, uniform.
* Hidden information: a seat's information state and observation are the same in every
  resampled state (the hidden tiles differ), clones are independent, serialization
  round-trips, bad parameters raise naming the parameter.
"""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import mtrain_env.openspiel  # noqa: E402  (registers the games)
from mtrain_env.block.env import raw_env as block_env  # noqa: E402
from mtrain_env.mexican_train.env import raw_env as mt_env  # noqa: E402
from mtrain_env.tilegame.tiles import bits_list  # noqa: E402

MT_CONFIGS = [
    {"num_players": 2, "max_pips": 6},
    {"num_players": 3, "max_pips": 9, "one_tile_opening": True},
    {"num_players": 4, "max_pips": 12},
    {"num_players": 5, "max_pips": 12, "rules": "cardinal"},
    {"num_players": 8, "max_pips": 12, "blank_penalty": True, "one_double_per_turn": True},
    {"num_players": 2, "max_pips": 6, "rounds": 3, "reward": "win", "positive_scoring": True},
    {"num_players": 4, "max_pips": 9, "engine_holder_opens": True, "reward": "penalty"},
]
BLOCK_CONFIGS = [
    {},
    {"num_players": 2},
    {"match": True, "target": 40},
    {"rules": "openspiel", "num_players": 2},
]
_MT_KEYS = {
    "num_players": "players",
    "max_pips": "max_pips",
    "rules": "rules",
    "rounds": "rounds",
    "reward": "reward",
}
_BLOCK_KEYS = {
    "num_players": "players",
    "rules": "rules",
    "reward": "reward",
    "target": "target",
    "match": "match",
}


def mt_game(kw: dict) -> pyspiel.Game:
    params = {_MT_KEYS[k]: v for k, v in kw.items() if k in _MT_KEYS}
    flags = [k for k, v in kw.items() if k not in _MT_KEYS and v]
    if flags:
        params["flags"] = "+".join(flags)
    return pyspiel.load_game(mtrain_env.openspiel.mexican_train.GAME_NAME, params)


def block_game(kw: dict) -> pyspiel.Game:
    return pyspiel.load_game(mtrain_env.openspiel.block.GAME_NAME, {_BLOCK_KEYS[k]: v for k, v in kw.items()})


def _mt_dealt_hands(env) -> list[int]:
    """The hands as dealt (before R5 takes the engine out of its holder's hand)."""
    s = env.unwrapped.state_obj
    hands = list(s.hands)
    c = env.unwrapped.config
    engine_id = c.tiles.double_id(s.engine)
    if c.engine_holder_opens and s.engine_placed:  # called right after the deal: the holder opens
        hands[s.first_player] |= 1 << engine_id
    return hands


def _deal(state, hands: list[int]) -> None:
    """Feed a deal to the OpenSpiel state's chance nodes, seat 0 first."""
    for h in hands:
        for t in bits_list(h):
            assert state.is_chance_node()
            assert t in dict(state.chance_outcomes())
            state.apply_action(t)


def _play_both(env, state, dealt, rng: np.random.Generator, on_draw=None) -> None:
    """Play one random game on the env and the OpenSpiel state in lockstep, checking every step."""
    env.reset(seed=int(rng.integers(1 << 30)))
    _deal(state, dealt(env))
    agents = env.possible_agents
    totals = dict.fromkeys(agents, 0.0)
    while not all(env.terminations.values()):
        agent = env.agent_selection
        seat = agents.index(agent)
        assert state.current_player() == seat
        legal = env.unwrapped.legal_actions()
        assert state.legal_actions() == legal
        obs = env.observe(agent)["observation"]
        np.testing.assert_array_equal(np.asarray(state.observation_tensor(seat), np.float32), obs)
        np.testing.assert_array_equal(np.asarray(state.information_state_tensor(seat), np.float32), obs)
        action = legal[int(rng.integers(len(legal)))]
        drawn = on_draw(env, action) if on_draw else None
        env.step(action)
        state.apply_action(action)
        if drawn is not None:
            assert state.is_chance_node()
            state.apply_action(drawn)
        for a in agents:
            totals[a] += env.rewards[a]
        if not all(env.terminations.values()) and state.is_chance_node():
            # a new round / hand: deal the env's new hands
            _deal(state, dealt(env))
    assert state.is_terminal()
    assert state.returns() == pytest.approx([totals[a] for a in agents])


def _mt_draw(env, action: int):
    raw = env.unwrapped
    return raw.state_obj.boneyard[-1] if action == raw.DRAW else None


@pytest.mark.parametrize("kw", MT_CONFIGS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_mexican_train_agrees_with_the_env(kw: dict) -> None:
    rng = np.random.default_rng(13)
    game = mt_game(kw)
    for _ in range(3):
        _play_both(mt_env(**kw), game.new_initial_state(), _mt_dealt_hands, rng, _mt_draw)


@pytest.mark.parametrize(
    "kw", BLOCK_CONFIGS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()) or "default"
)
def test_block_agrees_with_the_env(kw: dict) -> None:
    rng = np.random.default_rng(7)
    game = block_game(kw)
    for _ in range(5):
        _play_both(
            block_env(**kw), game.new_initial_state(), lambda env: list(env.unwrapped.state_obj.hands), rng
        )


@pytest.mark.slow
@pytest.mark.parametrize("kw", MT_CONFIGS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_mexican_train_agrees_with_the_env_many_games(kw: dict) -> None:
    rng = np.random.default_rng(2026)
    game = mt_game(kw)
    for _ in range(40):
        _play_both(mt_env(**kw), game.new_initial_state(), _mt_dealt_hands, rng, _mt_draw)


def test_the_deal_and_the_draws_are_uniform_chance_nodes() -> None:
    game = mt_game({"num_players": 2, "max_pips": 6})
    state = game.new_initial_state()
    config = game.static.config
    nodes = 0
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        assert sum(p for _, p in outcomes) == pytest.approx(1.0)
        assert len({p for _, p in outcomes}) == 1
        # the engine (6-6) is set aside (R5): never dealt
        assert config.tiles.double_id(6) not in dict(outcomes)
        state.apply_action(outcomes[nodes % len(outcomes)][0])
        nodes += 1
    assert nodes == 2 * config.hand_size
    boneyard = config.num_tiles - 1 - nodes
    # play until someone draws: the tile is a chance node over the boneyard
    while not state.is_terminal():
        draw = config.draw_action
        if draw in state.legal_actions():
            state.apply_action(draw)
            assert state.is_chance_node()
            assert len(state.chance_outcomes()) == len(state.game_state.boneyard) <= boneyard
            return
        state.apply_action(state.legal_actions()[0])
    pytest.fail("no draw in the game")


def test_hidden_tiles_stay_hidden_and_resampling_keeps_the_infostate() -> None:
    game = mt_game({"num_players": 4, "max_pips": 12})
    rng = np.random.default_rng(3)
    state = game.new_initial_state()
    for _step in range(300):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            continue
        p = state.current_player()
        other = (p + 1) % 4
        info = state.information_state_string(p)
        hidden = state.game_state.hands[other]
        # p reads the other hand's size when it is picked up ("p1 picks up 12 tiles"), never its tiles
        picked = [line for line in info.splitlines() if line.startswith(f"p{other} picks up ")]
        assert picked == [f"p{other} picks up {game.static.config.hand_size} tiles"]
        changed = False
        for k in range(3):
            r = state.resample(p, np.random.default_rng(k))
            assert r.information_state_string(p) == info
            assert r.observation_string(p) == state.observation_string(p)
            np.testing.assert_array_equal(r.observation_tensor(p), state.observation_tensor(p))
            assert r.legal_actions() == state.legal_actions()
            changed |= r.game_state.hands[other] != hidden
        assert changed or state.game_state.hands[other].bit_count() <= 1
        la = state.legal_actions()
        state.apply_action(la[int(rng.integers(len(la)))])
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    if not state.is_terminal() and not state.is_chance_node():
        p = state.current_player()
        assert state.resample_from_infostate(p, sampler).information_state_string(p) == (
            state.information_state_string(p)
        )


def test_block_resampling_keeps_the_infostate() -> None:
    game = block_game({})
    rng = np.random.default_rng(5)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            continue
        p = state.current_player()
        r = state.resample(p, rng)
        assert r.information_state_string(p) == state.information_state_string(p)
        assert r.legal_actions() == state.legal_actions()
        la = state.legal_actions()
        state.apply_action(la[int(rng.integers(len(la)))])


def test_clone_is_independent_and_serialization_round_trips() -> None:
    for game in (mt_game({"num_players": 3, "max_pips": 9, "rounds": 2}), block_game({"match": True})):
        rng = np.random.default_rng(1)
        state = game.new_initial_state()
        for _ in range(80):
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            else:
                la = state.legal_actions()
                state.apply_action(la[int(rng.integers(len(la)))])
        clone = state.clone()
        before = str(state)
        while not clone.is_terminal():
            if clone.is_chance_node():
                clone.apply_action(clone.chance_outcomes()[0][0])
            else:
                clone.apply_action(clone.legal_actions()[0])
        assert str(state) == before
        game2, state2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
        assert str(game2) == str(game)
        assert str(state2) == before
        for p in range(game.num_players()):
            assert state2.information_state_string(p) == state.information_state_string(p)


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("mtrain_mexican_train", {"flags": "one_tile_openin"}, "unknown variant flag 'one_tile_openin'"),
        ("mtrain_mexican_train", {"reward": "wins"}, "reward must be one of"),
        ("mtrain_mexican_train", {"players": 9}, "R3: num_players"),
        ("mtrain_block_dominoes", {"players": 3}, "B2: num_players"),
    ],
)
def test_bad_parameters_name_the_parameter(name: str, params: dict, message: str) -> None:
    with pytest.raises(Exception, match=message):
        pyspiel.load_game(name, params)


def test_game_types_follow_the_reward_mode() -> None:
    zero = mt_game({"num_players": 2, "max_pips": 6})
    general = mt_game({"num_players": 2, "max_pips": 6, "reward": "penalty"})
    assert zero.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert general.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    for game in (zero, block_game({})):
        t = game.get_type()
        assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
        assert t.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
        assert t.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
        assert t.reward_model == pyspiel.GameType.RewardModel.TERMINAL


@pytest.mark.parametrize("which", ["mexican_train", "block"])
def test_openspiel_ismcts_bot_runs_unchanged(which: str) -> None:
    """OpenSpiel's ISMCTSBot as shipped (its resample_from_infostate calls, info-state keys)."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = mt_game({"num_players": 2, "max_pips": 6}) if which == "mexican_train" else block_game({})
    random_state = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(
        game, mcts.RandomRolloutEvaluator(1, random_state), 1.0, 20, random_state=random_state
    )
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            continue
        legal = state.legal_actions()
        action = bot.step(state)
        assert action in legal
        searched += len(legal) > 1
        state.apply_action(action)
    assert searched > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "kw", BLOCK_CONFIGS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()) or "default"
)
def test_block_agrees_with_the_env_many_games(kw: dict) -> None:
    rng = np.random.default_rng(2026)
    game = block_game(kw)
    for _ in range(100):
        _play_both(
            block_env(**kw), game.new_initial_state(), lambda env: list(env.unwrapped.state_obj.hands), rng
        )
