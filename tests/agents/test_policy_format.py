"""The policy-file container both formats share (:mod:`agents.policy_format`).

* :func:`write_npy_zip` writes the same bytes for the same arrays, in the compression asked;
* the header's size is checked before anything is decompressed, and both readers
  (``read_policy`` and ``read_selfplay_file``) refuse an oversized ``policy.json`` alike;
* the member set is checked before any array is read.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.mexican_train.selfplay_file import (
    NetSpec,
    parameter_shapes,
    read_selfplay_file,
    write_selfplay_file,
)
from agents.policy_format import (
    MAX_HEADER_BYTES,
    read_json_member,
    read_npy_members,
    write_npy_zip,
)
from mtrain_env.mexican_train.core.config import GameConfig

ARRAYS = {"b": np.arange(3, dtype=np.float64), "a": np.ones((2, 2), np.float32)}


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_the_same_arrays_give_the_same_bytes(tmp_path: Path, compression: int) -> None:
    first = write_npy_zip(tmp_path / "one.npz", '{"x": 1}', ARRAYS, compression)
    second = write_npy_zip(tmp_path / "two.npz", '{"x": 1}', dict(ARRAYS), compression)
    assert first.read_bytes() == second.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.npz", "two.npz"]  # no .tmp left
    with zipfile.ZipFile(first) as zf:
        assert zf.namelist() == ["policy.json", "b.npy", "a.npy"]
        assert {i.compress_type for i in zf.infolist()} == {compression}
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        arrays = read_npy_members(zf, {"b": (3,), "a": (2, 2)})
    assert arrays["b"].dtype == np.dtype("<f4") and arrays["b"].tolist() == [0.0, 1.0, 2.0]
    assert np.load(first)["a"].tolist() == [[1.0, 1.0], [1.0, 1.0]]  # a plain .npz for numpy


def _bomb(path: Path, size: int) -> Path:
    """A deflated ``policy.json`` of ``size`` bytes (a few kB on disk)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("policy.json", "{" + " " * (size - 2) + "}")
    return path


def test_an_oversized_header_is_refused_before_decompressing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _bomb(tmp_path / "bomb.npz", MAX_HEADER_BYTES + 1)
    with zipfile.ZipFile(path) as zf:
        monkeypatch.setattr(zf, "open", lambda *_a, **_k: pytest.fail("decompressed"))
        with pytest.raises(ValueError) as info:
            read_json_member(zf)
        assert str(info.value).startswith(f"policy.json: {MAX_HEADER_BYTES + 1} bytes, more than the")
    with zipfile.ZipFile(_bomb(tmp_path / "fits.npz", MAX_HEADER_BYTES)) as zf:
        assert read_json_member(zf) == {}


def test_both_readers_refuse_an_oversized_header(tmp_path: Path) -> None:
    path = _bomb(tmp_path / "bomb.npz", MAX_HEADER_BYTES + 1)
    says = f"{path}: policy.json: {MAX_HEADER_BYTES + 1} bytes, more than the {MAX_HEADER_BYTES} expected"
    with pytest.raises(ValueError) as info:
        read_selfplay_file(path)
    assert str(info.value) == says
    policy_net = pytest.importorskip("agents.policy_net")
    with pytest.raises(policy_net.PolicyFileError) as info:
        policy_net.read_policy(path)
    assert str(info.value) == says


def _selfplay(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    spec = NetSpec.make("mlp", GameConfig.make(num_players=2, max_pips=6), hidden=4)
    arrays = {k: np.zeros(s, np.float32) for k, s in parameter_shapes(spec).items()}
    path = write_selfplay_file(spec, arrays, tmp_path / "good.npz")
    return path, json.loads(zipfile.ZipFile(path).read("policy.json"))


def _copy(src: Path, dst: Path, drop: str = "", add: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            if item.filename != drop:
                zout.writestr(item, zin.read(item.filename))
        for name, data in (add or {}).items():
            zout.writestr(name, data)
    return dst


def test_the_member_set_is_checked(tmp_path: Path) -> None:
    good, _header = _selfplay(tmp_path)
    many = {f"x{i}.npy": b"" for i in range(5)}
    tail = "(not parameters of policy.json)"
    members = "unexpected members"
    cases = {
        _copy(good, tmp_path / "missing.npz", drop="trunk.2.bias.npy"): "trunk.2.bias.npy: missing",
        _copy(good, tmp_path / "extra.npz", add={"extra.npy": b""}): f"{members} ['extra.npy'] {tail}",
        _copy(good, tmp_path / "many.npz", add=many): f"{members} {list(many)[:3]} and 2 more {tail}",
        _copy(good, tmp_path / "no-header.npz", drop="policy.json"): "policy.json: missing",
    }
    for path, says in cases.items():
        with pytest.raises(ValueError) as info:
            read_selfplay_file(path)
        assert str(info.value) == f"{path}: {says}"


# ------------------------------------------------------------------------- observation versions
def test_a_selfplay_file_records_its_observation_version(tmp_path: Path) -> None:
    path, header = _selfplay(tmp_path)
    assert header["version"] == 2 and header["observation_version"] == 1
    spec, _ = read_selfplay_file(path)
    assert spec.observation_version == 1


def test_a_selfplay_network_of_another_observation_version_is_refused_for_it_before_its_shapes(
    tmp_path: Path,
) -> None:
    """A version-2 network (its trunk wider by version 2's view) read for the default env:
    the message names both versions, not the shapes; read for version 2 it loads and plays
    that env's vectors. A version-1 network read for version 2 is refused by name too."""
    import mtrain_env
    from agents.mexican_train.numpy_nets import load_selfplay_policy

    config = GameConfig.make(num_players=2, max_pips=6)
    new = NetSpec.make("mlp", config, hidden=4, observation_version=2)
    old = NetSpec.make("mlp", config, hidden=4)
    assert parameter_shapes(new)["trunk.0.weight"] != parameter_shapes(old)["trunk.0.weight"]
    arrays = {k: np.full(s, 0.01, np.float32) for k, s in parameter_shapes(new).items()}
    path = write_selfplay_file(new, arrays, tmp_path / "v2.npz")
    with pytest.raises(
        ValueError, match="trained on observation version 2; this env writes version 1 -- retrain"
    ):
        read_selfplay_file(path)
    policy = load_selfplay_policy(path, env_version=2)
    env = mtrain_env.raw_env(num_players=2, max_pips=6, observation_version=2)
    env.reset(seed=0)
    agent = env.agent_selection
    logits = policy.masked_logits(env.observe(agent)["observation"], env.observe_mask(agent))
    assert logits.shape == (config.num_actions,) and policy.observation_version == 2
    v1, _ = _selfplay(tmp_path)
    with pytest.raises(ValueError, match="trained on observation version 1; this env writes version 2"):
        read_selfplay_file(v1, env_version=2)


def test_a_selfplay_file_of_format_version_1_is_read_as_observation_version_1(tmp_path: Path) -> None:
    path, header = _selfplay(tmp_path)
    header["version"] = 1
    del header["observation_version"]
    old = _copy(
        path, tmp_path / "old.npz", drop="policy.json", add={"policy.json": json.dumps(header).encode()}
    )
    spec, _ = read_selfplay_file(old)
    assert spec.observation_version == 1
    with pytest.raises(ValueError, match="trained on observation version 1; this env writes version 2"):
        read_selfplay_file(old, env_version=2)
    header["observation_version"] = 1  # not a key of format version 1
    bad = _copy(
        path, tmp_path / "bad.npz", drop="policy.json", add={"policy.json": json.dumps(header).encode()}
    )
    with pytest.raises(ValueError, match="keys must be"):
        read_selfplay_file(bad)


def test_the_shipped_selfplay_networks_load_with_their_weights_as_written(tmp_path: Path) -> None:
    """Each shipped self-play network is a format-version-1 file read as observation version
    1; written again it differs from the shipped file in its header only."""
    import hashlib

    from agents.mexican_train.ppo import REFERENCE_POLICY
    from agents.mexican_train.selfplay_file import is_selfplay_policy

    shipped = [p for p in sorted(REFERENCE_POLICY.parent.glob("*.npz")) if is_selfplay_policy(p)]
    assert REFERENCE_POLICY in shipped and len(shipped) >= 7
    for path in shipped:
        spec, arrays = read_selfplay_file(path)
        assert spec.observation_version == 1, path
        again = write_selfplay_file(spec, arrays, tmp_path / path.name)
        with zipfile.ZipFile(path) as a, zipfile.ZipFile(again) as b:
            names = [n for n in a.namelist() if n != "policy.json"]
            assert sorted(names) == sorted(n for n in b.namelist() if n != "policy.json")
            for name in names:
                assert hashlib.sha256(a.read(name)).digest() == hashlib.sha256(b.read(name)).digest(), name
