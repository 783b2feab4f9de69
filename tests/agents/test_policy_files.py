"""Policy files hold data, never code (:mod:`agents.policy_net`).

* a policy file (``policy.json`` + one ``.npy`` per parameter) round-trips bit for bit,
  is byte-identical for the same weights, and is a plain ``.npz`` for numpy;
* the policy of an SB3 model archive is read from its data-only parts and equals what SB3's
  own (unpickling) loader gives;
* every file that would need unpickling (a pickle, ``torch.save`` of an object, SB3's
  ``policy.save``, an archive whose ``policy.pth`` or whose ``.npy`` holds objects) is refused
  by ``PPOAgent(path=...)`` and ``load_policy`` with one line naming the file, and the code
  in it never runs (a marker file it would create stays absent);
* malformed policy files are refused with the member and what is wrong.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch as th

from agents.mexican_train import ppo
from agents.mexican_train.ppo import PPOAgent, load_policy
from agents.policy_net import (
    MAX_PARAMETERS,
    GuardedMaskablePolicy,
    PolicyFileError,
    PolicySpec,
    build_policy,
    policy_spec,
    read_policy,
    read_sb3_archive,
    save_policy,
    upgrade_trusted_policy,
)
from mtrain_env.mexican_train.core.config import GameConfig

SMALL: dict[str, Any] = {"num_players": 3, "max_pips": 6}


class Payload:
    """Unpickling this runs code: it creates ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (exec, (f"open({str(self.marker)!r}, 'w').close()",))


@pytest.fixture(scope="module")
def model_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SB3 model archive of a tiny trained model (as ``mtrain train`` writes them)."""
    from training.policy import RobustMaskablePPO
    from training.single_agent import SingleAgentEnv

    path = tmp_path_factory.mktemp("model") / "model.zip"
    model = RobustMaskablePPO(
        GuardedMaskablePolicy,
        SingleAgentEnv(env_kwargs=SMALL),
        n_steps=64,
        batch_size=64,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={
            "net_arch": {"pi": [16, 8], "vf": [16, 8]},
            "logit_bound": 7.5,
            "features": "env",
            "ortho_init": True,
        },
    )
    model.learn(64)
    model.save(path)
    return path


@pytest.fixture
def policy() -> GuardedMaskablePolicy:
    spec = PolicySpec(
        observation_size=12, action_count=5, pi=(6, 4), vf=(3,), features="planner", logit_bound=3.0
    )
    net = build_policy(spec)
    gen = th.Generator().manual_seed(0)
    with th.no_grad():
        for p in net.parameters():
            p.copy_(th.randn(p.shape, generator=gen))
    return net


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    ppo.clear_cache()


def _logits(net: GuardedMaskablePolicy, x: np.ndarray) -> np.ndarray:
    with th.no_grad():
        return net.action_logits(th.as_tensor(x, dtype=th.float32).reshape(1, -1))[0].numpy()


# ------------------------------------------------------------------------- the format
def test_a_policy_file_round_trips_bit_for_bit(policy: GuardedMaskablePolicy, tmp_path: Path) -> None:
    path = tmp_path / "p.npz"
    spec = save_policy(policy, path)
    assert spec == policy_spec(policy)
    again = read_policy(path)
    assert policy_spec(again) == spec and again.features == "planner" and again.logit_bound == 3.0
    for (k, a), (k2, b) in zip(policy.state_dict().items(), again.state_dict().items(), strict=True):
        assert k == k2 and th.equal(a, b)
    x = np.linspace(0, 1, 12, dtype=np.float32)
    np.testing.assert_array_equal(_logits(policy, x), _logits(again, x))
    # the same weights give the same bytes; numpy reads it as an .npz without pickle
    save_policy(again, tmp_path / "q.npz")
    assert (tmp_path / "q.npz").read_bytes() == path.read_bytes()
    with np.load(path, allow_pickle=False) as npz:
        assert json.loads(npz["policy.json"]) == spec.to_json()
        np.testing.assert_array_equal(npz["action_net.weight"], policy.action_net.weight.numpy())


def test_loading_a_policy_leaves_torchs_generator_alone(
    policy: GuardedMaskablePolicy, tmp_path: Path
) -> None:
    save_policy(policy, tmp_path / "p.npz")
    th.manual_seed(5)
    before = th.get_rng_state()
    read_policy(tmp_path / "p.npz")
    assert th.equal(before, th.get_rng_state())


def test_the_ppo_agent_plays_a_policy_file_through_numpy(tmp_path: Path, model_zip: Path) -> None:
    import agents
    from mtrain_env.mexican_train.env import raw_env

    spec, _steps, _weights = read_sb3_archive(model_zip)
    save_policy(read_policy(model_zip), tmp_path / "p.npz")
    agent = PPOAgent(path=tmp_path / "p.npz")
    env = raw_env(**SMALL)
    env.reset(seed=1)
    d = agents.decision_for(env, env.agent_selection)
    assert d.action_mask[agent.act(d)] == 1 and agent._actor is not None
    np.testing.assert_allclose(agent.logits(d.observation), _logits(agent.policy, d.observation), atol=1e-5)
    assert spec.action_count == d.action_mask.shape[0]


def test_a_run_directory_means_its_policy_file(tmp_path: Path, model_zip: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "final_model.zip").write_bytes(model_zip.read_bytes())
    assert policy_spec(load_policy(run)).pi == (16, 8)  # only the model archive: read weights-only
    spec = PolicySpec(observation_size=137, action_count=114, pi=(4,), vf=(4,))
    save_policy(build_policy(spec), run / "policy.npz")
    ppo.clear_cache()
    assert policy_spec(load_policy(run)) == spec
    with pytest.raises(FileNotFoundError, match="no policy file"):
        load_policy(tmp_path / "nothing.npz")


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc/self/mem")
def test_a_policy_file_that_cannot_be_read_is_refused_naming_it(tmp_path: Path) -> None:
    """Every read fails (a link to ``/proc/self/mem``; ``chmod 000`` for a user who is not
    root): a :class:`PolicyFileError` with the system's reason, not an ``OSError`` traceback;
    a missing file stays a ``FileNotFoundError``."""
    unreadable = tmp_path / "policy.npz"
    unreadable.symlink_to("/proc/self/mem")
    with pytest.raises(PolicyFileError) as info:
        read_policy(unreadable)
    assert str(info.value) == f"{unreadable}: cannot read it (Input/output error)"
    with pytest.raises(FileNotFoundError):
        read_policy(tmp_path / "missing.npz")


# ------------------------------------------------------------- SB3 archives, weights only
def test_an_sb3_archive_is_read_without_unpickling_and_equals_sb3s_load(model_zip: Path) -> None:
    from sb3_contrib import MaskablePPO

    spec, steps, _weights = read_sb3_archive(model_zip)
    assert (spec.pi, spec.vf, spec.logit_bound, spec.features, steps) == ((16, 8), (16, 8), 7.5, "env", 64)
    mine = read_policy(model_zip)
    theirs = MaskablePPO.load(model_zip, device="cpu").policy  # SB3's loader unpickles (trusted here)
    for (k, a), (k2, b) in zip(mine.state_dict().items(), theirs.state_dict().items(), strict=True):
        assert k == k2 and th.equal(a, b)
    x = np.random.default_rng(0).random(spec.observation_size, dtype=np.float32)
    np.testing.assert_array_equal(_logits(mine, x), _logits(theirs, x))


def _rewrite_zip(src: Path, dst: Path, replace: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            zout.writestr(name, replace.get(name, zin.read(name)))
        for name, data in replace.items():
            if name not in zin.namelist():
                zout.writestr(name, data)
    return dst


def test_sb3_archives_needing_unpickling_are_refused(model_zip: Path, tmp_path: Path) -> None:
    data = json.loads(zipfile.ZipFile(model_zip).read("data"))
    kwargs = {":type:": "<class 'dict'>", ":serialized:": "gAR9lC4="}
    serialized = _rewrite_zip(
        model_zip, tmp_path / "a.zip", {"data": json.dumps({**data, "policy_kwargs": kwargs}).encode()}
    )
    with pytest.raises(PolicyFileError, match="policy_kwargs would need unpickling"):
        read_policy(serialized)
    relu = {**data["policy_kwargs"], "activation_fn": kwargs}
    other = _rewrite_zip(
        model_zip, tmp_path / "b.zip", {"data": json.dumps({**data, "policy_kwargs": relu}).encode()}
    )
    with pytest.raises(PolicyFileError, match=r"\['activation_fn'\] are not read without unpickling"):
        read_policy(other)
    foreign = {**data, "policy_class": {**data["policy_class"], "__module__": "evil"}}
    alien = _rewrite_zip(model_zip, tmp_path / "c.zip", {"data": json.dumps(foreign).encode()})
    with pytest.raises(PolicyFileError, match="only GuardedMaskablePolicy models"):
        read_policy(alien)


# ------------------------------------------------------------------ code never runs
def _raw_pickle(path: Path, marker: Path, _model_zip: Path) -> Callable[[], Any]:
    path.write_bytes(pickle.dumps({"state_dict": Payload(marker)}))
    return lambda: pickle.loads(path.read_bytes())


def _torch_save(path: Path, marker: Path, _model_zip: Path) -> Callable[[], Any]:
    th.save({"state_dict": {}, "data": Payload(marker)}, path)
    return lambda: th.load(path, weights_only=False)


def _torch_save_legacy(path: Path, marker: Path, _model_zip: Path) -> Callable[[], Any]:
    th.save({"data": Payload(marker)}, path, _use_new_zipfile_serialization=False)
    return lambda: th.load(path, weights_only=False)


def _sb3_policy_save(path: Path, marker: Path, model_zip: Path) -> Callable[[], Any]:
    """SB3's ``policy.save`` file whose pickled constructor data carries the payload."""
    policy = read_policy(model_zip)
    policy.save(str(path))
    saved = th.load(path, weights_only=False)
    saved["data"]["lr_schedule"] = Payload(marker)
    th.save(saved, path)
    return lambda: th.load(path, weights_only=False)  # what GuardedMaskablePolicy.load does first


def _sb3_archive(path: Path, marker: Path, model_zip: Path) -> Callable[[], Any]:
    """A genuine model archive whose ``policy.pth`` is a pickle carrying the payload."""
    buf = io.BytesIO()
    th.save({"action_net.weight": Payload(marker)}, buf)
    _rewrite_zip(model_zip, path, {"policy.pth": buf.getvalue()})
    return lambda: th.load(io.BytesIO(zipfile.ZipFile(path).read("policy.pth")), weights_only=False)


def _policy_file_with_objects(path: Path, marker: Path, model_zip: Path) -> Callable[[], Any]:
    """A policy file whose ``action_net.bias.npy`` is a pickled object array."""
    save_policy(read_policy(model_zip), path)
    buf = io.BytesIO()
    np.save(buf, np.array([Payload(marker)], dtype=object), allow_pickle=True)
    _rewrite_zip(path, path.with_suffix(".tmp"), {"action_net.bias.npy": buf.getvalue()}).replace(path)
    return lambda: np.load(path, allow_pickle=True)["action_net.bias"]


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_raw_pickle, "a pickle, not a policy file"),
        (_torch_save, "a pickled torch file"),
        (_torch_save_legacy, "a pickle, not a policy file"),
        (_sb3_policy_save, "a pickled torch file"),
        (_sb3_archive, "policy.pth: not a weights-only state dict"),
        (_policy_file_with_objects, "action_net.bias.npy: dtype object"),
    ],
)
def test_a_file_carrying_code_is_refused_and_the_code_never_runs(
    tmp_path: Path, model_zip: Path, make: Callable[[Path, Path, Path], Callable[[], Any]], says: str
) -> None:
    marker = tmp_path / "marker"
    path = tmp_path / "crafted.pt"
    unsafe_load = make(path, marker, model_zip)
    assert not marker.exists()
    unsafe_load()  # the file does run code when unpickled (so this test can fail)
    assert marker.exists()
    marker.unlink()
    for load in (lambda: PPOAgent(path=path).policy, lambda: load_policy(path), lambda: read_policy(path)):
        with pytest.raises(ValueError) as info:
            load()
        text = str(info.value)
        assert text.startswith(f"{path}: ") and says in text and "\n" not in text, text
        assert not marker.exists()
        ppo.clear_cache()


# ------------------------------------------------------------------ malformed files
def _with_spec(src: Path, dst: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    spec = json.loads(zipfile.ZipFile(src).read("policy.json"))
    change(spec)
    return _rewrite_zip(src, dst, {"policy.json": json.dumps(spec).encode()})


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


MALFORMED: list[Any] = [
    pytest.param(
        lambda s: s.update(format="other"), "policy.json: format must be 'mtrain-policy'", id="format"
    ),
    pytest.param(lambda s: s.update(version=3), "format version 3; this version reads 1, 2", id="version"),
    pytest.param(
        lambda s: s.pop("observation_version"), "missing keys ['observation_version']", id="no-obs-version"
    ),
    pytest.param(
        lambda s: s.update(observation_version="1"), "observation_version must be an int >= 1", id="obs-str"
    ),
    pytest.param(
        lambda s: s.update(version=1), "unknown keys ['observation_version']", id="obs-version-in-v1"
    ),
    pytest.param(lambda s: s.pop("features"), "missing keys ['features']", id="missing"),
    pytest.param(lambda s: s.update(extra=1), "unknown keys ['extra']", id="unknown"),
    pytest.param(
        lambda s: s.update(observation_size=True), "observation_size must be an int >= 1", id="bool"
    ),
    pytest.param(lambda s: s.update(action_count=0), "action_count must be an int >= 1", id="actions"),
    pytest.param(lambda s: s["net_arch"].update(pi=[8, -1]), "net_arch.pi must be a list", id="net_arch"),
    pytest.param(lambda s: s.update(net_arch=[8]), "net_arch must be", id="net_arch_list"),
    pytest.param(
        lambda s: s.update(activation="gelu"), "activation must be one of tanh, relu", id="activation"
    ),
    pytest.param(
        lambda s: s.update(activation=[]), "activation must be one of tanh, relu", id="activation-list"
    ),
    pytest.param(lambda s: s.update(version=True), "format version True", id="version-true"),
    pytest.param(lambda s: s.update(features="../x"), "features must name a feature set", id="features"),
    pytest.param(
        lambda s: s.update(logit_bound=float("nan")), "logit_bound must be a finite number", id="nan"
    ),
    pytest.param(lambda s: s.update(ortho_init="yes"), "ortho_init must be true or false", id="ortho"),
    pytest.param(
        lambda s: s["parameters"].update({"action_net.bias": [3]}), "parameters: the shapes", id="parameters"
    ),
    pytest.param(
        lambda s: s["net_arch"].update(pi=[10**6, 10**6]), f"(at most {MAX_PARAMETERS})", id="too-big"
    ),
]


@pytest.mark.parametrize(("change", "says"), MALFORMED)
def test_a_malformed_policy_json_is_refused(
    policy: GuardedMaskablePolicy, tmp_path: Path, change: Callable[[dict[str, Any]], None], says: str
) -> None:
    good = tmp_path / "good.npz"
    save_policy(policy, good)
    bad = _with_spec(good, tmp_path / "bad.npz", change)
    with pytest.raises(PolicyFileError) as info:
        read_policy(bad)
    assert says in str(info.value) and str(info.value).startswith(f"{bad}: ")


@pytest.mark.parametrize(
    ("replace", "says"),
    [
        ({"action_net.bias.npy": _npy(np.zeros(4, np.float32))}, "action_net.bias.npy: shape (4,)"),
        ({"action_net.bias.npy": _npy(np.zeros(5, np.float64))}, "action_net.bias.npy: dtype float64"),
        ({"action_net.bias.npy": _npy(np.full(5, np.nan, np.float32))}, "non-finite values"),
        ({"action_net.bias.npy": _npy(np.zeros(5, np.float32))[:-4]}, "16 data bytes, 20 expected"),
        ({"action_net.bias.npy": b"not an array"}, "action_net.bias.npy: "),
        ({"policy.json": b"{not json"}, "policy.json: not JSON"),
        ({"extra.npy": _npy(np.zeros(1, np.float32))}, "unexpected members ['extra.npy']"),
    ],
)
def test_a_malformed_member_is_refused(
    policy: GuardedMaskablePolicy, tmp_path: Path, replace: dict[str, bytes], says: str
) -> None:
    good = tmp_path / "good.npz"
    save_policy(policy, good)
    bad = _rewrite_zip(good, tmp_path / "bad.npz", replace)
    with pytest.raises(PolicyFileError) as info:
        read_policy(bad)
    assert says in str(info.value), str(info.value)


def test_missing_truncated_and_foreign_files_are_refused(
    policy: GuardedMaskablePolicy, tmp_path: Path
) -> None:
    good = tmp_path / "good.npz"
    save_policy(policy, good)
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(tmp_path / "missing.npz", "w") as zout:
        for name in zin.namelist():
            if name != "value_net.bias.npy":
                zout.writestr(name, zin.read(name))
    cases = {
        tmp_path / "missing.npz": "value_net.bias.npy: missing",
        tmp_path / "truncated.npz": "not a policy file (not a zip archive)",
        tmp_path / "text.npz": "not a policy file (not a zip archive)",
        tmp_path / "other.zip": "not a policy file (a zip archive without policy.json)",
    }
    (tmp_path / "truncated.npz").write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    (tmp_path / "text.npz").write_text("hello")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as zf:
        zf.writestr("readme.txt", "hi")
    for path, says in cases.items():
        with pytest.raises(PolicyFileError) as info:
            read_policy(path)
        assert str(info.value) == f"{path}: {says}"


class _Planted:
    """What a planted pickle holds: an object whose unpickling calls ``os.system``."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (self.command,))


def test_a_planted_pickled_policy_is_refused_without_running_it(model_zip: Path, tmp_path: Path) -> None:
    """The upgrade reads SB3's pickle with torch's weights_only loader and an allowlist:
    a file that would call a function, or hold an argument a policy never has, is refused."""
    marker = tmp_path / "ran"
    th.save({"data": {"x": _Planted(f"touch {marker}")}, "state_dict": {}}, tmp_path / "planted.pt")
    with pytest.raises(PolicyFileError) as info:
        upgrade_trusted_policy(tmp_path / "planted.pt", tmp_path / "out.npz")
    named = f"{os.system.__module__}.system"  # posix.system here
    assert (
        info.value.message
        == f"not a policy pickled by SB3's policy.save (it names {named}, which a policy never holds)"
    )
    assert not marker.exists() and not (tmp_path / "out.npz").exists()
    saved = th.load(_saved_policy(model_zip, tmp_path), weights_only=False)
    th.save({**saved, "data": {**saved["data"], "extra": 1}}, tmp_path / "extra.pt")
    with pytest.raises(PolicyFileError, match=r"constructor arguments \['extra'\] that a policy never holds"):
        upgrade_trusted_policy(tmp_path / "extra.pt", tmp_path / "out.npz")


def _saved_policy(model_zip: Path, tmp_path: Path) -> Path:
    read_policy(model_zip).save(str(tmp_path / "saved.pt"))
    return tmp_path / "saved.pt"


def test_a_trusted_pickled_policy_is_upgraded_to_a_policy_file(model_zip: Path, tmp_path: Path) -> None:
    policy = read_policy(model_zip)
    policy.save(str(tmp_path / "old.pt"))  # SB3's pickle, as policies were saved before
    with pytest.raises(PolicyFileError, match="a pickled torch file"):
        read_policy(tmp_path / "old.pt")
    spec = upgrade_trusted_policy(tmp_path / "old.pt", tmp_path / "new.npz")
    assert spec == policy_spec(policy)
    for a, b in zip(
        policy.state_dict().values(), read_policy(tmp_path / "new.npz").state_dict().values(), strict=True
    ):
        assert th.equal(a, b)


# ------------------------------------------------------------------------- observation versions
def test_a_policy_file_records_the_observation_version_of_its_input(
    policy: GuardedMaskablePolicy, tmp_path: Path
) -> None:
    path = tmp_path / "p.npz"
    save_policy(policy, path)
    header = json.loads(zipfile.ZipFile(path).read("policy.json"))
    assert header["version"] == 2 and header["observation_version"] == 1  # planner features version 1
    assert read_policy(path).observation_version == 1


def _reshaped(spec: dict[str, Any], observation_version: int) -> None:
    """Another observation version AND another observation size (its parameters to match)."""
    spec.update(observation_version=observation_version, observation_size=spec["observation_size"] + 7)
    for name, shape in spec["parameters"].items():
        if name.endswith(".0.weight"):
            shape[1] += 7


@pytest.mark.parametrize("features", ["env", "planner"])
def test_a_policy_of_another_observation_version_is_refused_for_it_before_its_sizes(
    tmp_path: Path, features: str
) -> None:
    """The message names both versions, not the sizes that differ too."""
    net = build_policy(PolicySpec(observation_size=12, action_count=5, pi=(4,), vf=(3,), features=features))
    good = tmp_path / "good.npz"
    save_policy(net, good)
    bad = _with_spec(good, tmp_path / "bad.npz", lambda s: _reshaped(s, 2))
    what = "observation" if features == "env" else "'planner' features"
    with pytest.raises(
        PolicyFileError, match=f"trained on {what} version 2; this env writes version 1 -- retrain"
    ):
        read_policy(bad)
    agent = PPOAgent(path=str(bad))
    with pytest.raises(ValueError, match=f"trained on {what} version 2; this env writes version 1"):
        agent.check_game(GameConfig.make(**SMALL))
    if features == "env":  # a version-1 network read for an env writing version 2
        with pytest.raises(
            PolicyFileError, match="trained on observation version 1; this env writes version 2"
        ):
            read_policy(good, env_version=2)
        with pytest.raises(PolicyFileError, match=r"shape \(4, 12\), the architecture says \(4, 19\)"):
            read_policy(bad, env_version=2)  # its version fits: only then are its sizes compared
    else:  # the planner features extend observation version 1 only
        with pytest.raises(PolicyFileError, match="the planner features extend observation version 1"):
            read_policy(good, env_version=2)


def test_a_policy_file_of_format_version_1_is_read_as_observation_version_1(
    policy: GuardedMaskablePolicy, tmp_path: Path
) -> None:
    """Files written before the field existed read the only layout there was: version 1."""
    good = tmp_path / "good.npz"
    save_policy(policy, good)

    def version_1(spec: dict[str, Any]) -> None:
        spec.update(version=1)
        del spec["observation_version"]

    old = _with_spec(good, tmp_path / "old.npz", version_1)
    again = read_policy(old)
    assert again.observation_version == 1 and policy_spec(again) == policy_spec(policy)
    with pytest.raises(PolicyFileError, match="the planner features extend observation version 1"):
        read_policy(old, env_version=2)


def test_an_sb3_archive_without_observation_version_is_read_as_version_1(model_zip: Path) -> None:
    spec, _steps, _weights = read_sb3_archive(model_zip)
    assert spec.observation_version == 1


def test_the_shipped_networks_load_at_observation_version_1() -> None:
    """Every shipped policy file (the self-play networks, and the MaskablePPO one while it
    ships) predates the field and loads as observation version 1, headers untouched."""
    from agents.mexican_train.selfplay_file import is_selfplay_policy

    shipped = [p for p in sorted(ppo.REFERENCE_POLICY.parent.glob("*.npz")) if _is_policy_file(p)]
    assert ppo.REFERENCE_POLICY in shipped and len(shipped) >= 7
    for path in shipped:
        assert json.loads(zipfile.ZipFile(path).read("policy.json"))["version"] == 1
        assert load_policy(path).observation_version == 1, path
        assert is_selfplay_policy(path) or path.name == "maskable_ppo.npz"


def _is_policy_file(path: Path) -> bool:
    with zipfile.ZipFile(path) as zf:
        return "policy.json" in zf.namelist()


def test_the_ppo_agent_refuses_an_env_of_another_observation_version_by_name() -> None:
    """The reference network (version 1) in an env writing version 2: refused for the version
    on its first decision, not for the observation size that differs too."""
    import mtrain_env
    from agents.mexican_train.base import decision_for

    env = mtrain_env.raw_env(num_players=4, max_pips=12, observation_version=2)
    env.reset(seed=0)
    agent = PPOAgent()
    agent.check_game(env.config)  # the table fits; the env's layout does not
    with pytest.raises(ValueError, match="trained on observation version 1; this env writes version 2"):
        agent.act(decision_for(env, env.agent_selection))
