"""The numpy forward pass of the self-play networks equals torch's, and plays without torch."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch as th

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.mexican_train.numpy_nets import load_selfplay_policy, numpy_net
from agents.mexican_train.ppo import PPOAgent, clear_cache, masked_argmax
from agents.mexican_train.selfplay_file import MASKED, parameter_shapes, read_selfplay_file
from agents.mexican_train.tilenet import NET_KINDS, NetSpec, build_net, save_selfplay_policy
from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from mtrain_env.mexican_train.core.config import GameConfig
from tests import REPO

ROOT = REPO
#: (players, double-N): the tables the networks are checked on
GAMES = [(2, 6), (4, 12), (6, 12), (3, 9)]


def _net(kind: str, players: int, pips: int, seed: int = 1) -> th.nn.Module:
    """A network of ``kind`` whose every weight is random (zero-initialised ones too)."""
    config = GameConfig.make(num_players=players, max_pips=pips)
    net = build_net(NetSpec.make(kind, config), seed=seed)
    gen = th.Generator().manual_seed(seed)
    with th.no_grad():
        for param in net.parameters():
            param.add_(th.randn(param.shape, generator=gen) * 0.1)
    net.eval()
    return net


def _positions(players: int, pips: int, games: int = 24, steps: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of real positions: ``games`` games played at random, every
    4th step kept (openings, middles and ends of rounds, and new rounds)."""
    batch = BatchedMexicanTrain(games, copy=True, num_players=players, max_pips=pips)
    obs, mask, _seat, _ = batch.reset(seed=players * 100 + pips)
    rng = np.random.default_rng(pips)
    kept_obs, kept_mask = [], []
    for step in range(steps):
        if step % 4 == 0:
            kept_obs.append(obs)
            kept_mask.append(mask)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, mask, *_ = batch.step(actions)
    return np.concatenate(kept_obs), np.concatenate(kept_mask)


@pytest.mark.parametrize("kind", NET_KINDS)
@pytest.mark.parametrize(("players", "pips"), [(2, 6), (4, 12), (8, 15)])
def test_parameter_shapes_are_those_of_the_torch_networks(kind: str, players: int, pips: int) -> None:
    net = build_net(NetSpec.make(kind, GameConfig.make(num_players=players, max_pips=pips), 24, 12), seed=0)
    assert parameter_shapes(net.spec) == {k: tuple(v.shape) for k, v in net.state_dict().items()}


@pytest.mark.parametrize("kind", NET_KINDS)
@pytest.mark.parametrize(("players", "pips"), GAMES)
def test_numpy_logits_equal_torch_on_real_positions(
    tmp_path: Path, kind: str, players: int, pips: int
) -> None:
    net = _net(kind, players, pips)
    obs, mask = _positions(players, pips)
    legal = mask != 0
    arrays = {k: v.numpy() for k, v in net.state_dict().items()}
    n_logits, n_value = numpy_net(net.spec, arrays)(obs, mask)
    with th.no_grad():  # the float32 network that trains and the same in float64 (exact logic)
        t_logits, t_value = (x.numpy() for x in net(th.from_numpy(obs), th.from_numpy(legal)))
        exact = copy.deepcopy(net).double()
        e_logits, e_value = (x.numpy() for x in exact(th.from_numpy(obs).double(), th.from_numpy(legal)))
    assert n_logits.shape == t_logits.shape == mask.shape
    np.testing.assert_allclose(n_logits[legal], e_logits[legal], rtol=0, atol=1e-9)
    np.testing.assert_allclose(n_value, e_value, rtol=0, atol=1e-9)
    np.testing.assert_allclose(n_logits[legal], t_logits[legal], rtol=0, atol=1e-5)
    np.testing.assert_allclose(n_value, t_value, rtol=0, atol=1e-5)
    assert (n_logits[~legal] == MASKED).all()
    legal_logits = np.where(legal, t_logits, np.nan)
    spread = np.nanmax(legal_logits, axis=1) - np.nanmin(legal_logits, axis=1)
    assert spread.max() > 0.1  # the random weights give the legal actions different scores
    chosen_np = [masked_argmax(lg, m) for lg, m in zip(n_logits, mask, strict=True)]
    chosen_th = [masked_argmax(lg, m) for lg, m in zip(t_logits, mask, strict=True)]
    assert chosen_np == chosen_th
    # one decision at a time (how the ppo agent calls it) gives the batch's rows
    policy = load_selfplay_policy(save_selfplay_policy(net, tmp_path / "p.npz"))
    for i in range(0, len(obs), 7):
        np.testing.assert_allclose(policy.masked_logits(obs[i], mask[i]), n_logits[i], rtol=0, atol=1e-9)


@pytest.mark.parametrize("kind", NET_KINDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_logits_alone_are_the_full_passs_logits_bit_for_bit(kind: str, dtype: type) -> None:
    """``logits`` (a rollout's moves: no value head) is the same computation as ``__call__``'s
    logits, so a search gives the same moves with either."""
    net = _net(kind, 4, 12)
    obs, mask = _positions(4, 12, games=8)
    numpy = numpy_net(net.spec, {k: v.numpy() for k, v in net.state_dict().items()}, dtype)
    logits, value = numpy(obs, mask)
    assert value.dtype == dtype and value.shape == (len(obs),)
    assert np.array_equal(numpy.logits(obs, mask), logits)


@pytest.mark.parametrize("kind", NET_KINDS)
def test_the_ppo_agent_plays_the_moves_torch_would(tmp_path: Path, kind: str) -> None:
    """Through the env: every decision of a whole game, the agent's move is torch's argmax."""
    net = _net(kind, 4, 9, seed=7)
    path = save_selfplay_policy(net, tmp_path / "p.npz")
    clear_cache()
    agent = PPOAgent(path=path)
    env = mtrain_env.raw_env(num_players=4, max_pips=9)
    env.reset(seed=4)
    decisions = 0
    while not all(env.terminations.values()):
        decision = decision_for(env, env.agent_selection)
        action = agent.act(decision)
        with th.no_grad():
            logits, _ = net(
                th.as_tensor(decision.observation).reshape(1, -1),
                th.as_tensor(decision.action_mask != 0).reshape(1, -1),
            )
        assert action == masked_argmax(logits[0].numpy(), decision.action_mask)
        env.step(action)
        decisions += 1
    assert decisions > 20


def _damage(src: Path, dst: Path, member: str, data: bytes | None) -> Path:
    """A copy of the policy file ``src`` with ``member`` replaced by ``data`` (removed if None)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            if item.filename != member:
                zout.writestr(item, zin.read(item.filename))
        if data is not None:
            zout.writestr(member, data)
    return dst


def _npy(arr: np.ndarray) -> bytes:
    import io

    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=arr.dtype.hasobject)  # a pickle inside, to refuse
    return buf.getvalue()


def _huge_npy() -> bytes:
    """The header of a float32 (2**20, 2**20) array and a few bytes: 4 TiB if believed."""
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f4", "fortran_order": False, "shape": (1 << 20, 1 << 20)}
    )
    return buf.getvalue() + b"\0" * 64


def test_damaged_files_get_a_one_line_refusal(tmp_path: Path) -> None:
    net = _net("tile", 3, 6)
    good = save_selfplay_policy(net, tmp_path / "good.npz")
    _spec, arrays = read_selfplay_file(good)
    shape = arrays["trunk.0.bias"].shape
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    cases = {
        truncated: "not a policy file",  # no longer recognisable: the SB3-shaped reader refuses it
        _damage(good, tmp_path / "missing.npz", "trunk.0.bias.npy", None): "trunk.0.bias.npy: missing",
        _damage(
            good, tmp_path / "f64.npz", "trunk.0.bias.npy", _npy(np.zeros(shape))
        ): r"trunk.0.bias.npy: dtype float64 \(little-endian float32 expected\)",
        _damage(
            good, tmp_path / "shape.npz", "trunk.0.bias.npy", _npy(np.zeros(3, "<f4"))
        ): r"trunk.0.bias.npy: shape \(3,\), the architecture says",
        _damage(
            good, tmp_path / "pickle.npz", "trunk.0.bias.npy", _npy(np.array([{}], object))
        ): "trunk.0.bias.npy: dtype object",
        _damage(
            good, tmp_path / "nan.npz", "trunk.0.bias.npy", _npy(np.full(shape, np.nan, "<f4"))
        ): "trunk.0.bias.npy: non-finite values",
        _damage(
            good, tmp_path / "huge.npz", "trunk.0.bias.npy", _huge_npy()
        ): r"shape \(1048576, 1048576\), the architecture says",  # refused before allocating 4 TiB
        _damage(
            good, tmp_path / "json.npz", "policy.json", b'{"format": "mtrain-selfplay-policy", "version": 1'
        ): "policy.json: not JSON",  # unrecognisable as self-play: the SB3-shaped reader refuses it
    }
    header = json.loads(zipfile.ZipFile(good).read("policy.json"))
    version_true = json.dumps({**header, "version": True}).encode()
    cases[_damage(good, tmp_path / "v.npz", "policy.json", version_true)] = "format version True"
    deep = b"[" * 5000 + b"]" * 5000
    cases[_damage(good, tmp_path / "deep.npz", "policy.json", deep)] = "nested too deeply"
    for path, message in cases.items():
        clear_cache()
        with pytest.raises(ValueError, match=message) as err:
            PPOAgent(path=path).policy  # noqa: B018 (loading is the point)
        text = str(err.value)
        assert "\n" not in text and str(path) in text, text


def test_a_selfplay_policy_plays_without_torch(tmp_path: Path) -> None:
    """The ``ppo`` agent on a self-play file imports neither torch nor SB3 (the base install)."""
    path = save_selfplay_policy(_net("tile", 3, 6), tmp_path / "p.npz")
    script = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "stable_baselines3", "sb3_contrib"):
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
from agents.tournament import AgentSpec, TournamentConfig, run_tournament
from mtrain_env.mexican_train.core.config import GameConfig
result = run_tournament(TournamentConfig(
    agents=[AgentSpec("ppo", {{"path": {str(path)!r}}}, label="learner"), AgentSpec("greedy", {{}})],
    game=GameConfig.make(num_players=3, max_pips=6), lineup=["learner", "greedy", "greedy"],
    deals=2, seed=1, workers=1, out_dir=None, progress=False, plots=False))
print(sum(a["seat_rounds"] for a in result.agents if a["agent"] == "learner"))
"""
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["6"]
