"""The partnership_dominoes_v0 env contract: PettingZoo suite, codec, layout, masks, snapshots,
pickling, rendering, hidden information and bad input (rule ids from mtrain_env.block.core.rules)."""

from __future__ import annotations

import contextlib
import io
import json
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import mtrain_env
from mtrain_env.block import raw_env
from mtrain_env.block.core.config import GameConfig
from mtrain_env.block.core.state import Phase
from mtrain_env.block.render import render_text
from mtrain_env.block.rewards import REWARD_MODES

CONFIGS: list[Any] = [
    pytest.param({}, id="default"),
    pytest.param({"num_players": 2}, id="players2"),
    pytest.param({"rules": "openspiel"}, id="preset-openspiel"),
    pytest.param({"rules": "openspiel", "num_players": 2}, id="preset-openspiel-players2"),
    pytest.param({"first_opener": "seat0"}, id="first_opener-seat0"),
    pytest.param({"match": True, "opener": "partner"}, id="match-opener-partner"),
    pytest.param({"match": True, "opener": "double_six"}, id="match-opener-double_six"),
    pytest.param({"match": True, "double_opening": True}, id="match-double_opening"),
    pytest.param({"redeal_doubles": 4}, id="redeal4"),
    pytest.param({"redeal_doubles": None}, id="redeal-off"),
    pytest.param({"match": True, "closed_scoring": "both", "target": 50}, id="match-closed-both-50"),
    pytest.param({"closed_tie": "closer_loses"}, id="tie-closer_loses"),
    pytest.param({"closed_tie": "opener"}, id="tie-opener"),
    pytest.param({"match": True, "scoring": "ten"}, id="match-ten"),
    pytest.param({"match": True, "target": 200}, id="match-200"),
    pytest.param({"counter_clockwise": True}, id="counter_clockwise"),
    pytest.param({"match": True, "num_players": 2}, id="match-players2"),
    *[pytest.param({"reward": r, "match": True}, id=f"reward-{r}") for r in REWARD_MODES],
]
T = [[a, b] for a in range(7) for b in range(a, 7)]  #: tiles by id, as JSON pairs
CONSTRUCTORS = [pytest.param(mtrain_env.block.env, id="env"), pytest.param(raw_env, id="raw_env")]


def _quiet(fn: Callable[[], None]) -> None:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        fn()


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize("kwargs", CONFIGS)
def test_pettingzoo_suite(make: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """PettingZoo's api_test, seed_test and render_test over every config family."""
    _quiet(lambda: api_test(make(**kwargs), num_cycles=400))
    _quiet(lambda: seed_test(lambda **kw: make(**kwargs, **kw), num_cycles=400))
    _quiet(lambda: render_test(lambda render_mode=None: make(**kwargs, render_mode=render_mode)))


def test_registered_and_exported() -> None:
    """The env is registered like mexican_train_v0 and exported as mtrain_env.block_dominoes_env."""
    import pettingzoo

    assert mtrain_env.REGISTERED_ENVS["partnership_dominoes_v0"] == "mtrain_env.block.env:env"
    env = pettingzoo.make("aec", "partnership_dominoes_v0")
    assert env.metadata["name"] == "partnership_dominoes_v0"
    assert env.unwrapped.metadata["render_modes"] == ["ansi", "human"]
    assert mtrain_env.block_dominoes_env is mtrain_env.block.env


# ------------------------------------------------------------------------- layout, masks
def _random_steps(env: Any, rng: np.random.Generator, limit: int) -> None:
    for _ in range(limit):
        if all(env.terminations.values()):
            return
        env.step(int(rng.choice(env.legal_actions())))


@pytest.mark.parametrize("players", [4, 2])
def test_layout_views_are_the_state(players: int) -> None:
    """Each named view holds what the layout says, relative to the observer in play order."""
    env = raw_env(num_players=players, counter_clockwise=players == 4)
    layout = env.observation_layout
    size = sum(v.slice.stop - v.slice.start for v in layout.values())
    space: Any = env.observation_space("player_0")
    assert size == space["observation"].shape[0]
    rng = np.random.default_rng(5)
    for seed in range(5):
        env.reset(seed=seed)
        _random_steps(env, rng, int(rng.integers(0, 20)))
        s = env.state_obj
        order = env.game.order
        for seat, agent in enumerate(env.possible_agents):
            obs = env.observe(agent)["observation"]
            assert obs.dtype == np.float32 and obs in space["observation"]
            view = {k: obs[v.slice].reshape(v.shape) for k, v in layout.items()}
            assert np.flatnonzero(view["hand"]).tolist() == [i for i in range(28) if s.hands[seat] >> i & 1]
            assert np.flatnonzero(view["played"]).tolist() == [i for i in range(28) if s.table >> i & 1]
            for k, q in enumerate(order[seat]):
                assert np.flatnonzero(view["played_by"][k]).tolist() == [
                    i for i in range(28) if s.played_by[q] >> i & 1
                ]
                assert view["hand_counts"][k] == pytest.approx(s.hands[q].bit_count() / 7)
                assert view["opener"][k] == (q == s.opener)
                assert view["turn"][k] == (q == s.current and s.phase == Phase.PLAYING)
                if k:
                    assert np.flatnonzero(view["voids"][k - 1]).tolist() == [
                        v for v in range(7) if s.voids[q] >> v & 1
                    ]
            if s.line:
                assert view["ends"].argmax(axis=1).tolist() == s.ends and view["ends"].sum() == 2
            else:
                assert not view["ends"].any()


def test_masks_zero_off_turn_never_empty_on_turn() -> None:
    """The mask (and infos' mask) is all-zero off turn and never all-zero on turn."""
    env = raw_env(match=True, target=30)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    while not all(env.terminations.values()):
        seat = env.state_obj.current
        for p, agent in enumerate(env.possible_agents):
            mask = env.observe(agent)["action_mask"]
            assert (mask.any()) == (p == seat)
            assert np.array_equal(env.infos[agent]["action_mask"], mask)
        env.step(int(rng.choice(env.legal_actions())))
    for agent in env.possible_agents:
        assert not env.observe(agent)["action_mask"].any()


def test_rewards_zero_sum_and_partners_equal() -> None:
    """Rewards: every hand's rewards sum to zero; partners always get the same reward."""
    for mode in REWARD_MODES:
        env = raw_env(match=True, target=60, reward=mode)
        env.reset(seed=1)
        rng = np.random.default_rng(1)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        while not all(env.terminations.values()):
            env.step(int(rng.choice(env.legal_actions())))
            assert sum(env.rewards.values()) == pytest.approx(0.0)
            assert env.rewards["player_0"] == env.rewards["player_2"]
            assert env.rewards["player_1"] == env.rewards["player_3"]
            for a, r in env.rewards.items():
                totals[a] += r
        d = env.state_dict()
        diff = d["scores"][1] - d["scores"][0]
        if mode == "raw":
            assert totals["player_0"] == pytest.approx(diff)
        elif mode == "points":
            assert totals["player_0"] == pytest.approx(diff / 168)
        else:
            assert totals["player_0"] == (1.0 if d["match_loser"] == 1 else -1.0)


# ------------------------------------------------------------------------- snapshots
@pytest.mark.parametrize(
    "kwargs", [{}, {"num_players": 2, "match": True}, {"match": True, "closed_scoring": "both", "target": 40}]
)
def test_state_dict_round_trip_and_lockstep(kwargs: dict[str, Any]) -> None:
    """state_dict -> JSON -> load_state_dict reproduces the env: same observations, then the same future."""
    rng = np.random.default_rng(3)
    for seed in range(6):
        env = raw_env(**kwargs)
        env.reset(seed=seed)
        _random_steps(env, rng, int(rng.integers(0, 40)))
        d = json.loads(json.dumps(env.state_dict()))
        twin = raw_env(**kwargs)
        twin.load_state_dict(d)
        assert twin.state_dict() == env.state_dict()
        move_rng = np.random.default_rng(seed)
        for _ in range(300):
            for agent in env.possible_agents:
                a, b = env.observe(agent), twin.observe(agent)
                assert np.array_equal(a["observation"], b["observation"])
                assert np.array_equal(a["action_mask"], b["action_mask"])
            assert env.rewards == twin.rewards and env.terminations == twin.terminations
            if all(env.terminations.values()):
                break
            action = int(move_rng.choice(env.legal_actions()))
            env.step(action)
            twin.step(action)
        assert twin.state_dict() == env.state_dict()


def test_pickle_and_ezpickle() -> None:
    """Pickling keeps the live game (EzPickle rebuilds the config, the snapshot restores play)."""
    env = raw_env(match=True, counter_clockwise=True)
    env.reset(seed=4)
    _random_steps(env, np.random.default_rng(4), 10)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.config == env.config and clone.state_dict() == env.state_dict()
    wrapped = mtrain_env.block_dominoes_env(num_players=2)
    wrapped.reset(seed=2)
    clone_w = pickle.loads(pickle.dumps(wrapped))
    assert clone_w.unwrapped.state_dict() == wrapped.unwrapped.state_dict()


# ------------------------------------------------------------------------- hidden information
def _deal_json(hands: list[set[int]]) -> dict[str, Any]:
    return {"hands": [[T[i] for i in sorted(h)] for h in hands]}


def _hidden_twin(hands: list[set[int]], played: list[set[int]], voids: list[int], seat: int, rng: Any) -> Any:
    """Hands that differ from ``hands`` only in what seat ``seat`` cannot see, consistent with
    the public history: others keep the tiles they laid and the pips they passed on stay absent."""
    from mtrain_env.tilegame.tiles import tile_set

    tiles = tile_set(6).tiles
    others = [q for q in range(len(hands)) if q != seat]
    pool = [t for q in others for t in hands[q] - played[q]]
    for _ in range(200):
        perm = [pool[int(i)] for i in rng.permutation(len(pool))]
        out = [set(h) for h in hands]
        k = 0
        for q in others:
            keep = len(hands[q] - played[q])
            out[q] = set(played[q]) | set(perm[k : k + keep])
            k += keep
        if (
            all(not any(voids[q] >> v & 1 for t in out[q] - played[q] for v in tiles[t]) for q in others)
            and out != hands
        ):
            return out
    return None


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_no_leak_observation_infos_render_view(seat: int) -> None:
    """A seat's observation, infos, public view and render are invariant to hidden hands
    given the same public history (the same deal for it, the same moves by everyone)."""
    rng = np.random.default_rng(seat)
    compared = 0
    for seed in range(40):
        env = raw_env(redeal_doubles=None)
        env.reset(seed=seed)
        hands0 = [{i for i in range(28) if h >> i & 1} for h in env.state_obj.hands]
        actions = []
        for _ in range(int(rng.integers(4, 30))):
            if all(env.terminations.values()):
                break
            actions.append(int(rng.choice(env.legal_actions())))
            env.step(actions[-1])
        s = env.state_obj
        played = [{i for i in range(28) if m >> i & 1} for m in s.played_by]
        twin_hands = _hidden_twin(hands0, played, s.voids, seat, rng)
        if twin_hands is None:
            continue
        a_env, b_env = raw_env(redeal_doubles=None), raw_env(redeal_doubles=None)
        a_env.reset(seed=seed, options={"deal": _deal_json(hands0)})
        b_env.reset(seed=seed, options={"deal": _deal_json(twin_hands)})
        agent = f"player_{seat}"
        ok = True
        for action in [None, *actions]:
            if action is not None:
                if action not in b_env.legal_actions():
                    ok = False
                    break
                a_env.step(action)
                b_env.step(action)
            if a_env.state_obj.phase != b_env.state_obj.phase:
                ok = False
                break
            if a_env.state_obj.phase != Phase.PLAYING:
                break  # the hand's end shows every hand (001): public from then on
            oa, ob = a_env.observe(agent), b_env.observe(agent)
            assert np.array_equal(oa["observation"], ob["observation"])
            assert np.array_equal(oa["action_mask"], ob["action_mask"])
            assert np.array_equal(a_env.infos[agent]["action_mask"], b_env.infos[agent]["action_mask"])
            assert a_env.public_view(agent) == b_env.public_view(agent)
            assert render_text(a_env.game, a_env.state_obj, seat) == render_text(
                b_env.game, b_env.state_obj, seat
            )
        compared += ok
    assert compared >= 10


def test_render_shows_only_the_hand_on_turn() -> None:
    """ansi render: the line and counts, and the hand of the seat on turn only; all hands once over."""
    env = raw_env(render_mode="ansi")
    env.reset(seed=9)
    text = env.render()
    assert isinstance(text, str)
    seat = env.state_obj.current
    assert f"player_{seat}'s hand" in text
    assert sum("'s hand" in line for line in text.splitlines()) == 1
    _random_steps(env, np.random.default_rng(9), 200)
    text = env.render()
    assert isinstance(text, str) and "hand over" in text and "'s hand" not in text


# ------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"num_players": 3}, ValueError),
        ({"num_players": True}, TypeError),
        ({"num_players": 2, "opener": "partner"}, ValueError),
        ({"opener": "loser"}, ValueError),
        ({"first_opener": 0}, TypeError),
        ({"redeal_doubles": 3}, ValueError),
        ({"redeal_doubles": 5.0}, TypeError),
        ({"closed_scoring": "all"}, ValueError),
        ({"closed_tie": "random"}, ValueError),
        ({"scoring": "tenths"}, ValueError),
        ({"target": 0}, ValueError),
        ({"target": "100"}, TypeError),
        ({"counter_clockwise": 1}, TypeError),
        ({"match": "yes"}, TypeError),
        ({"rules": "pagat"}, ValueError),
        ({"hand_size": 9}, TypeError),
        ({"reward": "win"}, ValueError),
        ({"render_mode": "rgb_array"}, ValueError),
    ],
)
def test_bad_config(kwargs: dict[str, Any], error: type[Exception]) -> None:
    """Bad configuration is refused at construction, naming the keyword."""
    with pytest.raises(error):
        raw_env(**kwargs)


def test_config_presets_and_explicit_override() -> None:
    """Presets resolve; an explicit keyword wins; None keeps the preset (but means 'off' for redeal)."""
    c = GameConfig.make(rules="openspiel")
    assert c.first_opener == "seat0" and c.redeal_doubles is None
    assert GameConfig.make(rules="openspiel", redeal_doubles=5).redeal_doubles == 5
    assert GameConfig.make(redeal_doubles=None).redeal_doubles is None
    assert GameConfig.make(opener=None).opener == "winner"
    assert GameConfig.make(scoring="ten", target=30).target == 30


@pytest.mark.parametrize(
    ("deal", "error", "match"),
    [
        ([], TypeError, "dict"),
        ({"hands": T[:7]}, ValueError, "B2"),
        ({"hands": [T[0:7], T[7:14], T[14:21], T[21:27]]}, ValueError, "B3"),
        ({"hands": [T[0:7], T[7:14], T[14:21], [*T[21:27], T[0]]]}, ValueError, "twice"),
        ({"hands": [T[0:7], T[7:14], T[14:21], [*T[21:27], [6, 7]]]}, ValueError, "R1"),
        ({"hands": [T[0:7], T[7:14], T[14:21], [*T[21:27], "6-6"]]}, TypeError, "pair"),
        ({"hands": [T[0:7], T[7:14], T[14:21], [*T[21:27], [6.0, 6]]]}, TypeError, "ints"),
        ({"hands": [[], T[0:14], T[14:21], T[21:28]]}, ValueError, "empty"),
        ({"hands": [T[0:7], T[7:14], T[14:21], T[21:28]], "boneyard": []}, ValueError, "exactly"),
    ],
)
def test_bad_deal(deal: Any, error: type[Exception], match: str) -> None:
    """Fixed deals are validated (B1-B3) before any change."""
    env = raw_env(redeal_doubles=None)
    with pytest.raises(error, match=match):
        env.reset(options={"deal": deal})


def test_bad_options_and_actions() -> None:
    """Bad reset options and actions raise (raw_env) or end the game with -1 (wrapped env)."""
    env = raw_env()
    with pytest.raises(TypeError):
        env.reset(options=[("opener", 1)])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="B5"):
        env.reset(options={"opener": 4})
    with pytest.raises(TypeError):
        env.reset(options={"opener": "1"})
    with pytest.warns(UserWarning, match="unknown reset option"):
        env.reset(options={"first_player": 1})
    with pytest.raises(RuntimeError):
        raw_env().observe("player_0")
    env.reset(seed=0)
    state = env.state_dict()
    for bad, error in (
        (57, ValueError),
        (-1, ValueError),
        (1.0, TypeError),
        (None, TypeError),
        ("0", TypeError),
    ):
        with pytest.raises(error):
            env.step(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="B9"):
        env.step(env.PASS)
    assert env.state_dict() == state  # nothing changed
    env.step(np.int64(env.legal_actions()[0]))  # type: ignore[arg-type]  # numpy ints are accepted
    with pytest.raises(TypeError):
        env.encode_action((6, 6), True)
    with pytest.raises(ValueError):
        env.encode_action((6, 6), 2)
    with pytest.raises(ValueError, match="R1"):
        env.encode_action((6, 7), 0)
    with pytest.raises(ValueError):
        env.decode_action(57)
    wrapped = mtrain_env.block_dominoes_env()
    wrapped.reset(seed=0)
    illegal = next(a for a in range(56) if a not in wrapped.unwrapped.legal_actions())
    agent = wrapped.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped.step(illegal)
    assert wrapped.rewards[agent] == -1 and all(wrapped.terminations.values())


def test_bad_state_dicts_never_half_load() -> None:
    """Corrupt snapshots raise, naming the rule, and leave the env unchanged."""
    env = raw_env()
    env.reset(seed=1)
    _random_steps(env, np.random.default_rng(1), 6)
    good = env.state_dict()

    def broken(edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        d = json.loads(json.dumps(good))
        edit(d)
        return d

    cases = [
        (lambda d: d["line"].reverse(), "B8"),
        (lambda d: d["hands"][0].append(d["hands"][1][0]), "twice"),
        (lambda d: d["hands"][0].pop(), "B1"),
        (lambda d: d.__setitem__("scores", [1, 0]), "B13"),
        (lambda d: d["config"].__setitem__("target", 50), "different config"),
        (lambda d: d.__setitem__("phase", "DONE"), "phase"),
        (lambda d: d["env"].__setitem__("agent_selection", "player_9"), "agent"),
        (lambda d: d["env"].__setitem__("rng", {"bit_generator": "nope"}), "bit-generator"),
        (lambda d: d.__setitem__("format", 99), "format"),
        (lambda d: d["played_by"].__setitem__(0, []), "B8"),
        (lambda d: d["voids"].__setitem__(0, sorted({v for t in d["hands"][0] for v in t})), "B9"),
    ]
    for edit, match in cases:
        with pytest.raises((ValueError, TypeError), match=match):
            env.load_state_dict(broken(edit))
        assert env.state_dict() == good


def test_state_copy_is_independent() -> None:
    """GameState.copy (for search agents): playing on the copy leaves the original untouched."""
    env = raw_env(match=True)
    env.reset(seed=8)
    s = env.state_obj
    before = env.state_dict()
    c = s.copy()
    rng = np.random.default_rng(8)
    while c.phase == Phase.PLAYING:
        legal = env.game.legal_moves(c)
        env.game.apply(c, legal[int(rng.integers(len(legal)))])
    assert c.results and not s.results and env.state_dict() == before
