"""Training infrastructure: the single-agent wrapper, the league, the guarded policy, the
``ppo`` agent, evaluation, behaviour cloning, and short training / resume runs.

Rule ids: R24 (round penalties) and R25 (sessions) for the rewards the wrapper forwards;
R15 (a seat acts for itself) for the opponents playing every non-learner turn.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
import torch as th

import agents
from agents.mexican_train.base import Agent, Decision
from agents.mexican_train.league import HEURISTIC, SNAPSHOT, League, OpponentSpec, parse_weights
from mtrain_env.mexican_train.rewards import round_rewards
from tests import REPO
from training.single_agent import SingleAgentEnv

SMALL: dict[str, Any] = {"num_players": 3, "max_pips": 6}  # double-6, 3 seats: short rounds for fast tests


# --------------------------------------------------------------------------- helpers
class FirstLegal(Agent):
    """Deterministic test agent: always the lowest legal action id."""

    name = "first_legal"

    def act(self, decision: Decision) -> int:
        return int(decision.legal_actions[0])


class Spy(Agent):
    """Records every decision it is given (and checks it against the live env when told)."""

    name = "spy"
    env: Any = None  # the SingleAgentEnv, set by tests
    log: list[tuple[int, Decision]] = []  # noqa: RUF012 - shared log across instances, on purpose

    def act(self, decision: Decision) -> int:
        Spy.log.append((decision.seat, decision))
        if Spy.env is not None:
            raw = Spy.env.raw
            agent_id = raw.possible_agents[decision.seat]
            # it is this seat's turn and the decision is exactly this seat's own observation
            assert raw.agent_selection == agent_id
            np.testing.assert_array_equal(decision.observation, raw.observe(agent_id)["observation"])
            np.testing.assert_array_equal(decision.action_mask, raw.observe(agent_id)["action_mask"])
            assert decision.view.hand == raw.state_obj.hands[decision.seat]
        legal = decision.legal_actions
        return int(legal[int(self.rng.integers(len(legal)))])


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny networks on a shared 2-core machine: extra threads only contend (as in training)."""
    threads = th.get_num_threads()
    th.set_num_threads(1)
    yield
    th.set_num_threads(threads)


@pytest.fixture
def test_agents(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(agents.REGISTRY, FirstLegal.name, FirstLegal)
    monkeypatch.setitem(agents.REGISTRY, Spy.name, Spy)
    Spy.log = []
    Spy.env = None
    yield
    Spy.log = []
    Spy.env = None


def play_episode(env: SingleAgentEnv, rng: np.random.Generator) -> tuple[float, int]:
    """Random legal learner moves to the end of the episode; (return, learner steps)."""
    total, steps = 0.0, 0
    while True:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, reward, terminated, truncated, _ = env.step(action)
        total += reward
        steps += 1
        if terminated or truncated:
            return total, steps


# --------------------------------------------------------------------------- wrapper
def test_wrapper_passes_gymnasium_and_sb3_env_checkers() -> None:
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    for kwargs in ({}, SMALL, {**SMALL, "rounds": 2, "reward": "win"}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # illegal random actions are reported as warnings
            check_env(SingleAgentEnv(env_kwargs=kwargs), skip_render_check=True)
            sb3_check_env(SingleAgentEnv(env_kwargs=kwargs))


def test_observation_bounds_are_finite_and_hold() -> None:
    env = SingleAgentEnv(env_kwargs={**SMALL, "rounds": 3}, seat="rotate")
    assert isinstance(env.observation_space, gymnasium.spaces.Box)
    assert np.isfinite(env.observation_space.high).all()
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    for _ in range(4):
        done = False
        while not done:
            assert env.observation_space.contains(obs)
            obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert env.observation_space.contains(obs)
        obs, _ = env.reset()


def test_masks_and_observations_are_the_learner_seats_own() -> None:
    env = SingleAgentEnv(env_kwargs=SMALL, opponents=["random"])
    rng = np.random.default_rng(1)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            raw = env.raw
            learner = env.learner_id
            assert raw.agent_selection == learner  # the learner is on turn between steps
            own = raw.observe(learner)
            np.testing.assert_array_equal(obs, own["observation"])
            np.testing.assert_array_equal(env.action_masks(), own["action_mask"].astype(bool))
            assert sorted(np.flatnonzero(env.action_masks()).tolist()) == raw.legal_actions()
            assert env.action_masks().dtype == np.bool_
            assert set(info) == {"seat", "opponents", "action_mask"}  # nothing hidden in infos
            np.testing.assert_array_equal(info["action_mask"], env.action_masks())
            obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert not env.action_masks().any()  # nothing is legal once the episode is over


def test_learner_seat_rotates_or_randomizes_as_documented() -> None:
    n = SMALL["num_players"]
    rng = np.random.default_rng(2)
    rot = SingleAgentEnv(env_kwargs=SMALL, seat="rotate")
    seats = []
    for e in range(2 * n):
        rot.reset(seed=5) if e == 0 else rot.reset()
        seats.append(rot.learner_seat)
        play_episode(rot, rng)
    assert all(seats[i + 1] == (seats[i] + 1) % n for i in range(len(seats) - 1))

    rnd = SingleAgentEnv(env_kwargs=SMALL, seat="random")
    seen = []
    for e in range(30):
        rnd.reset(seed=11) if e == 0 else rnd.reset()
        seen.append(rnd.learner_seat)
        play_episode(rnd, rng)
    assert set(seen) == set(range(n))
    assert seen != sorted(seen)  # not a fixed cycle

    fixed = SingleAgentEnv(env_kwargs=SMALL, seat=2)
    for s in range(3):
        fixed.reset(seed=s)
        assert fixed.learner_seat == 2 and fixed.learner_id == "player_2"


def test_opponents_are_the_pools_agents_and_play_every_other_turn(test_agents: None) -> None:
    env = SingleAgentEnv(env_kwargs=SMALL, opponents={"spy": 1.0, "first_legal": 1.0})
    rng = np.random.default_rng(3)
    kinds = set()
    for seed in range(6):
        Spy.log = []
        env.reset(seed=seed)
        assert sorted(env.opponents) == sorted(s for s in range(3) if s != env.learner_seat)
        for seat, agent in env.opponents.items():
            spec = env.opponent_specs[seat]
            assert spec.kind == HEURISTIC and spec.name == agent.name
            assert isinstance(agent, (Spy, FirstLegal))
            kinds.add(agent.name)
        play_episode(env, rng)
        spy_seats = {s for s, a in env.opponents.items() if isinstance(a, Spy)}
        assert {s for s, _ in Spy.log} <= spy_seats  # a spy only ever moves for its own seat
        assert env.learner_seat not in {s for s, _ in Spy.log}
    assert kinds == {"spy", "first_legal"}


def test_no_leak_opponents_get_only_their_own_seats_information(test_agents: None) -> None:
    from mtrain_env.mexican_train.core.public import PublicView

    env = SingleAgentEnv(env_kwargs=SMALL, opponents=["spy"])
    Spy.env = env  # the spy asserts its decision equals its own seat's observation at call time
    rng = np.random.default_rng(4)
    for seed in range(3):
        env.reset(seed=seed)
        play_episode(env, rng)
    assert len(Spy.log) > 20
    fields = set(PublicView.__dataclass_fields__)
    assert "hands" not in fields and "boneyard" not in fields  # only counts of hidden tiles
    for seat, d in Spy.log:
        assert d.view.seat == seat


def test_episode_return_is_the_env_reward_of_the_learner_seat_r24() -> None:
    """The round's zero-sum reward reaches the learner even when an opponent ends the round."""
    env = SingleAgentEnv(env_kwargs=SMALL, opponents=["random"])
    rng = np.random.default_rng(5)
    ended_by_opponent = 0
    for seed in range(25):
        env.reset(seed=seed)
        total, _ = play_episode(env, rng)
        s = env.raw.state_obj
        last = s.round_scores[-1]
        expected = (np.mean(last) - last[env.learner_seat]) / (env.raw.config.hand_size * 6)
        assert total == pytest.approx(expected)
        ended_by_opponent += int(s.current != env.learner_seat)
    assert ended_by_opponent > 0


def test_session_rewards_are_summed_over_rounds_r25() -> None:
    env = SingleAgentEnv(env_kwargs={**SMALL, "rounds": 3, "reward": "zero_sum"})
    rng = np.random.default_rng(6)
    env.reset(seed=9)
    total, _ = play_episode(env, rng)
    s = env.raw.state_obj
    cfg = env.raw.config
    expected = sum(
        round_rewards("zero_sum", cfg, s.round_scores[: k + 1], k == len(s.round_scores) - 1)[
            env.learner_seat
        ]
        for k in range(len(s.round_scores))
    )
    assert len(s.round_scores) == 3
    assert total == pytest.approx(expected)


def test_wrapper_is_seeded_and_deterministic() -> None:
    def trace(seed: int) -> list[Any]:
        env = SingleAgentEnv(env_kwargs=SMALL, opponents=["random"])
        rng = np.random.default_rng(0)
        obs, info = env.reset(seed=seed)
        out = [obs.tobytes(), info["seat"]]
        for _ in range(60):
            obs, r, done, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            out += [obs.tobytes(), r]
            if done:
                obs, info = env.reset()
                out += [obs.tobytes(), info["seat"]]
        return out

    assert trace(7) == trace(7)
    assert trace(7) != trace(8)


def test_illegal_actions_terminate_or_raise() -> None:
    env = SingleAgentEnv(env_kwargs=SMALL)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1.0 and info["illegal_action"]
    with pytest.raises(RuntimeError):
        env.step(0)
    strict = SingleAgentEnv(env_kwargs=SMALL, illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(illegal)


def test_potential_shaping_telescopes_to_a_constant() -> None:
    """gamma = 1: shaped return - true return = -phi(s0) = own starting pips / scale."""
    plain = SingleAgentEnv(env_kwargs=SMALL)
    shaped = SingleAgentEnv(env_kwargs=SMALL, shaping=1.0, gamma=1.0)
    for seed in range(3):
        obs, _ = plain.reset(seed=seed)
        shaped.reset(seed=seed)
        hand = obs[plain.raw.layout["hand"].slice]
        pips0 = sum(a + b for (a, b), h in zip(plain.raw.config.tiles.tiles, hand, strict=True) if h)
        rng1, rng2 = np.random.default_rng(seed), np.random.default_rng(seed)
        r1, _ = play_episode(plain, rng1)
        r2, _ = play_episode(shaped, rng2)
        scale = plain.raw.config.hand_size * plain.raw.config.max_pips
        assert r2 - r1 == pytest.approx(pips0 / scale)


def test_get_state_set_state_continues_exactly(test_agents: None) -> None:
    a = SingleAgentEnv(env_kwargs=SMALL, opponents={"random": 1, "first_legal": 1})
    b = SingleAgentEnv(env_kwargs=SMALL, opponents={"random": 1})  # different pool: overwritten
    rng = np.random.default_rng(0)
    a.reset(seed=21)
    for _ in range(7):
        a.step(int(rng.choice(np.flatnonzero(a.action_masks()))))
    state = pickle.loads(pickle.dumps(a.get_state()))
    obs_b = b.set_state(state)
    np.testing.assert_array_equal(obs_b, a.raw.observe(a.learner_id)["observation"])
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(80):  # crosses episode ends: the env generators continue identically
        out_a = a.step(int(rng_a.choice(np.flatnonzero(a.action_masks()))))
        out_b = b.step(int(rng_b.choice(np.flatnonzero(b.action_masks()))))
        np.testing.assert_array_equal(out_a[0], out_b[0])
        assert out_a[1:4] == out_b[1:4]
        assert out_a[4]["seat"] == out_b[4]["seat"] and out_a[4]["opponents"] == out_b[4]["opponents"]
        np.testing.assert_array_equal(out_a[4]["action_mask"], out_b[4]["action_mask"])
        if out_a[2]:
            np.testing.assert_array_equal(a.reset()[0], b.reset()[0])
            assert a.learner_seat == b.learner_seat


# ---------------------------------------------------------------------------- league
def test_league_sampling_follows_the_documented_scheme() -> None:
    league = League(heuristics={"greedy": 3, "random": 1}, p_heuristic=0.5, p_latest=0.3, p_older=0.2)
    rng = np.random.default_rng(0)
    assert league.category_probabilities() == {"heuristic": 1.0, "latest": 0.0, "older": 0.0}
    early = league.sample(rng, 4000)
    assert all(s.kind == HEURISTIC for s in early)
    share_greedy = np.mean([s.name == "greedy" for s in early])
    assert abs(share_greedy - 0.75) < 0.03
    league.add_snapshot(100, "snap_a.pt")
    assert league.category_probabilities()["latest"] == pytest.approx(0.3 / 0.8)
    league.add_snapshot(200, "snap_b.pt")
    league.add_snapshot(300, "snap_c.pt")
    specs = league.sample(rng, 20000)
    latest = np.mean([s == OpponentSpec(SNAPSHOT, "snap_c.pt") for s in specs])
    older = [s.name for s in specs if s.kind == SNAPSHOT and s.name != "snap_c.pt"]
    heur = np.mean([s.kind == HEURISTIC for s in specs])
    assert abs(heur - 0.5) < 0.02 and abs(latest - 0.3) < 0.02
    assert abs(len(older) / len(specs) - 0.2) < 0.02
    assert abs(older.count("snap_a.pt") / len(older) - 0.5) < 0.04  # uniform over older ones


def test_league_snapshot_schedule_pruning_and_state_roundtrip() -> None:
    league = League(heuristics={"random": 1}, snapshot_every=1000, max_snapshots=2)
    assert not league.due(999) and league.due(1000)
    assert league.add_snapshot(1024, "s1.pt") == []
    assert league.next_snapshot_step == 2000
    league.add_snapshot(2048, "s2.pt")
    dropped = league.add_snapshot(3072, "s3.pt")
    assert [d.file for d in dropped] == ["s1.pt"] and league.files() == ["s2.pt", "s3.pt"]
    state = json.loads(json.dumps(league.state_dict()))
    again = League.from_state_dict(state)
    assert again == league
    r1, r2 = np.random.default_rng(3), np.random.default_rng(3)
    assert league.sample(r1, 50) == again.sample(r2, 50)
    assert parse_weights("greedy:2, random") == {"greedy": 2.0, "random": 1.0}
    with pytest.raises(ValueError):
        League(heuristics={})


def test_heuristics_and_evaluation_opponents_may_be_agent_specs(tmp_path: Path) -> None:
    """``--heuristics "mc[sims=2,z=2]:2,greedy"``: a spec's commas stay inside its brackets,
    the league seats the agent with its parameters (labelled with them), and the trainer's
    configuration checks a spec's parameters like bench does."""
    from agents.mexican_train.league import parse_weights
    from training.run_config import ConfigError, TrainConfig
    from training.single_agent import SingleAgentEnv

    weights = parse_weights("mc[sims=2,z=2]:2, greedy, tests.training.test_training:FirstLegal, random:0.5")
    plugin = "tests.training.test_training:FirstLegal"  # module:Class, no weight
    assert weights == {"mc[sims=2,z=2]": 2.0, "greedy": 1.0, plugin: 1.0, "random": 0.5}
    with pytest.raises(ValueError, match="the weight of 'greedy' must be a number > 0, got 'abc'"):
        parse_weights("greedy:abc")
    env = SingleAgentEnv(opponents={"mc[sims=2,z=2]": 1.0}, num_players=3, max_pips=6, seat=0)
    _obs, info = env.reset(seed=1)
    seated = list(env.opponents.values())
    assert all(a.rollouts == 2 and a.z == 2 for a in seated)
    assert info["opponents"] == ["mc[sims=2,z=2]"] * 2
    base = _tiny(tmp_path / "r")
    ok = TrainConfig(**{**vars(base), "heuristics": {"mc[sims=2]": 1.0}, "eval_opponents": ["mc[sims=2]"]})
    ok.validate()
    bad = TrainConfig(**{**vars(base), "heuristics": {"mc[sims=abc]": 1.0}})
    with pytest.raises(ConfigError, match="sims must be an int or None"):
        bad.validate()


def test_a_new_snapshot_reaches_envs_seating_agents_without_a_file(tmp_path: Path) -> None:
    """``set_league_state`` (every new snapshot) keeps the policy files the seated agents
    read; an ``mc`` opponent has ``path=None`` (it crashed the trainer's first snapshot)."""
    from training.single_agent import SingleAgentEnv

    env = SingleAgentEnv(opponents={"mc": 1.0}, league_root=tmp_path, num_players=3, max_pips=6, seat=0)
    env.reset(seed=1)
    assert any(getattr(a, "path", "x") is None for a in env.opponents.values())
    league = League(heuristics={"mc": 1.0}, snapshot_every=64)
    league.add_snapshot(64, "snap_000000000064.npz")
    env.set_league_state(league.state_dict(), str(tmp_path))
    assert env.league.files() == ["snap_000000000064.npz"]


# ------------------------------------------------------------------ policy robustness
def _policy(obs_dim: int = 20, n_actions: int = 30) -> Any:
    from gymnasium import spaces

    from training.policy import GuardedMaskablePolicy

    return GuardedMaskablePolicy(
        spaces.Box(0, 1, (obs_dim,), np.float32),
        spaces.Discrete(n_actions),
        lambda _: 1e-3,
        net_arch={"pi": [16], "vf": [16]},
        logit_bound=5.0,
    )


def test_bound_logits_is_finite_bounded_and_identity_near_zero() -> None:
    from training.policy import bound_logits

    x = th.tensor([0.01, -0.02, 1e9, -1e9, float("nan"), float("inf"), float("-inf")])
    y = bound_logits(x, 5.0)
    assert th.isfinite(y).all() and (y.abs() <= 5.0).all()
    assert y[:2] == pytest.approx([0.01, -0.02], abs=1e-5)


def test_guarded_policy_keeps_masked_distributions_valid_with_nan_weights() -> None:
    """sb3-contrib #81/#221: NaN logits made torch raise the Simplex ValueError."""
    policy = _policy()
    with th.no_grad():
        policy.action_net.weight.fill_(float("nan"))
    obs = th.rand(8, 20)
    mask = np.zeros((8, 30), dtype=bool)
    mask[:, [3, 7, 11]] = True
    th.distributions.Distribution.set_default_validate_args(True)  # the strict setting
    actions, _, log_prob = policy(obs, action_masks=mask)
    assert set(actions.tolist()) <= {3, 7, 11}
    assert th.isfinite(log_prob).all()


def test_nan_update_is_rolled_back_and_learning_rate_lowered() -> None:
    from training.policy import GuardedMaskablePolicy, RobustMaskablePPO

    env = SingleAgentEnv(env_kwargs=SMALL)
    model = RobustMaskablePPO(
        GuardedMaskablePolicy,
        env,
        learning_rate=1e-3,
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        seed=0,
        device="cpu",
    )
    model.learn(64)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.rollout_buffer.returns[:] = np.nan  # poison the value targets
    with pytest.warns(RuntimeWarning, match="rolled back"):
        model.train()
    assert model.nan_events == 1 and model.lr_scale == 0.5
    for p, q in zip(model.policy.parameters(), before, strict=True):
        assert th.equal(p, q)
    model.rollout_buffer.returns[:] = 0.0
    model.train()  # a finite update goes through
    assert model.nan_events == 1
    assert any(not th.equal(p, q) for p, q in zip(model.policy.parameters(), before, strict=True))
    assert model.policy.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3 * 0.5)


# ------------------------------------------------------------------------ ppo agent
@pytest.fixture(scope="module")
def saved_policy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from agents.policy_net import save_policy
    from training.policy import GuardedMaskablePolicy, RobustMaskablePPO

    d = tmp_path_factory.mktemp("policy")
    model = RobustMaskablePPO(
        GuardedMaskablePolicy,
        SingleAgentEnv(env_kwargs=SMALL),
        n_steps=64,
        batch_size=64,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [32, 32]},
    )
    model.learn(64)
    model.save(d / "model.zip")
    save_policy(model.policy, d / "policy.npz")
    return {"zip": d / "model.zip", "npz": d / "policy.npz"}


@pytest.mark.parametrize("kind", ["zip", "npz"])
def test_ppo_agent_loads_a_saved_policy_and_plays_legal_moves(
    saved_policy: dict[str, Path], kind: str
) -> None:
    from agents.mexican_train.ppo import PPOAgent
    from mtrain_env.mexican_train.env import raw_env
    from training.policy import policy_logits

    for deterministic in (True, False):
        agent = PPOAgent(seed=1, path=saved_policy[kind], deterministic=deterministic)
        env = raw_env(**SMALL)
        env.reset(seed=3)
        moves = 0
        while not all(env.terminations.values()):
            d = agents.decision_for(env, env.agent_selection)
            a = agent.act(d)
            assert d.action_mask[a] == 1
            if moves == 0:  # the fast numpy actor computes the policy's own logits
                with th.no_grad():
                    ref = policy_logits(agent.policy, th.as_tensor(d.observation).reshape(1, -1))[0].numpy()
                np.testing.assert_allclose(agent.logits(d.observation), ref, rtol=1e-4, atol=1e-5)
                if deterministic:
                    legal = np.flatnonzero(d.action_mask)
                    assert a == legal[np.argmax(ref[legal])]
            env.step(a)
            moves += 1
        assert moves > 10
    again = pickle.loads(pickle.dumps(agent))
    assert again._policy is None and again.path == str(saved_policy[kind])


def test_ppo_agent_refuses_another_game_configuration(saved_policy: dict[str, Path]) -> None:
    from agents.mexican_train.ppo import PPOAgent
    from mtrain_env.mexican_train.env import raw_env

    env = raw_env(num_players=4, max_pips=12)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"another game configuration|actions"):
        PPOAgent(path=saved_policy["npz"]).act(agents.decision_for(env, env.agent_selection))


# ------------------------------------------------------------------------ evaluation
def test_duplicate_evaluation_of_identical_strategies_is_an_exact_tie(test_agents: None) -> None:
    from training.evaluate import evaluate_agent

    res = evaluate_agent("first_legal", "first_legal", deals=3, seed=0, game=SMALL)
    assert res.games == 3 * 3  # deals x seats (one round each)
    assert res.diff == 0.0  # the learner plays every hand of each deal once
    assert res.learner_score == pytest.approx(res.opponent_score)


def test_evaluation_sees_a_weaker_learner(test_agents: None) -> None:
    """The random learner against first_legal on duplicate deals: numbers are consistent."""
    from training.evaluate import evaluate_agent

    res = evaluate_agent("random", "first_legal", deals=4, seed=1, game=SMALL)
    assert res.diff == pytest.approx(res.learner_score - res.opponent_score)
    assert 0.0 <= res.lowest_rate <= 1.0 and np.isfinite(res.diff_se)


def test_evaluation_of_a_policy_file(saved_policy: dict[str, Path]) -> None:
    from training.evaluate import evaluate

    (res,) = evaluate(["random"], deals=2, seed=0, game=SMALL, policy_path=saved_policy["npz"])
    assert res.opponent == "random" and res.games == 2 * 3
    assert np.isfinite(res.learner_score) and np.isfinite(res.diff)


# ----------------------------------------------------------------- behaviour cloning
def test_behaviour_cloning_learns_a_deterministic_expert(test_agents: None) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training import bc

    venv = DummyVecEnv([lambda: SingleAgentEnv(env_kwargs=SMALL) for _ in range(2)])
    data = bc.collect(venv, "first_legal", 3000, seed=0)  # a holdout of ~70 real choices
    obs_dim = SingleAgentEnv(env_kwargs=SMALL).raw.layout.size
    n_actions = 28 * (3 + 1) + 2  # T * (n + 1) + 2 for double-6 (T = 28) and 3 seats
    assert data["obs"].shape == (3000, obs_dim) and data["mask"].shape == (3000, n_actions)
    assert (data["mask"][np.arange(3000), data["action"]]).all()  # expert moves are legal
    first = np.argmax(data["mask"], axis=1)
    assert (data["action"] == first).all()
    th.manual_seed(0)  # before building the network: its init must not depend on earlier tests
    policy = _policy(obs_dim, n_actions)
    stats = bc.clone(policy, data, epochs=15, batch_size=128, lr=3e-3, seed=0)
    assert stats["holdout_choice_share"] > 0.05
    assert stats["holdout_choice_accuracy"] > 0.85 > stats["uniform_choice_accuracy"] + 0.2


# ------------------------------------------------------------------- vec envs
def test_sharded_vec_env_matches_the_in_process_vec_env() -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training.vec import ShardedVecEnv, VecMaskCache

    fns: list[Callable[[], gymnasium.Env]] = [lambda: SingleAgentEnv(env_kwargs=SMALL) for _ in range(3)]
    inner = ShardedVecEnv(fns, workers=2)
    sharded = VecMaskCache(inner)
    dummy = VecMaskCache(DummyVecEnv(fns))
    try:
        assert inner.shards == [[0, 1], [2]]
        for v in (sharded, dummy):
            v.seed(5)
        np.testing.assert_array_equal(sharded.reset(), dummy.reset())
        assert sharded.get_attr("learner_seat") == dummy.get_attr("learner_seat")
        rng = np.random.default_rng(0)
        episodes = 0
        for _ in range(60):
            masks = np.stack(sharded.env_method("action_masks"))
            np.testing.assert_array_equal(masks, np.stack(dummy.env_method("action_masks")))
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            a, b = sharded.step(actions), dummy.step(actions)
            for x, y in zip(a[:3], b[:3], strict=True):
                np.testing.assert_array_equal(x, y)
            episodes += int(a[2].sum())
        assert episodes > 0  # automatic resets happened, and the cached masks followed them
        sharded.set_attr("bc_seed", 9, indices=[2])
        assert sharded.get_attr("bc_seed") == [0, 0, 9]
        with pytest.raises(RuntimeError, match="no_such_method"):
            sharded.env_method("no_such_method", indices=[1])
    finally:
        sharded.close()
        dummy.close()


# ----------------------------------------------------------------- training runs
def _tiny(out: Path, **kw: Any) -> Any:
    from mtrain_env.mexican_train.core.config import GameConfig
    from training.train import TrainConfig

    base: dict[str, Any] = dict(
        steps=256,
        out=str(out),
        n_envs=2,
        vec="dummy",
        n_steps=64,
        batch_size=64,
        n_epochs=2,
        net_arch=[32, 32],
        heuristics={"random": 1.0},
        eval_opponents=["random"],
        eval_every=0,
        checkpoint_every=0,
        snapshot_every=0,
        progress=False,
        game=GameConfig.make(**SMALL),
    )
    base.update(kw)
    return TrainConfig(**base)


def test_trainer_run_from_python_refuses_a_directory_in_use(tmp_path: Path) -> None:
    """``Trainer.run()`` (the Python API, no command line) holds ``out``'s single-writer lock:
    a second writer is refused before anything is written; ``mtrain train`` runs it with
    ``lock=False`` under the lock it took itself."""
    from mtrain_env.tilegame.files import DirectoryInUseError, run_lock
    from training.train import Trainer

    out = tmp_path / "run"
    trainer = Trainer(_tiny(out))
    with run_lock(out), pytest.raises(DirectoryInUseError, match="one run writes a directory at a time"):
        trainer.run()  # flock is per open file: this process's second open is refused too
    assert sorted(p.name for p in out.iterdir()) == []  # nothing written, and the lock gone with its holder


def test_short_learn_run_writes_logs_checkpoints_league_and_curve(tmp_path: Path) -> None:
    """Two worker processes; the same run in-process gives the same weights."""
    from training.train import Trainer, latest_checkpoint

    out = tmp_path / "run"
    kw: dict[str, Any] = dict(
        steps=512, eval_every=256, eval_deals=1, checkpoint_every=256, snapshot_every=256
    )
    trainer = Trainer(_tiny(out, vec="sharded", workers=2, **kw))
    model = trainer.run()
    in_process = Trainer(_tiny(tmp_path / "dummy", vec="dummy", **kw)).run()
    for p, q in zip(model.policy.parameters(), in_process.policy.parameters(), strict=True):
        assert th.equal(p, q)
    assert model.num_timesteps == 512
    assert any((out / "tb").glob("events.out.tfevents.*"))
    assert latest_checkpoint(out) == out / "checkpoints" / f"step_{512:012d}"
    assert len(list((out / "checkpoints").glob("step_*"))) == 3  # 0, 256, 512
    assert (out / "final_model.zip").exists() and (out / "policy.npz").exists()
    assert (out / "checkpoints" / f"step_{512:012d}" / "checkpoint.json").exists()
    rows = (out / "curve.csv").read_text().splitlines()
    assert rows[0].startswith("step,opponent") and [r.split(",")[0] for r in rows[1:]] == ["0", "256", "512"]
    assert (out / "curve.png").stat().st_size > 1000
    assert [s.step for s in trainer.league.snapshots] == [256]  # joins at rollout starts
    assert sorted(p.name for p in (out / "league").glob("snap_*")) == trainer.league.files()
    assert all(name.endswith(".npz") for name in trainer.league.files())  # policy files, no pickle
    assert trainer.throughput > 0


def test_tiny_runs_are_deterministic(tmp_path: Path) -> None:
    from training.train import Trainer

    def params(out: Path, seed: int, **kw: Any) -> list[th.Tensor]:
        model = Trainer(_tiny(out, seed=seed, steps=256, **kw)).run()
        return [p.detach().clone() for p in model.policy.parameters()]

    a, b, c = params(tmp_path / "a", 0), params(tmp_path / "b", 0), params(tmp_path / "c", 1)
    assert all(th.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(th.equal(x, y) for x, y in zip(a, c, strict=True))
    # evaluations (which load policies and play games) leave the training run untouched
    d = params(tmp_path / "d", 0, eval_every=128, eval_deals=1)
    assert all(th.equal(x, y) for x, y in zip(a, d, strict=True))
    assert len((tmp_path / "d" / "curve.csv").read_text().splitlines()) == 1 + 3  # steps 0, 128, 256


def test_bc_warm_start_through_the_trainer(tmp_path: Path) -> None:
    from training.train import Trainer

    out = tmp_path / "bc"
    trainer = Trainer(_tiny(out, steps=128, bc_expert="random", bc_samples=300, bc_epochs=1))
    trainer.run()
    stats = json.loads((out / "bc.json").read_text())
    assert stats["samples"] == 300 and stats["expert"] == "random"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "training.app", "train", *args]


def test_resume_after_sigkill_continues_from_the_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    common = [
        "--out", str(out), "--envs", "2", "--vec", "dummy", "--players", "3", "--max-pips", "6",
        "--n-steps", "64", "--batch-size", "64", "--epochs", "1", "--net-arch", "32",
        "--checkpoint-every", "128", "--snapshot-every", "128", "--eval-every", "0",
        "--heuristics", "random", "--no-progress",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(_cli("--steps", "1000000", *common), cwd=REPO, env=env, stderr=subprocess.PIPE)
    pointer = out / "checkpoints" / "latest.json"
    deadline = time.time() + 120
    try:
        while time.time() < deadline:
            if pointer.exists() and json.loads(pointer.read_text())["step"] >= 384:
                break
            if proc.poll() is not None:
                pytest.fail(f"training exited early: {proc.stderr.read().decode() if proc.stderr else ''}")
            time.sleep(0.1)
        else:
            pytest.fail("no checkpoint within the deadline")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    step = json.loads(pointer.read_text())["step"]
    league_before = json.loads((out / "checkpoints" / f"step_{step:012d}" / "league.json").read_text())
    assert [s["step"] for s in league_before["snapshots"]][-1] == step

    target = step + 256
    res = subprocess.run(
        _cli("--steps", str(target), *common, "--resume"), cwd=REPO, env=env, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    assert f"resumed from step {step:,}" in res.stdout and str(out / "summary.json") in res.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["resumed_from"] == step and summary["steps"] == target
    from training.train import latest_checkpoint

    final = latest_checkpoint(out)
    assert final is not None
    with open(final / "state.pkl", "rb") as f:
        state = pickle.load(f)
    steps_after = [s["step"] for s in state["league"]["snapshots"]]
    assert steps_after[: len(league_before["snapshots"])] == [s["step"] for s in league_before["snapshots"]]
    assert steps_after[-1] == target - 128  # snapshots join at rollout starts before the target

    # a conflicting option is refused on resume
    bad = subprocess.run(
        _cli("--steps", str(target), *common, "--resume", "--lr", "0.1"),
        cwd=REPO,
        env=env,
        capture_output=True,
    )
    assert bad.returncode == 2 and b"conflicting" in bad.stderr


def test_resumed_run_equals_the_uninterrupted_run(tmp_path: Path) -> None:
    """Stop after a checkpoint, resume (in worker processes), and compare with one straight run
    (the schedules are rebuilt from the config on resume, never unpickled)."""
    from training.train import Trainer

    kw: dict[str, Any] = dict(checkpoint_every=128, snapshot_every=128, eval_every=128, eval_deals=1)
    straight = Trainer(_tiny(tmp_path / "s", steps=384, **kw)).run()
    Trainer(_tiny(tmp_path / "k", steps=256, **kw)).run()  # a finished run, then extended
    # resumed in worker processes: vec and workers change the speed, never the run
    resumed_trainer = Trainer(_tiny(tmp_path / "k", steps=384, vec="sharded", workers=2, **kw), resume=True)
    resumed = resumed_trainer.run()
    assert resumed_trainer.start_step == 256 and resumed.num_timesteps == 384
    for p, q in zip(straight.policy.parameters(), resumed.policy.parameters(), strict=True):
        assert th.equal(p, q)
    assert (
        straight.policy.optimizer.state_dict()["state"][0]["step"]
        == resumed.policy.optimizer.state_dict()["state"][0]["step"]
    )
    # the same learning curve, each step evaluated once (not again where the first run ended)
    assert (tmp_path / "k" / "curve.csv").read_text() == (tmp_path / "s" / "curve.csv").read_text()
    assert [r.split(",")[0] for r in (tmp_path / "k" / "curve.csv").read_text().splitlines()[1:]] == [
        "0",
        "128",
        "256",
        "384",
    ]


def test_a_resumed_linear_schedule_is_the_configs(tmp_path: Path) -> None:
    """On resume the learning-rate schedule is rebuilt from the run's config (SB3's
    ``custom_objects``), not unpickled from model.zip: a linear one decays from --lr."""
    from training.train import Trainer

    config = _tiny(tmp_path / "r", steps=128, checkpoint_every=128, lr_schedule="linear", learning_rate=1e-3)
    Trainer(config).run()
    resumed = Trainer(_tiny(tmp_path / "r", steps=256, lr_schedule="linear", learning_rate=1e-3), resume=True)
    resumed._setup()  # what run() does first: the env and the model loaded from the checkpoint
    assert resumed.model.learning_rate(0.5) == pytest.approx(5e-4)
    assert resumed.model.lr_schedule(0.25) == pytest.approx(2.5e-4)
    assert resumed.model.clip_range(1.0) == config.clip_range


def test_bc_collection_resumes_from_its_chunk_cache(tmp_path: Path) -> None:
    """A chunked collection with a cache continues where it stopped and refuses another expert."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training import bc
    from training.single_agent import SingleAgentEnv

    def make() -> DummyVecEnv:
        return DummyVecEnv([lambda: SingleAgentEnv(opponents=["random"]) for _ in range(2)])

    cache = tmp_path / "bc.npz"
    full = bc.collect(make(), "random", 300, seed=3, chunk=100)
    part = bc.collect(make(), "random", 150, seed=3, chunk=100, cache=cache)
    assert len(part["action"]) == 150 and cache.exists()
    resumed = bc.collect(make(), "random", 300, seed=3, chunk=100, cache=cache)
    np.testing.assert_array_equal(resumed["action"], full["action"])
    np.testing.assert_array_equal(resumed["obs"], full["obs"])
    with pytest.raises(ValueError, match="another collection"):
        bc.collect(make(), "random", 300, seed=4, chunk=100, cache=cache)


@pytest.mark.parametrize("damaged", [b"", b"PK\x03\x04 not a zip", b"\x93NUMPY junk"])
def test_bc_collection_recollects_over_a_damaged_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damaged: bytes
) -> None:
    """A cache file that is not a readable cache is collected again (the same data: the
    collection is seeded by chunk), saying so on stderr, not a crash."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from training import bc
    from training.single_agent import SingleAgentEnv

    def make() -> DummyVecEnv:
        return DummyVecEnv([lambda: SingleAgentEnv(opponents=["random"]) for _ in range(2)])

    full = bc.collect(make(), "random", 200, seed=3, chunk=100)
    cache = tmp_path / "bc.npz"
    cache.write_bytes(damaged)
    again = bc.collect(make(), "random", 200, seed=3, chunk=100, cache=cache)
    np.testing.assert_array_equal(again["action"], full["action"])
    assert f"{cache}: not a readable expert-data cache (" in capsys.readouterr().err
    assert bc.collect(make(), "random", 200, seed=3, chunk=100, cache=cache)["obs"].shape == full["obs"].shape
    assert capsys.readouterr().err == ""  # the rewritten cache reads
