"""The deep Monte-Carlo learner (training/selfplay/dmc.py): returns, acting, resume, CLI.

The Monte-Carlo returns are checked on a hand-computed case and against a slow reference
(plain Python lists per ``(game, seat)``) over several rollouts of the real batched engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch as th

from agents.mexican_train.ppo import PPOAgent, clear_cache
from agents.mexican_train.tilenet import is_selfplay_policy, save_selfplay_policy
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from tests.selfplay_support import SMALL_RUN, checkpoint_round_trip
from training.app import main as mtrain
from training.checks import ConfigError
from training.selfplay.bench import measure
from training.selfplay.checkpoint import load_checkpoint, save_checkpoint
from training.selfplay.dmc import DMCConfig, ReturnBook, SelfPlayDMC
from training.selfplay.learner import SelfPlayConfig
from training.selfplay.run import config_from_json, config_to_json

TINY: dict[str, Any] = {
    "num_players": 3,
    "max_pips": 6,
    "num_games": 6,
    "steps": 12,
    "hidden": 16,
    "pair_hidden": 8,
    "minibatch": 32,
}
OBS, ACT = 3, 4
NONE = np.zeros((1, 2), np.float32)
NO = np.zeros(1, np.bool_)


def _record(book: ReturnBook, game: int, seat: int, tag: int) -> int:
    """Record one decision; ``tag`` is stored as its action, to find it again."""
    (idx,) = book.record(
        np.array([game]),
        np.array([seat]),
        np.zeros((1, OBS), np.float32),
        np.ones((1, ACT), np.bool_),
        np.array([tag]),
        np.array([0.0], np.float32),
        np.array([0.0], np.float32),
    )
    book.credit(NONE, NO)
    return int(idx)


def test_hand_computed_returns_across_rollouts() -> None:
    """One game, two seats, gamma 0.5: an episode spans two rollouts, then a second one starts."""
    book = ReturnBook(1, 2, OBS, ACT, capacity=2)  # small: the arrays must grow
    book.begin()
    _record(book, 0, 0, 10)  # seat 0
    _record(book, 0, 1, 11)  # seat 1
    batch = book.finish(gamma=0.5)
    assert len(batch) == 0  # nothing has finished
    book.begin()
    assert book.size == 2  # both open decisions are carried
    _record(book, 0, 0, 12)  # seat 0 again
    book.credit(np.array([[1.0, -1.0]], np.float32), np.array([False]))  # a session round ends
    _record(book, 0, 1, 13)  # seat 1 again
    # a forced move ends the episode with rewards 4 / -4
    book.credit(np.array([[4.0, -4.0]], np.float32), np.array([True]))
    _record(book, 0, 0, 20)  # seat 0 in the next episode: open
    batch = book.finish(gamma=0.5)
    # seat 0: d12 r = 1 + 4 = 5, G = 5; d10 r = 0, G = 0.5 * 5 = 2.5
    # seat 1: d11 r = -1 (credited while d11 was seat 1's latest), G = -1 + 0.5 * -4 = -3; d13 G = -4
    got = dict(zip(batch.action.tolist(), batch.returns.tolist(), strict=True))
    assert got == {10: 2.5, 11: -3.0, 12: 5.0, 13: -4.0}
    book.begin()
    assert book.size == 1 and book.action[0] == 20  # only the new episode's decision stays
    book.credit(np.array([[-2.0, 2.0]], np.float32), np.array([True]))
    batch = book.finish(gamma=0.5)
    assert batch.action.tolist() == [20] and batch.returns.tolist() == [-2.0]


def test_returns_match_a_slow_reference_on_the_engine() -> None:
    """Random play of 5 games, 3 seats, over 8 rollouts of 7 steps: every finished decision
    is trained exactly once, with the discounted sum of its seat's later rewards."""
    rng = np.random.default_rng(0)
    gamma = 0.9
    env = BatchedMexicanTrain(5, copy=True, num_players=3, max_pips=6)
    obs, mask, seat, _ = env.reset(seed=4)
    book = ReturnBook(5, 3, env.obs_size, env.num_actions, capacity=7 * 5)
    chains: dict[tuple[int, int], list[list[float]]] = {}  # (game, seat) -> [[tag, reward], ...]
    expected: dict[int, float] = {}
    trained: dict[int, float] = {}
    tag = 0
    for _ in range(8):
        book.begin()
        for _ in range(7):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
            choice = np.flatnonzero(mask.sum(1) > 1)
            tags = np.arange(tag, tag + choice.size)
            tag += choice.size
            if choice.size:
                n = choice.size
                book.record(choice, seat[choice], obs[choice], mask[choice], tags, np.zeros(n), np.zeros(n))
            for game, t in zip(choice.tolist(), tags.tolist(), strict=True):
                chains.setdefault((game, int(seat[game])), []).append([t, 0.0])
            obs, mask, seat, rewards, terminated, _ = env.step(actions)
            book.credit(rewards, terminated)
            for (game, s), chain in chains.items():
                if chain:
                    chain[-1][1] += float(rewards[game, s])
            for game in np.flatnonzero(terminated).tolist():
                for s in range(3):
                    ret = 0.0
                    for done_tag, r in reversed(chains.pop((game, s), [])):
                        ret = r + gamma * ret
                        expected[int(done_tag)] = ret
        batch = book.finish(gamma)
        for got_tag, got in zip(batch.action.tolist(), batch.returns.tolist(), strict=True):
            assert got_tag not in trained  # trained once
            trained[got_tag] = got
    assert len(expected) > 50
    assert trained.keys() == expected.keys()
    for key, value in expected.items():
        assert trained[key] == pytest.approx(value, abs=1e-5)


def _params(learner: SelfPlayDMC) -> dict[str, th.Tensor]:
    return {k: v.clone() for k, v in learner.net.state_dict().items()}


def _same(a: dict[str, th.Tensor], b: dict[str, th.Tensor]) -> bool:
    return a.keys() == b.keys() and all(th.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("net", ["tile", "mlp"])
def test_iterate_shapes_determinism_and_learning(net: str) -> None:
    runs = []
    for _ in range(2):
        learner = SelfPlayDMC(DMCConfig(net=net, seed=3, **TINY))
        before = _params(learner)
        stats = [learner.iterate() for _ in range(3)]
        assert not _same(before, _params(learner))
        runs.append((learner, _params(learner), stats))
    (a, pa, sa), (_b, pb, sb) = runs
    assert _same(pa, pb) and sa[-1]["q_loss"] == sb[-1]["q_loss"]
    assert {"q_loss", "acting_q_mse", "trained", "decisions", "mean_return"} <= sa[-1].keys()
    assert a.env_steps == 3 * 12 * 6 and a.trained == sum(int(s["trained"]) for s in sa) > 0
    batch = a.book.finish(a.config.gamma)
    assert batch.obs.shape == (len(batch), a.env.obs_size)
    assert batch.mask.shape == (len(batch), a.env.num_actions)
    assert batch.mask[np.arange(len(batch)), batch.action].all()  # every action taken was legal
    assert (batch.mask.sum(1) > 1).all()  # forced decisions are not training data


def test_epsilon_zero_is_greedy_and_one_is_uniform() -> None:
    greedy = SelfPlayDMC(DMCConfig(epsilon=0.0, seed=1, **TINY))
    for _ in range(5):
        obs, mask = greedy.obs.copy(), greedy.mask.copy()
        actions, choice = greedy._act()
        with th.no_grad():
            q, _ = greedy.net(th.from_numpy(obs[choice]), th.from_numpy(mask[choice].astype(np.bool_)))
        np.testing.assert_array_equal(actions[choice], q.argmax(1).numpy())
        greedy.obs, greedy.mask, greedy.seat, *_ = greedy.env.step(actions)
    wild = SelfPlayDMC(DMCConfig(epsilon=1.0, seed=1, **TINY))
    differ = 0
    for _ in range(5):
        obs, mask = wild.obs.copy(), wild.mask.copy()
        actions, choice = wild._act()
        with th.no_grad():
            q, _ = wild.net(th.from_numpy(obs[choice]), th.from_numpy(mask[choice].astype(np.bool_)))
        assert mask[np.arange(len(mask)), actions].all()
        differ += int((actions[choice] != q.argmax(1).numpy()).sum())
        wild.obs, wild.mask, wild.seat, *_ = wild.env.step(actions)
    assert differ > 0


def test_resume_from_a_checkpoint_is_exact(tmp_path) -> None:
    config = DMCConfig(seed=5, **TINY)
    straight = SelfPlayDMC(config)
    for _ in range(4):
        straight.iterate()
    first, resumed = checkpoint_round_trip(lambda: SelfPlayDMC(config), tmp_path / "c.pt", before=2)
    assert len(first.state_dict()["book_links"]["chunks"]) > 1  # whole open chains are carried
    for _ in range(2):
        resumed.iterate()
    assert _same(_params(straight), _params(resumed))
    np.testing.assert_array_equal(straight.env.states, resumed.env.states)
    assert (straight.trained, straight.rounds) == (resumed.trained, resumed.rounds)
    assert straight.stats["q_loss"] == resumed.stats["q_loss"]


def test_a_ppo_checkpoint_is_refused_and_configs_round_trip(tmp_path) -> None:
    from training.selfplay.learner import SelfPlayPPO

    save_checkpoint(SelfPlayPPO(SelfPlayConfig(seed=5, **TINY)).state_dict(), tmp_path / "ppo.pt")
    with pytest.raises(ValueError):
        SelfPlayDMC(DMCConfig(seed=5, **TINY)).load_state_dict(load_checkpoint(tmp_path / "ppo.pt"))
    with pytest.raises(TypeError, match="needs a DMCConfig"):
        SelfPlayDMC(SelfPlayConfig(**TINY))  # type: ignore[arg-type]
    dmc = DMCConfig(epsilon=0.1, **TINY)
    assert config_to_json(dmc)["algo"] == "dmc" and config_from_json(config_to_json(dmc)) == dmc
    ppo = SelfPlayConfig(**TINY)
    assert config_from_json(ppo.to_json()) == ppo  # an older selfplay.json has no "algo"
    with pytest.raises(ConfigError, match=r"^algo: must be one of ppo, dmc"):
        config_from_json({"algo": "a2c"})
    with pytest.raises(ConfigError, match=r"^epsilon: must be a number in \[0, 1\]"):
        DMCConfig(epsilon=1.5)


def test_the_ppo_agent_plays_argmax_q(tmp_path) -> None:
    learner = SelfPlayDMC(DMCConfig(seed=2, **TINY))
    learner.iterate()
    path = save_selfplay_policy(learner.net, tmp_path / "policy.npz")
    clear_cache()
    agent = PPOAgent(path=path)
    batch = learner.book.finish(1.0)
    for obs, mask in zip(batch.obs[:20], batch.mask[:20], strict=True):
        with th.no_grad():
            q, _ = learner.net(th.from_numpy(obs[None]), th.from_numpy(mask[None]))
        logits = agent.policy.masked_logits(obs, mask)
        assert int(np.argmax(logits)) == int(q.argmax(1))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--algo", "a2c"], "mtrain selfplay: --algo: must be one of ppo, dmc, got 'a2c'"),
        (
            ["--algo", "dmc", "--epsilon", "2"],
            "mtrain selfplay: --epsilon: epsilon must be a number in [0, 1]",
        ),
        (["--epsilon", "0.1"], "mtrain selfplay: --epsilon: an option of --algo dmc, this run is --algo ppo"),
        (["--algo", "dmc", "--clip", "0.1"], "mtrain selfplay: --clip: an option of --algo ppo, this run is"),
    ],
)
def test_cli_errors_are_one_line(tmp_path, capsys, argv: list[str], message: str) -> None:
    assert mtrain(["selfplay", "--out", str(tmp_path / "run"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
    assert not (tmp_path / "run").exists()


def test_cli_runs_and_resumes_dmc(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    small = SMALL_RUN
    assert mtrain(["selfplay", "--out", str(out), "--algo", "dmc", "--steps", "72", *small]) == 0
    assert "72 env decisions" in capsys.readouterr().out
    saved = json.loads((out / "selfplay.json").read_text())
    assert saved["algo"] == "dmc" and saved["epsilon"] == 0.05
    assert mtrain(["selfplay", "--out", str(out), "--algo", "ppo", "--resume"]) == 2
    assert "--algo: the run in" in capsys.readouterr().err
    assert mtrain(["selfplay", "--out", str(out), "--steps", "144", "--resume", "--no-progress"]) == 0
    assert "144 env decisions" in capsys.readouterr().out
    assert is_selfplay_policy(out / "policy.npz")


def test_bench_measures_the_dmc_and_graph_paths(capsys) -> None:
    rates = measure(rounds=1, games=4, steps=4, threads=1, paths=["selfplay/dmc", "selfplay/graph"])
    assert set(rates) == {"selfplay/dmc", "selfplay/graph"} and min(rates.values()) > 0
    assert mtrain(["bench-selfplay", "--paths", "selfplay/a3c"]) == 2
    assert "unknown path 'selfplay/a3c'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--games", "1000000000000"], "--games: must be an int in 1..65536, got 1000000000000"),
        (["--steps", "100000", "--paths", "selfplay/mlp"], "--steps: must be an int in 1..65536, got 100000"),
        (["--threads", "65"], "--threads: must be an int in 1..64, got 65"),
        (["--games", "0"], "--games: must be an int in 1..65536, got 0"),
        (["--rounds", "0"], "--rounds: must be an int >= 1, got 0"),
        (
            ["--games", "2048", "--steps", "513"],
            "--games x --steps: must be at most 1,048,576 decisions a rollout, got 2048 x 513 = 1,050,624 "
            "(a seat book of 1.8 GiB)",
        ),
    ],
)
def test_bench_refuses_what_the_learner_refuses_in_one_line(capsys, argv: list[str], says: str) -> None:
    """``mtrain bench-selfplay`` checks its counts against the learners' bounds (INT_BOUNDS,
    MAX_ROLLOUT) before building a path: a value above one was a ConfigError traceback after
    seconds of start-up (audit s31 F4)."""
    assert mtrain(["bench-selfplay", "--rounds", "1", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"mtrain bench-selfplay: {says}\n" and captured.out == ""


def test_bench_sb3_path_leaves_no_log_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The MaskablePPO path logs nowhere: SB3's default logger would make a folder per learn()."""
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))
    rates = measure(rounds=1, games=2, steps=8, threads=1, paths=["sb3/maskable"])
    assert rates["sb3/maskable"] > 0
    assert not (tmp_path / "sb3").exists()
