"""Any SB3 model saved with ``model.save()`` plays as ``ppo[path=...]`` (:mod:`agents.sb3_model`).

* MaskablePPO, PPO, A2C and DQN models trained on the Gymnasium env play the moves SB3's own
  policy gives (``predict`` with the mask; the best legal action of SB3's logits or
  Q-values), on 1,000 decisions each;
* they play in ``mtrain bench`` and in the Python harness under the label given;
* a crafted archive is refused with one line naming the file, and the code it carries never
  runs (every crafted archive carries a payload that would create a marker file);
* a model of another table, observation version or action space is refused by name.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
import torch as th

import mtrain_env  # noqa: F401 (registers the Gymnasium env)
from agents.mexican_train import ppo
from agents.mexican_train.ppo import PPOAgent, masked_argmax
from agents.policy_net import PolicyFileError
from agents.registry import make_agent
from agents.sb3_model import SB3Model, read_sb3_model
from agents.tournament import TournamentConfig, run_tournament
from mtrain_env.mexican_train.core.config import GameConfig

SMALL: dict[str, Any] = {"num_players": 2, "max_pips": 6}
ENV_ID = "mtrain_env/MexicanTrain-v0"


class Payload:
    """Unpickling this runs code: it creates ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, (f"open({str(self.marker)!r}, 'w').close()",))


def _train(algo: str, steps: int, root: Path) -> tuple[Any, Path]:
    """A small model of ``algo`` trained ``steps`` steps on the Gymnasium env, and its archive."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import A2C, DQN, PPO

    env = gymnasium.make(ENV_ID, **SMALL)
    made: dict[str, Callable[[], Any]] = {
        "maskable_ppo": lambda: MaskablePPO(
            "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0,
            policy_kwargs={"net_arch": {"pi": [32, 16], "vf": [16]}, "activation_fn": th.nn.ReLU},
        ),
        "ppo": lambda: PPO(
            "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0,
            policy_kwargs={"net_arch": [24], "activation_fn": th.nn.GELU},
        ),
        "a2c": lambda: A2C("MlpPolicy", env, n_steps=16, seed=0, policy_kwargs={"net_arch": [16]}),
        "dqn": lambda: DQN(
            "MlpPolicy", env, learning_starts=64, train_freq=4, buffer_size=2_000, seed=0,
            policy_kwargs={"net_arch": [32, 32], "activation_fn": th.nn.SiLU},
        ),
    }  # fmt: skip
    model = made[algo]()
    model.learn(steps)
    path = root / f"{algo}.zip"
    model.save(path)
    return model, path


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Path]]:
    root = tmp_path_factory.mktemp("sb3")
    return {algo: _train(algo, 256, root) for algo in ("maskable_ppo", "ppo", "a2c", "dqn")}


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    ppo.clear_cache()


def _sb3_move(algo: str, model: Any, obs: np.ndarray, mask: np.ndarray) -> int:
    """SB3's own choice: MaskablePPO's ``predict`` with the mask; otherwise the best legal
    action of the logits of SB3's distribution (PPO, A2C) or of its Q-values (DQN)."""
    if algo == "maskable_ppo":
        return int(model.predict(obs, deterministic=True, action_masks=mask)[0])
    x, _ = model.policy.obs_to_tensor(obs)
    with th.no_grad():
        if algo == "dqn":
            scores = model.q_net(x)[0].numpy()
        else:
            scores = model.policy.get_distribution(x).distribution.logits[0].numpy()
    return masked_argmax(scores, mask)


@pytest.mark.parametrize("algo", ["maskable_ppo", "ppo", "a2c", "dqn"])
def test_an_sb3_model_plays_the_moves_sb3_chooses(models: dict[str, tuple[Any, Path]], algo: str) -> None:
    model, path = models[algo]
    _same_moves(algo, model, path, 1_000)


def _same_moves(algo: str, model: Any, path: Path, decisions: int) -> None:
    agent = PPOAgent(path=path)
    agent.check_game(GameConfig.make(**SMALL))
    assert isinstance(agent.policy, SB3Model)
    env = gymnasium.make(ENV_ID, **SMALL).unwrapped
    obs, _ = env.reset(seed=7)
    seen, legal_choices = 0, 0
    while seen < decisions:
        mask = env.action_masks()
        ours = agent.act(env.learner_decision())
        assert ours == _sb3_move(algo, model, obs, mask), (algo, seen)
        legal_choices += int(mask.sum() > 1)
        seen += 1
        obs, _, terminated, truncated, _ = env.step(ours)
        if terminated or truncated:
            obs, _ = env.reset()
    assert legal_choices > decisions // 10  # real choices, not only forced moves


def test_an_sb3_model_plays_in_bench_and_the_harness_under_its_label(
    models: dict[str, tuple[Any, Path]], tmp_path: Path
) -> None:
    from training.app import main

    path = models["ppo"][1]
    label = f"ppo[path={path}]"
    result = run_tournament(
        TournamentConfig(
            agents=[label, "planner"], game=GameConfig.make(**SMALL), deals=2, seed=1,
            workers=1, progress=False, plots=False,
        )
    )  # fmt: skip
    assert {a["agent"] for a in result.agents} == {label, "planner"}
    assert sum(a["seat_rounds"] for a in result.agents if a["agent"] == label) == 4
    out = tmp_path / "bench"
    argv = ["bench", "--agents", label, "planner", "--players", "2", "--max-pips", "6"]
    assert (
        main([*argv, "--deals", "2", "--workers", "1", "--out", str(out), "--no-progress", "--no-plots"]) == 0
    )
    assert label in "".join(p.read_text() for p in out.glob("*.csv"))


def test_a_dqn_model_is_never_sampled(models: dict[str, tuple[Any, Path]]) -> None:
    agent = make_agent("ppo", path=str(models["dqn"][1]), deterministic=False)
    with pytest.raises(ValueError, match="a DQN model scores actions by Q-values"):
        agent.check_game(GameConfig.make(**SMALL))


def test_sb3_as_an_agent_name_points_to_ppo() -> None:
    with pytest.raises(ValueError) as err:
        make_agent("sb3[path=model.zip]")
    assert str(err.value) == (
        "unknown agent 'sb3': a stable-baselines3 / sb3-contrib model saved with model.save() "
        "plays as ppo[path=MODEL.zip]"
    )


# ------------------------------------------------------------- crafted archives
def _rewrite(
    src: Path, dst: Path, replace: dict[str, bytes | None], add: dict[str, bytes] | None = None
) -> Path:
    """``src`` with members replaced (``None``: dropped) and added."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename in replace:
                if replace[info.filename] is not None:
                    zout.writestr(info.filename, replace[info.filename])  # type: ignore[arg-type]
            else:
                zout.writestr(info, zin.read(info))
        for name, raw in (add or {}).items():
            zout.writestr(name, raw)
    return dst


def _data(path: Path) -> dict[str, Any]:
    return json.loads(zipfile.ZipFile(path).read("data"))


def _armed(data: dict[str, Any], marker: Path) -> dict[str, Any]:
    """``data`` whose every ``":serialized:"`` blob is a pickle that would create ``marker``."""
    blob = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    return {k: {**v, ":serialized:": blob} if isinstance(v, dict) and ":serialized:" in v else v
            for k, v in data.items()}  # fmt: skip


def _with_data(change: Callable[[dict[str, Any]], None]) -> Callable[[Path, Path, Path], Path]:
    def make(src: Path, dst: Path, marker: Path) -> Path:
        data = _armed(_data(src), marker)
        change(data)
        return _rewrite(src, dst, {"data": json.dumps(data).encode()})

    return make


def _armed_archive(src: Path, dst: Path, marker: Path, **replace: bytes | None) -> Path:
    data = json.dumps(_armed(_data(src), marker)).encode()
    return _rewrite(src, dst, {"data": data, **{k.replace("__", "."): v for k, v in replace.items()}})


def _pickled_weights(src: Path, dst: Path, marker: Path) -> Path:
    buf = io.BytesIO()
    th.save({"action_net.weight": Payload(marker)}, buf)  # a class reference weights_only refuses
    return _armed_archive(src, dst, marker, policy__pth=buf.getvalue())


def _wrong_shapes(src: Path, dst: Path, marker: Path) -> Path:
    state = th.load(io.BytesIO(zipfile.ZipFile(src).read("policy.pth")), weights_only=True)
    state["action_net.weight"] = th.zeros(86, 8)
    buf = io.BytesIO()
    th.save(state, buf)
    return _armed_archive(src, dst, marker, policy__pth=buf.getvalue())


def _no_weights(src: Path, dst: Path, marker: Path) -> Path:
    return _armed_archive(src, dst, marker, policy__pth=None)


def _bomb(src: Path, dst: Path, marker: Path) -> Path:
    data = json.dumps(_armed(_data(src), marker))
    return _rewrite(src, dst, {"data": (data + " " * (65 << 20)).encode()})  # ~65 kB deflated


def _huge_weights(src: Path, dst: Path, marker: Path) -> Path:
    return _armed_archive(src, dst, marker, policy__pth=bytes(16 << 20))


def _traversal(src: Path, dst: Path, marker: Path) -> Path:
    armed = _armed_archive(src, dst.with_suffix(".tmp"), marker)
    return _rewrite(armed, dst, {}, add={"../../evil.sh": b"touch /tmp/owned"})


def _not_json(src: Path, dst: Path, marker: Path) -> Path:
    return _rewrite(src, dst, {"data": pickle.dumps(Payload(marker))})


def _set_class(module: str, name: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        entry = data["policy_class"]
        entry["__module__"] = module
        entry["__init__"] = f"<function {name}.__init__ at 0x7f0000000000>"

    return change


def _kwargs(**fields: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["policy_kwargs"].update(fields)

    return change


def _space(key: str, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data[key].update(fields)

    return change


CRAFTED: list[tuple[str, Callable[[Path, Path, Path], Path], str]] = [
    ("pickle in policy.pth", _pickled_weights, "policy.pth: not a weights-only state dict"),
    ("wrong shapes", _wrong_shapes, "policy.pth: parameter action_net.weight has shape (86, 8)"),
    ("missing policy.pth", _no_weights, "not an SB3 model archive (no policy.pth)"),
    ("zip bomb", _bomb, "data: 68"),
    ("oversized member", _huge_weights, "policy.pth: 16777216 bytes, more than the"),
    ("path traversal", _traversal, "member name '../../evil.sh' is not a plain relative path"),
    ("non-JSON data", _not_json, "data: not JSON"),
    ("unknown policy class", _with_data(_set_class("evil", "Evil")), "policy_class evil.Evil is not one of"),
    (
        "MultiInputPolicy",
        _with_data(_set_class("stable_baselines3.common.policies", "MultiInputActorCriticPolicy")),
        "is for Dict observations; mtrain_env/MexicanTrain-v0 observes a Box: train with MlpPolicy",
    ),
    (
        "custom activation",
        _with_data(_kwargs(activation_fn="<class 'evil.Swish'>")),
        "activation_fn \"<class 'evil.Swish'>\" is not one of torch.nn's Tanh, ReLU",
    ),
    (
        "custom extractor",
        _with_data(_kwargs(features_extractor_class="<class 'evil.Extractor'>")),
        "only the FlattenExtractor (MlpPolicy) is read",
    ),
    (
        "unknown policy_kwargs",
        _with_data(_kwargs(dueling=True)),
        "policy_kwargs ['dueling'] change the network",
    ),
    (
        "another action space",
        _with_data(lambda d: d.update(action_space={":type:": "<class 'gymnasium.spaces.box.Box'>"})),
        "data: action_space is a Box; this env's is a Discrete",
    ),
    (
        "another observation space",
        _with_data(_space("observation_space", _shape=[4, 29])),
        "observation_space must be a flat float32 Box, got shape [4, 29]",
    ),
]


@pytest.mark.parametrize(("make", "says"), [c[1:] for c in CRAFTED], ids=[c[0] for c in CRAFTED])
def test_a_crafted_archive_is_refused_and_its_code_never_runs(
    models: dict[str, tuple[Any, Path]], tmp_path: Path, make: Callable[[Path, Path, Path], Path], says: str
) -> None:
    marker = tmp_path / "marker"
    path = make(models["maskable_ppo"][1], tmp_path / "crafted.zip", marker)
    for load in (lambda: PPOAgent(path=path).policy, lambda: read_sb3_model(path)):
        with pytest.raises(PolicyFileError) as err:
            load()
        text = str(err.value)
        assert text.startswith(f"{path}: ") and says in text and "\n" not in text, text
        assert not marker.exists()
        ppo.clear_cache()


def test_the_pickled_blobs_of_a_genuine_archive_are_never_decoded(
    models: dict[str, tuple[Any, Path]], tmp_path: Path
) -> None:
    """Every ``":serialized:"`` blob replaced by a live payload: the model still plays (its
    plain fields and weights are intact) and the payload never runs."""
    marker = tmp_path / "marker"
    model, src = models["maskable_ppo"]
    path = _armed_archive(src, tmp_path / "armed.zip", marker)
    blobs = [v[":serialized:"] for v in _data(path).values() if isinstance(v, dict) and ":serialized:" in v]
    assert len(blobs) >= 4  # policy_class, policy_kwargs, the spaces, the schedules
    _same_moves("maskable_ppo", model, path, 200)
    assert not marker.exists()
    pickle.loads(base64.b64decode(blobs[0]))
    assert marker.exists()


# ------------------------------------------------------- another table or version
def test_a_model_of_another_table_is_refused_naming_both(models: dict[str, tuple[Any, Path]]) -> None:
    agent = PPOAgent(path=models["dqn"][1])
    with pytest.raises(ValueError) as err:
        agent.check_game(GameConfig.make(num_players=3, max_pips=6))
    text = str(err.value)
    assert "was trained for another table (116 inputs, 86 actions); this game has" in text, text
    assert "\n" not in text


def test_a_model_is_read_as_observation_version_1_and_refused_for_another(
    models: dict[str, tuple[Any, Path]],
) -> None:
    path = models["ppo"][1]
    assert read_sb3_model(path).observation_version == 1
    with pytest.raises(PolicyFileError, match="trained on observation version 1; this env writes version 2"):
        read_sb3_model(path, env_version=2)
    env = gymnasium.make(ENV_ID, **SMALL, observation_version=2).unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match="trained on observation version 1; this env writes version 2"):
        PPOAgent(path=path).act(env.learner_decision())


# ------------------------------------------------------------------------ slow
@pytest.mark.slow
@pytest.mark.parametrize("algo", ["maskable_ppo", "ppo", "dqn"])
def test_a_model_trained_20k_steps_plays_sb3s_moves_and_in_bench(algo: str, tmp_path: Path) -> None:
    from training.app import main

    model, path = _train(algo, 20_000, tmp_path)
    _same_moves(algo, model, path, 1_000)
    argv = ["bench", "--agents", f"ppo[path={path}]", "planner", "--players", "2", "--max-pips", "6"]
    out = tmp_path / "bench"
    assert (
        main([*argv, "--deals", "4", "--workers", "1", "--out", str(out), "--no-progress", "--no-plots"]) == 0
    )
    assert f"ppo[path={path}]" in "".join(p.read_text() for p in out.glob("*.csv"))
