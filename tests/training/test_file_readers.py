"""What the readers of files users hand us must refuse, and how they word it (where mutation testing
found them unpinned: ``agents/policy_format.py``, ``agents/registry.py``,
``agents/mexican_train/pickles.py``, ``training/checks.py``, ``training/checkpoints.py``,
``agents/mexican_train/selfplay_file.py`` and ``training/run_dir.py``).

Each test here failed on at least one mutant that every other fast test passed on: a
refusal that no test had triggered, a message no test had read to the end, a branch
(the shape text of an architecture, torch's unpickler wording) no test had reached.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from agents.base import BaseAgent, SeatDecision
from agents.mexican_train import pickles
from agents.mexican_train.league import SNAPSHOT, League, OpponentSpec
from agents.mexican_train.selfplay_file import (
    NetSpec,
    is_selfplay_policy,
    parameter_shapes,
    read_selfplay_file,
    write_selfplay_file,
)
from agents.policy_format import (
    check_format,
    read_checked_npy,
    read_json_member,
    read_member,
    read_npy_members,
    weights_only_refusal,
    write_npy_zip,
)
from agents.registry import (
    GAMES,
    REGISTRIES,
    agent_class,
    agent_names,
    check_params,
    import_class,
    make_agent,
    parse_param,
    parse_spec,
    register,
    split_specs,
)
from mtrain_env.mexican_train.core.config import GameConfig
from tests.agents.test_pickles import _calls
from training.checkpoints import (
    _STATE_KEYS,
    MODEL_OBJECTS,
    _check_hashes,
    _check_model_data,
    _check_state,
    _recorded_hashes,
    sha256_of,
    upgrade_format_1,
)
from training.checks import (
    ConfigError,
    check_agent,
    check_agent_list,
    check_bool,
    check_choice,
    check_int,
    check_path,
    check_real,
    check_seat,
    check_sizes,
    check_weights,
    is_int,
    is_real,
)
from training.run_config import TrainConfig
from training.run_dir import (
    CheckpointError,
    is_rllib_run,
    latest_checkpoint,
    read_config,
    read_latest,
    run_config_json,
    run_files,
    strict_json,
)


def _npy(array: np.ndarray) -> io.BytesIO:
    """``array`` as an ``.npy`` stream (the bytes a member of a policy file holds)."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=False)
    buf.seek(0)
    return buf


# ------------------------------------------------------------ policy_format
class TorchRefusalError(Exception):
    """An exception carrying one of torch's ``weights_only`` refusal texts."""


#: the head torch puts before every ``weights_only`` refusal (torch 2.6+)
_TORCH_HEAD = (
    "Weights only load failed. In PyTorch 2.6, we changed the default value of the `weights_only` "
    "argument in `torch.load` from `False` to `True`.\n"
)
_TORCH_TAIL = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def test_a_refusal_to_build_names_the_type_built() -> None:
    built = "<class 'pathlib.PurePosixPath'>"
    text = (
        f"{_TORCH_HEAD}WeightsUnpickler error: Can only build Tensor, Parameter, OrderedDict or "
        f"types allowlisted via `add_safe_globals`, but got {built}{_TORCH_TAIL}"
    )
    reason = weights_only_refusal(TorchRefusalError(text), "a checkpoint")
    assert reason == f"it builds {built}, which a checkpoint never holds"


def test_the_unpicklers_own_reason_is_given_on_one_line() -> None:
    text = (
        f"{_TORCH_HEAD}Please file an issue: WeightsUnpickler error: \n\nUnsupported operand 103{_TORCH_TAIL}"
    )
    assert weights_only_refusal(TorchRefusalError(text)) == "Unsupported operand 103"
    long_reason = "x" * 250
    text = f"{_TORCH_HEAD}WeightsUnpickler error: {long_reason}{_TORCH_TAIL}"
    assert weights_only_refusal(TorchRefusalError(text)) == long_reason[:200]


def test_an_unknown_wording_gives_its_first_line_that_is_not_the_link() -> None:
    text = "\n   \nCheck the documentation of torch.load\nthe first real line\nanother line\n"
    assert weights_only_refusal(TorchRefusalError(text)) == "the first real line"
    assert weights_only_refusal(TorchRefusalError("y" * 300)) == "y" * 200


def test_an_empty_refusal_says_what_it_can() -> None:
    assert weights_only_refusal(EOFError()) == "empty or cut short"
    assert weights_only_refusal(KeyError()) == "KeyError"
    assert weights_only_refusal(EOFError("\n  \n")) == "empty or cut short"


@pytest.mark.parametrize(
    ("stored", "shape", "says"),
    [
        (np.zeros(3, "<f4"), (5,), "shape (3,), the architecture says (5,)"),
        (np.zeros((2, 3), "<f4"), (None, 4), "shape (2, 3), the architecture says (any, 4)"),
        (np.zeros((2, 3), "<f4"), (2, 3, 1), "shape (2, 3), the architecture says (2, 3, 1)"),
    ],
)
def test_a_wrong_shape_is_named_against_the_architecture(
    stored: np.ndarray, shape: tuple[int | None, ...], says: str
) -> None:
    with pytest.raises(ValueError) as err:
        read_checked_npy(_npy(stored), shape)
    assert str(err.value) == says


def test_members_are_written_readable_by_everyone(tmp_path: Path) -> None:
    path = write_npy_zip(tmp_path / "p.npz", "{}", {"a": np.ones(2)}, zipfile.ZIP_STORED)
    with zipfile.ZipFile(path) as zf:
        assert [(i.external_attr >> 16) & 0o777 for i in zf.infolist()] == [0o644, 0o644]


def _zip(path: Path, members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> Path:
    """A zip archive of ``members``."""
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_read_member_names_the_member_and_what_is_wrong(tmp_path: Path) -> None:
    path = _zip(tmp_path / "a.zip", {"m.json": b"0123456789"})
    with zipfile.ZipFile(path) as zf:
        assert read_member(zf, "m.json", 10) == b"0123456789"
        for name, limit, says in (
            ("other.json", 10, "other.json: missing"),
            ("m.json", 9, "m.json: 10 bytes, more than the 9 expected"),
        ):
            with pytest.raises(ValueError) as err:
                read_member(zf, name, limit)
            assert str(err.value) == says
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(path.read_bytes().replace(b"0123456789", b"0123456780"))
    with zipfile.ZipFile(damaged) as zf, pytest.raises(ValueError) as err:
        read_member(zf, "m.json", 10)
    assert str(err.value).startswith("m.json: damaged (") and "CRC" in str(err.value)
    with (
        zipfile.ZipFile(_zip(tmp_path / "b.zip", {"policy.json": b"\xff"})) as zf,
        pytest.raises(ValueError) as err,
    ):
        read_json_member(zf)
    assert str(err.value).startswith("policy.json: not JSON (")


def test_a_damaged_array_member_is_named(tmp_path: Path) -> None:
    good = write_npy_zip(tmp_path / "p.npz", "{}", {"w": np.arange(64)}, zipfile.ZIP_STORED)
    raw = good.read_bytes()
    at = raw.index(np.arange(64, dtype="<f4").tobytes())
    damaged = tmp_path / "d.npz"
    damaged.write_bytes(raw[:at] + b"\0" * 8 + raw[at + 8 :])
    with zipfile.ZipFile(damaged) as zf, pytest.raises(ValueError) as err:
        read_npy_members(zf, {"w": (64,)})
    assert str(err.value).startswith("w.npy: damaged (") and "CRC" in str(err.value)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ([], "must be a JSON object, got list"),
        ({"format": "other", "version": 1}, "format must be 'fmt', got 'other'"),
        ({"version": 1}, "format must be 'fmt', got None"),
        ({"format": "fmt"}, "format version None; this version reads 3"),
        ({"format": "fmt", "version": 2}, "format version 2; this version reads 3"),
        ({"format": "fmt", "version": 3.0}, "format version 3.0; this version reads 3"),
    ],
)
def test_check_format_says_what_the_header_is_not(data: object, says: str) -> None:
    check_format({"format": "fmt", "version": 3}, "fmt", 3)
    with pytest.raises(ValueError) as err:
        check_format(data, "fmt", 3)
    assert str(err.value) == says


def test_read_checked_npy_reads_both_header_versions_and_either_order() -> None:
    array = np.arange(6, dtype="<f4").reshape(2, 3)
    for version in ((1, 0), (2, 0)):
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.asfortranarray(array), version=version)
        buf.seek(0)
        back = read_checked_npy(buf, (2, 3))
        assert np.array_equal(back, array) and back.flags["C_CONTIGUOUS"] and back.flags["WRITEABLE"]
    ints = read_checked_npy(_npy(np.array([1, 2], "u1")), (None,), dtype=np.dtype("u1"))
    assert ints.tolist() == [1, 2]


def test_read_checked_npy_refuses_what_is_not_the_array_asked_for() -> None:
    v3 = _npy(np.zeros(2, "<f4")).getvalue()
    v3 = v3[:6] + b"\x03\x00" + v3[8:]
    cases: list[tuple[io.BytesIO, tuple[int | None, ...], np.dtype[Any], int, str]] = [
        (io.BytesIO(v3), (2,), np.dtype("<f4"), 100, ".npy format version (3, 0) (1.0 or 2.0 expected)"),
        (
            _npy(np.zeros(2, "<f8")),
            (2,),
            np.dtype("<f4"),
            100,
            "dtype float64 (little-endian float32 expected)",
        ),
        (_npy(np.zeros(2, "<i2")), (2,), np.dtype("u1"), 100, "dtype int16 (uint8 expected)"),
        (_npy(np.zeros((3, 4), "<f4")), (None, 4), np.dtype("<f4"), 11, "shape (3, 4): more than 11 values"),
        (_npy(np.array([1.0, np.inf], "<f4")), (2,), np.dtype("<f4"), 100, "non-finite values"),
    ]
    for stream, shape, dtype, most, says in cases:
        with pytest.raises(ValueError) as err:
            read_checked_npy(stream, shape, dtype=dtype, max_elements=most)
        assert str(err.value) == says
    assert read_checked_npy(_npy(np.zeros((3, 4), "<f4")), (None, 4), max_elements=12).shape == (3, 4)
    short = io.BytesIO(_npy(np.zeros(4, "<f4")).getvalue()[:-4])
    long = io.BytesIO(_npy(np.zeros(4, "<f4")).getvalue() + b"\0")
    with pytest.raises(ValueError) as err:
        read_checked_npy(short, (4,))
    assert str(err.value) == "12 data bytes, 16 expected"
    with pytest.raises(ValueError) as err:  # bytes after the data
        read_checked_npy(long, (4,))
    assert str(err.value) == "bytes after the 16 data bytes of shape (4,)"


@pytest.mark.parametrize(("extra", "more"), [(3, ""), (4, " and 1 more")])
def test_unexpected_members_are_listed_three_at_most(tmp_path: Path, extra: int, more: str) -> None:
    names = [f"x{i}.npy" for i in range(extra)]
    path = _zip(tmp_path / "p.npz", {"policy.json": b"{}", **{name: b"" for name in names}})
    with zipfile.ZipFile(path) as zf, pytest.raises(ValueError) as err:
        read_npy_members(zf, {})
    assert str(err.value) == f"unexpected members {names[:3]}{more} (not parameters of policy.json)"


def test_a_member_that_is_not_its_array_is_named_with_the_reason(tmp_path: Path) -> None:
    path = write_npy_zip(tmp_path / "p.npz", "{}", {"w": np.zeros(3)}, zipfile.ZIP_STORED)
    with zipfile.ZipFile(path) as zf, pytest.raises(ValueError) as err:
        read_npy_members(zf, {"w": (4,)})
    assert str(err.value) == "w.npy: shape (3,), the architecture says (4,)"


def test_nothing_past_the_declared_array_is_read() -> None:
    """The header bounds what is read: one byte past the data tells a longer member, and the
    rest (a member padded to gigabytes) is never read into memory."""
    npy = _npy(np.zeros(4, "<f4")).getvalue()
    stream = io.BytesIO(npy + b"\0" * (1 << 20))
    with pytest.raises(ValueError):
        read_checked_npy(stream, (4,))
    assert stream.tell() == len(npy) + 1
    with pytest.raises(ValueError) as err:
        read_checked_npy(_npy(np.zeros(2, "u1")), (2,), dtype=np.dtype("<f2"))
    assert str(err.value) == "dtype uint8 (little-endian float16 expected)"


def test_bytes_after_the_data_are_named_as_such() -> None:
    """A member with bytes after its array is refused saying so (it was worded '16 data bytes,
    16 expected', sizes that agree)."""
    with pytest.raises(ValueError, match=r"^bytes after the 16 data bytes of shape \(4,\)$"):
        read_checked_npy(io.BytesIO(_npy(np.zeros(4, "<f4")).getvalue() + b"\0"), (4,))


# ------------------------------------------------------------ registry
def test_import_class_returns_the_agent_class_a_path_names() -> None:
    from agents.mexican_train.greedy import GreedyAgent

    assert import_class("agents.mexican_train.greedy:GreedyAgent") is GreedyAgent


@pytest.mark.parametrize(
    "path",
    [
        "pathlib:Path",  # a class, not an agent
        "agents.mexican_train.greedy:NoSuchAgent",
        "agents.mexican_train.greedy:GreedyAgent:extra",  # the class part is everything after the first ':'
    ],
)
def test_import_class_refuses_a_path_that_names_no_agent(path: str) -> None:
    with pytest.raises(ValueError) as err:
        import_class(path)
    assert str(err.value) == f"{path!r} does not name an agents.base.BaseAgent subclass or a factory function"


def test_import_class_refuses_a_path_without_a_class() -> None:
    with pytest.raises(ValueError) as err:
        import_class("agents.mexican_train.greedy")
    assert "'agents.mexican_train.greedy'" in str(err.value) and "package.module:ClassName" in str(err.value)


def test_a_missing_module_is_named_but_a_missing_dependency_is_raised_as_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError) as err:
        import_class("agents.no_such_module:Agent")
    assert "no module named 'agents.no_such_module'" in str(err.value)
    (tmp_path / "plugin_needing_more.py").write_text("import no_such_dependency_of_the_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as missing:
        import_class("plugin_needing_more:Agent")
    assert missing.value.name == "no_such_dependency_of_the_plugin"


def test_a_parameter_value_keeps_its_own_equals_signs() -> None:
    assert parse_param("path=a=b") == ("path", "a=b")
    assert parse_spec("mc[note=x=1,sims=8]") == ("mc", {"note": "x=1", "sims": 8})


@pytest.mark.parametrize("item", ["=5", "sims", " = "])
def test_a_parameter_without_a_key_is_refused(item: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_param(item)
    assert str(err.value) == f"an agent parameter must be key=value, got {item!r}"


class _PluginAgent(BaseAgent[Any]):
    """A plugin agent, registered at run time."""

    name = "plugin_for_the_registry_test"

    def act(self, decision: Any) -> int:
        """Never asked: the registry only builds it."""
        raise NotImplementedError


@pytest.mark.parametrize("game", ["mexican_train", "block"])
def test_register_adds_the_class_to_its_games_table_only(game: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for g in GAMES:
        monkeypatch.setitem(REGISTRIES, g, dict(REGISTRIES[g]))
    assert register(_PluginAgent, game=game) is _PluginAgent
    assert agent_class(_PluginAgent.name, game) is _PluginAgent
    assert _PluginAgent.name in agent_names(game)
    other = next(g for g in GAMES if g != game)
    assert _PluginAgent.name not in agent_names(other)


def test_a_malformed_spec_is_refused_in_words() -> None:
    for text in ("mc[sims=1", "two words", "mc]", ""):
        with pytest.raises(ValueError) as err:
            parse_spec(text)
        assert str(err.value) == f"agent spec must look like 'name' or 'name[key=value,...]', got {text!r}"


def test_agent_class_takes_a_spec_and_imports_a_table_entry_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.mexican_train.greedy import GreedyAgent
    from agents.mexican_train.mc import MCAgent

    assert agent_class("mc[sims=8]") is MCAgent and agent_class("greedy") is GreedyAgent
    table = {**REGISTRIES["mexican_train"], "lazy": "agents.mexican_train.greedy:GreedyAgent"}
    monkeypatch.setitem(REGISTRIES, "mexican_train", table)
    assert agent_class("lazy[x=1]") is GreedyAgent
    assert table["lazy"] is GreedyAgent  # imported on first use, then kept


def test_make_agent_seeds_the_agent_and_merges_the_parameters() -> None:
    agent = make_agent("random", seed=5)
    assert agent.rng.integers(1 << 30) == np.random.default_rng(5).integers(1 << 30)
    mc = make_agent("mc[sims=8,z=2]", seed=1, sims=16)
    assert mc.params()["rollouts"] == 16 and mc.params()["z"] == 2.0
    assert make_agent("mc[sims=8]").params()["rollouts"] == 8
    assert type(make_agent("classic", game="block")).__module__ == "agents.block.classic"


if TYPE_CHECKING:
    from agents.mexican_train.league import Snapshot  # a name the agent below cannot resolve at run time


class _PickyAgent(BaseAgent[Any]):
    """An agent whose constructor takes extra keywords and annotates with names of three kinds."""

    name = "picky"

    def __init__(
        self,
        seed: int | None = None,
        league: Snapshot | None = None,
        sims: int = 1,
        path: Path | None = None,
        sizes: list = [],  # noqa: B006 (never mutated; a type the checks leave to the constructor)
        **extra: Any,
    ) -> None:
        super().__init__(seed)

    def act(self, decision: Any) -> int:
        """Never asked: only its parameters are checked."""
        raise NotImplementedError


class _PlainAgent(BaseAgent[Any]):
    """An agent with no parameter but its seed."""

    name = "plain"

    def act(self, decision: Any) -> int:
        """Never asked: only its parameters are checked."""
        raise NotImplementedError


def test_check_params_checks_every_declared_parameter() -> None:
    check_params(_PickyAgent, {"anything": object(), "league": "x", "sizes": [1], "path": "p", "sims": 3})
    with pytest.raises(ValueError) as err:
        check_params(
            _PickyAgent, {"anything": 1, "sims": "abc"}
        )  # an extra keyword first, then a checked one
    assert str(err.value) == "picky: sims must be an int, got 'abc'"
    with pytest.raises(ValueError) as err:
        check_params(_PickyAgent, {"path": 3})  # Path resolves in the agent's module only
    assert str(err.value) == "picky: path must be a string or None, got 3"
    with pytest.raises(ValueError) as err:
        check_params(_PlainAgent, {"sims": 1})
    assert str(err.value) == "plain has no parameter 'sims'; its parameters: none"
    with pytest.raises(ValueError) as err:
        check_params(agent_class("mc"), {"bogus": 1})
    assert "mc has no parameter 'bogus'; its parameters: rollouts, ms, policy, " in str(err.value)


def test_an_unknown_game_is_named() -> None:
    with pytest.raises(ValueError) as err:
        agent_names("chess")
    assert str(err.value) == f"game must be one of {GAMES}, got 'chess'"


def test_split_specs_keeps_the_commas_inside_brackets() -> None:
    assert split_specs("mc[sims=8,z=2], greedy,,ismcts[c=[1,2],d=3]") == [
        "mc[sims=8,z=2]",
        "greedy",
        "ismcts[c=[1,2],d=3]",
    ]


# ------------------------------------------------------------ pickles
def test_a_pickled_torch_storage_is_read_weights_only_whatever_the_environment_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``torch.storage._load_from_bytes`` in a checkpoint's state is read by torch's
    ``weights_only`` loader, asked for explicitly: torch < 2.6 (which the project supports)
    and ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` default to the full unpickler."""
    torch = pytest.importorskip("torch")
    marker = tmp_path / "ran"
    payload = io.BytesIO()
    torch.save(_Planted(f"touch {marker}"), payload)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(pickle.UnpicklingError):
        pickles.loads(_calls("torch.storage", "_load_from_bytes", payload.getvalue()))
    assert not marker.exists()


def _global(module: str, name: str) -> bytes:
    """A protocol-2 pickle of the global ``module.name`` (how a pickle names a class)."""
    return b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"."


def test_old_and_python_2_names_resolve_to_what_they_became() -> None:
    from agents.mexican_train.base import Agent
    from mtrain_env.mexican_train.core.public import PublicView

    assert pickles.loads(_global("agents.base", "Agent")) is Agent  # agents.base kept the generic part
    assert pickles.loads(_global("agents.base", "BaseAgent")) is BaseAgent
    assert pickles.loads(_global("agents.base", "SeatDecision")) is SeatDecision
    assert pickles.loads(_global("mtrain_env.core.public", "PublicState")) is PublicView
    assert pickles.loads(_calls("__builtin__", "xrange", 3)) == range(3)  # Python 2's name of range


def test_a_name_a_module_does_not_have_is_refused_as_such() -> None:
    with pytest.raises(pickle.UnpicklingError) as err:
        pickles.loads(_global("agents.registry", "NoSuchClass"))
    assert str(err.value) == "the state names agents.registry.NoSuchClass, which a checkpoint never holds"


class _Planted:
    """An object whose unpickling runs a shell command (what a planted file holds)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (self.command,))


# ------------------------------------------------------------ checks
def _config_error(call: Callable[[], object], field: str, *words: str) -> ConfigError:
    """``call()`` raises :class:`ConfigError` for ``field``, its message holding ``words``."""
    with pytest.raises(ConfigError) as err:
        call()
    assert err.value.field == field and str(err.value) == f"{field}: {err.value.message}"
    for word in words:
        assert word in err.value.message, err.value.message
    return err.value


def test_is_int_and_is_real_take_numpy_numbers_but_no_bools() -> None:
    assert is_int(3) and is_int(np.int16(3)) and not is_int(True) and not is_int(np.bool_(True))
    assert not is_int(3.0) and not is_int("3")
    assert is_real(np.float32(0.5)) and is_real(2) and not is_real(False) and not is_real(np.bool_(False))


def test_check_int_bounds_are_inclusive() -> None:
    for ok in (2, 5, np.int64(3)):
        check_int("n", ok, 2, 5)
    check_int("n", 10**9, 2)  # no upper bound
    for bad in (1, 6, True, 2.0):
        _config_error(partial(check_int, "n", bad, 2, 5), "n", "must be an int in 2..5", f"got {bad!r}")
    _config_error(lambda: check_int("n", 1, 2), "n", "must be an int >= 2, got 1")
    _config_error(lambda: check_int("n", 9, 2, 5, note="a seat"), "n", "an int in 2..5 (a seat), got 9")


def test_check_real_bounds_open_and_closed() -> None:
    for ok in (0.0, 1.0, 0.5, np.float32(0.25), 1):
        check_real("p", ok, 0.0, 1.0)
    check_real("p", 1e9, 0.0)
    for bad in (-0.1, 1.5, float("nan"), float("inf"), True, "0.5"):
        _config_error(partial(check_real, "p", bad, 0.0, 1.0), "p", "a finite number in [0, 1]")
    _config_error(lambda: check_real("p", 0.0, 0.0, low_open=True), "p", "a finite number > 0, got 0.0")
    check_real("p", 1.0, 0.0, 1.0, low_open=True)
    _config_error(lambda: check_real("p", 0.0, 0.0, 1.0, low_open=True), "p", "in (0, 1], got 0.0")
    _config_error(lambda: check_real("p", -1, 0.0), "p", ">= 0, got -1")
    _config_error(lambda: check_real("p", 2.0, 0.0, 1.0, note="a share"), "p", "in [0, 1] (a share), got 2.0")


def test_check_bool_choice_and_path() -> None:
    check_bool("b", False)
    _config_error(lambda: check_bool("b", 1), "b", "must be a bool, got 1")
    check_choice("c", "x", ("x", "y"))
    _config_error(lambda: check_choice("c", "z", ("x", "y")), "c", "must be one of x, y; got 'z'")
    check_path("out", Path("run"))
    check_path("out", "run")
    for bad in ("", 3, None):
        _config_error(partial(check_path, "out", bad), "out", f"must be a directory path, got {bad!r}")


def test_check_seat_takes_a_mode_or_a_seat_of_the_table() -> None:
    for ok in ("random", "rotate", 0, 3, np.int8(2)):
        check_seat("seat", ok, 4, ("random", "rotate"))
    for bad in (4, -1, True, "first", 1.0):
        _config_error(
            partial(check_seat, "seat", bad, 4, ("random", "rotate")),
            "seat",
            f"must be random or rotate or a seat index in 0..3 (4 players); got {bad!r}",
        )


def test_check_sizes_needs_positive_ints() -> None:
    check_sizes("net_arch", [1, 64])
    check_sizes("net_arch", (8,))
    for bad in ([], [0], [8, True], "64", [8.0]):
        _config_error(partial(check_sizes, "net_arch", bad), "net_arch", f"got {bad!r}")


GAME = GameConfig.make(num_players=2, max_pips=6)


def test_check_agent_names_what_cannot_be_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check_agent("opponent", "greedy", GAME)
    check_agent("opponent", "mc[sims=abc]", GAME, {"sims": 8})  # the given parameters win over the spec's
    for bad in ("", None, 3):
        _config_error(
            partial(check_agent, "opponent", bad, GAME), "opponent", f"needs agent names, got {bad!r}"
        )
    _config_error(lambda: check_agent("opponent", "nosuch", GAME), "opponent", "unknown agent 'nosuch'")
    _config_error(lambda: check_agent("opponent", "mc[a=1,a=2]", GAME), "opponent", "gives a twice")
    (tmp_path / "plugin_needing_more.py").write_text("import no_such_dependency_of_the_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    _config_error(
        lambda: check_agent("opponent", "plugin_needing_more:Agent", GAME),
        "opponent",
        "no_such_dependency_of_the_plugin",
    )
    error = _config_error(
        lambda: check_agent("opponent", "mc[sims=abc]", GAME, params_field="opponent_params"),
        "opponent_params",
        "agent 'mc[sims=abc]' does not take the parameters {'sims': 'abc'}: mc: sims must be an int",
    )
    assert error.field == "opponent_params"
    _config_error(
        lambda: check_agent("opponent", "greedy", GAME, {"bogus": 1}),
        "opponent",
        "greedy has no parameter 'bogus'",
    )
    missing = tmp_path / "none.npz"
    _config_error(
        lambda: check_agent("opponent", f"ppo[path={missing}]", GAME),
        "opponent",
        f"ppo[path={missing}]: no policy file at {missing}",
    )


def test_check_weights_needs_positive_finite_weights() -> None:
    check_weights("heuristics", {"greedy": 1, "random": 0.5}, GAME)
    _config_error(lambda: check_weights("heuristics", ["greedy"], GAME), "heuristics", "must map agent names")
    _config_error(lambda: check_weights("heuristics", {"nosuch": 1.0}, GAME), "heuristics", "unknown agent")
    for bad in (0, -1.0, float("nan"), float("inf"), True, "1"):
        _config_error(
            partial(check_weights, "heuristics", {"greedy": bad}, GAME),
            "heuristics",
            f"the weight of 'greedy' must be a number > 0, got {bad!r}",
        )


def test_check_agent_list_refuses_non_lists_unknown_and_repeated_names() -> None:
    check_agent_list("eval_opponents", ["greedy", "random"], GAME)
    check_agent_list("eval_opponents", ("greedy",), GAME)
    _config_error(
        lambda: check_agent_list("eval_opponents", "greedy", GAME), "eval_opponents", "must be a list"
    )
    _config_error(
        lambda: check_agent_list("eval_opponents", ["greedy", "nosuch"], GAME), "eval_opponents", "nosuch"
    )
    _config_error(
        lambda: check_agent_list("eval_opponents", ("random", "greedy", "random", "greedy"), GAME),
        "eval_opponents",
        "names ['greedy', 'random'] more than once",
    )


# ------------------------------------------------------------ run_dir
def _refused_file(call: Callable[[], object], file: Path, *words: str) -> CheckpointError:
    """``call()`` raises :class:`CheckpointError` naming ``file``, its message holding ``words``."""
    with pytest.raises(CheckpointError) as err:
        call()
    assert err.value.file == str(file) and str(err.value) == f"{file}: {err.value.message}"
    assert "\n" not in str(err.value)
    for word in words:
        assert word in err.value.message, err.value.message
    return err.value


def _pointer(out: Path, data: object, files: tuple[str, ...] = ("model.zip", "state.pkl")) -> Path:
    """``out/checkpoints/latest.json`` holding ``data`` and a checkpoint ``step_<N>`` with ``files``."""
    root = out / "checkpoints"
    (root / "step_000000000256").mkdir(parents=True, exist_ok=True)
    for file in files:
        (root / "step_000000000256" / file).write_bytes(b"x")
    (root / "latest.json").write_text(json.dumps(data))
    return root / "latest.json"


def test_read_latest_returns_the_checkpoint_it_names(tmp_path: Path) -> None:
    assert read_latest(tmp_path) is None and latest_checkpoint(tmp_path) is None
    _pointer(tmp_path, {"dir": "step_000000000256", "step": 256})
    directory = tmp_path / "checkpoints" / "step_000000000256"
    assert read_latest(tmp_path) == (directory, 256)
    assert latest_checkpoint(tmp_path) == directory


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ([1], 'must be {"dir": "step_<N>", "step": N}, got [1]'),
        ({"dir": "step_000000000256"}, 'must be {"dir": "step_<N>", "step": N}'),
        ({"dir": "step_000000000256", "step": 256, "x": 1}, 'must be {"dir": "step_<N>", "step": N}'),
        (
            {"dir": "../step_000000000256", "step": 256},
            "dir must name a checkpoint directory inside checkpoints/",
        ),
        ({"dir": "step_256", "step": 256}, "(step_<12 digits>), got 'step_256'"),
        ({"dir": 256, "step": 256}, "got 256"),
        ({"dir": "step_000000000256", "step": 255}, "step 255 is not the step of step_000000000256"),
        ({"dir": "step_000000000001", "step": True}, "step True is not the step of step_000000000001"),
        ({"dir": "step_000000000256", "step": "256"}, "step '256' is not the step of"),
    ],
)
def test_read_latest_refuses_a_pointer_it_cannot_follow(tmp_path: Path, data: object, says: str) -> None:
    pointer = _pointer(tmp_path, data)
    _refused_file(lambda: read_latest(tmp_path), pointer, says)


def test_read_latest_refuses_unreadable_json_a_link_out_and_a_missing_file(tmp_path: Path) -> None:
    pointer = _pointer(tmp_path, {})
    pointer.write_text("{not json")
    _refused_file(lambda: read_latest(tmp_path), pointer, "not readable JSON")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "checkpoints" / "step_000000000512").symlink_to(elsewhere)
    pointer.write_text(json.dumps({"dir": "step_000000000512", "step": 512}))
    _refused_file(lambda: read_latest(tmp_path), pointer, "step_000000000512 leads outside")
    for file in ("model.zip", "state.pkl"):
        run = tmp_path / file
        _pointer(run, {"dir": "step_000000000256", "step": 256}, files=("model.zip", "state.pkl"))
        (run / "checkpoints" / "step_000000000256" / file).unlink()
        missing = run / "checkpoints" / "step_000000000256" / file
        _refused_file(partial(read_latest, run), missing, "missing (the checkpoint latest.json points to)")


def test_read_latest_refuses_a_checkpoint_directory_that_is_a_link(tmp_path: Path) -> None:
    pointer = _pointer(tmp_path, {"dir": "step_000000000512", "step": 512})
    (tmp_path / "checkpoints" / "step_000000000512").symlink_to(
        tmp_path / "checkpoints" / "step_000000000256"
    )
    _refused_file(lambda: read_latest(tmp_path), pointer, "step_000000000512 leads outside")


def test_read_latest_echoes_a_long_pointer_cut_short(tmp_path: Path) -> None:
    data = list(range(100))
    pointer = _pointer(tmp_path, data)
    error = _refused_file(lambda: read_latest(tmp_path), pointer)
    assert error.message.endswith(f"got {str(data)[:80]}")


def test_read_config_reads_back_what_a_run_wrote(tmp_path: Path) -> None:
    config = TrainConfig(steps=512, n_envs=2, seed=7, out="elsewhere")
    (tmp_path / "config.json").write_text(json.dumps(run_config_json(config)))
    back = read_config(tmp_path)
    assert back.out == str(tmp_path) and (back.steps, back.n_envs, back.seed) == (512, 2, 7)
    assert run_config_json(back) == run_config_json(config)
    assert "out" not in run_config_json(config)
    assert run_files(tmp_path) == ["config.json"]
    (tmp_path / "checkpoints").mkdir()
    assert run_files(tmp_path) == ["config.json", "checkpoints"]


def test_read_config_names_what_is_wrong_with_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    missing = _refused_file(lambda: read_config(tmp_path), path)
    assert missing.message == "cannot read it (No such file or directory)"
    path.write_text(json.dumps({"steps": 512, "seed": 1, "n_envs": 2}))  # the three keys are enough
    assert (read_config(tmp_path).steps, read_config(tmp_path).n_envs) == (512, 2)
    path.write_text("[1, 2]")
    not_config = _refused_file(lambda: read_config(tmp_path), path)
    assert not_config.message == "does not hold a training configuration (steps, seed, n_envs, ...)"
    good = run_config_json(TrainConfig(steps=512, n_envs=2))
    cases: dict[bytes, str] = {
        b"\xff{}": "not JSON (not UTF-8 text: invalid start byte at byte 0)",
        b"{nope": "not JSON (",
        b"[1, 2]": "does not hold a training configuration (steps, seed, n_envs, ...)",
        json.dumps({"steps": 1, "seed": 1}).encode(): "does not hold a training configuration",
        json.dumps({**good, "game": {"num_players": 99}}).encode(): "game.num_players: R3",
        json.dumps({**good, "game": "abc"}).encode(): "does not hold a training configuration (dictionary",
    }
    for text, says in cases.items():
        path.write_bytes(text)
        _refused_file(lambda: read_config(tmp_path), path, says)


def test_is_rllib_run_reads_the_backend(tmp_path: Path) -> None:
    assert not is_rllib_run(tmp_path)
    path = tmp_path / "config.json"
    for text, rllib in (('{"backend": "rllib"}', True), ('{"backend": "sb3"}', False), ('["rllib"]', False)):
        path.write_text(text)
        assert is_rllib_run(tmp_path) is rllib
    path.write_text("{oops")
    assert not is_rllib_run(tmp_path)


def test_strict_json_writes_what_strict_readers_take() -> None:
    data = {
        1: (np.float32(0.5), float("nan"), np.float64("inf")),
        "n": [np.int64(3), np.bool_(True), True, np.array([[1, 2]])],
        "path": Path("a") / "b",
        "none": None,
    }
    text = strict_json(data, sort_keys=True)
    assert json.loads(text) == {
        "1": [0.5, None, None],
        "n": [3, True, True, [[1, 2]]],
        "path": str(Path("a") / "b"),
        "none": None,
    }
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(strict_json(np.bool_(False))) is False and json.loads(strict_json(True)) is True
    assert strict_json({"a": [1]}, indent=2) == '{\n  "a": [\n    1\n  ]\n}'  # the keywords reach json.dumps


def test_a_checkpoint_error_is_one_line() -> None:
    err = CheckpointError(Path("run") / "x.json", "two\n  lines")
    assert (err.file, err.message, str(err)) == (
        str(Path("run") / "x.json"),
        "two lines",
        f"{Path('run') / 'x.json'}: two lines",
    )


# ------------------------------------------------------------ checkpoints
def test_sha256_of_reads_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "big"
    data = bytes(range(256)) * 5000  # more than one block of 1 MiB
    path.write_bytes(data)
    assert sha256_of(path) == hashlib.sha256(data).hexdigest()


def _checkpoint_json(directory: Path, data: object) -> Path:
    """``directory/checkpoint.json`` holding ``data`` and the three files it may record."""
    directory.mkdir(parents=True, exist_ok=True)
    for file in ("model.zip", "state.pkl", "league.json"):
        (directory / file).write_bytes(file.encode())
    (directory / "checkpoint.json").write_text(json.dumps(data))
    return directory / "checkpoint.json"


def test_the_recorded_hashes_must_be_those_of_the_files(tmp_path: Path) -> None:
    assert _recorded_hashes(tmp_path, 256) is None  # format 1: no checkpoint.json
    meta = _checkpoint_json(tmp_path, {})
    hashes = {f: sha256_of(tmp_path / f) for f in ("model.zip", "state.pkl", "league.json")}
    meta.write_text(json.dumps({"format": 2, "step": 256, "sha256": {**hashes, "other": "x"}}))
    assert _recorded_hashes(tmp_path, 256) == hashes
    _check_hashes(tmp_path, hashes)
    (tmp_path / "state.pkl").write_bytes(b"replaced")
    _refused_file(
        lambda: _check_hashes(tmp_path, hashes),
        tmp_path / "state.pkl",
        "damaged or replaced: its sha256 is not the one checkpoint.json recorded",
    )
    (tmp_path / "league.json").unlink()
    gone = _refused_file(
        lambda: _check_hashes(tmp_path, {**hashes, "state.pkl": sha256_of(tmp_path / "state.pkl")}),
        tmp_path / "league.json",
    )
    assert gone.message == "missing"


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"format": 2, "step": 256},
        {"format": 2, "step": 255, "sha256": {"model.zip": "a", "state.pkl": "b", "league.json": "c"}},
        {"format": 2, "step": 256, "sha256": {"model.zip": "a", "state.pkl": "b"}},
        {"format": 2, "step": 256, "sha256": {"model.zip": "a", "state.pkl": "b", "league.json": 3}},
        {"format": 2, "step": 256, "sha256": ["a", "b", "c"]},
    ],
)
def test_a_checkpoint_json_that_records_no_hashes_of_this_step_is_refused(
    tmp_path: Path, data: object
) -> None:
    meta = _checkpoint_json(tmp_path, data)
    _refused_file(
        lambda: _recorded_hashes(tmp_path, 256), meta, 'must be {"format": 2, "step": 256, "sha256"'
    )


def test_an_unreadable_checkpoint_json_is_refused(tmp_path: Path) -> None:
    meta = _checkpoint_json(tmp_path, {})
    meta.write_text("{")
    _refused_file(lambda: _recorded_hashes(tmp_path, 256), meta, "not readable JSON")


# ------------------------------------------------------------ checks: the run's table
def _policy_file(path: Path, net: str = "mlp", game: GameConfig = GAME) -> Path:
    """A small self-play policy file (zero weights) for ``game``."""
    spec = NetSpec.make(net, game, hidden=4, pair_hidden=3)
    return write_selfplay_file(
        spec, {k: np.zeros(s, np.float32) for k, s in parameter_shapes(spec).items()}, path
    )


def _with_header(src: Path, dst: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the policy file ``src`` at ``dst`` whose ``policy.json`` went through ``edit``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "policy.json":
                header = json.loads(data)
                edit(header)
                data = json.dumps(header).encode()
            zout.writestr(item, data)
    return dst


def test_check_agent_checks_the_table_the_run_plays(tmp_path: Path) -> None:
    path = _policy_file(tmp_path / "p.npz")
    check_agent("opponent", f"ppo[path={path}]", GAME)
    check_agent_list("eval_opponents", [f"ppo[path={path}]"], GAME)
    check_weights("heuristics", {f"ppo[path={path}]": 1.0}, GAME)
    three = GameConfig.make(num_players=3, max_pips=6)
    for call in (
        lambda: check_agent("opponent", f"ppo[path={path}]", three),
        lambda: check_agent_list("opponent", [f"ppo[path={path}]"], three),
        lambda: check_weights("opponent", {f"ppo[path={path}]": 1.0}, three),
    ):
        _config_error(call, "opponent", f"ppo[path={path}]: policy {path} was trained for another table")


# ------------------------------------------------------------ selfplay_file
@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"net": "cnn"}, "net must be one of tile, graph, mlp, got 'cnn'"),
        ({"hidden": 0}, "hidden must be an int in 1..4096, got 0"),
        ({"hidden": 4097}, "hidden must be an int in 1..4096, got 4097"),
        ({"pair_hidden": True}, "pair_hidden must be an int in 1..4096, got True"),
        ({"pair_hidden": np.int64(4)}, "pair_hidden must be an int"),
        (
            {"game": (("max_pips", 6), ("num_players", 2))},
            "game must give exactly max_pips, num_players, rounds",
        ),
        (
            {"game": (("num_players", 2), ("max_pips", 6), ("rounds", 1))},
            "game must give exactly max_pips, num_players, rounds, got ['num_players', 'max_pips', 'rounds']",
        ),
    ],
)
def test_a_net_spec_refuses_what_no_network_is(change: dict[str, Any], says: str) -> None:
    fields: dict[str, Any] = {"net": "mlp", "game": (("max_pips", 6), ("num_players", 2), ("rounds", 1))}
    fields.update(hidden=4, pair_hidden=3)
    with pytest.raises(ValueError) as err:
        NetSpec(**{**fields, **change})
    assert says in str(err.value)


def test_a_net_spec_takes_the_widths_at_their_bounds_and_its_games_table() -> None:
    game = GameConfig.make(num_players=3, max_pips=9, rounds=4)
    for width in (1, 4096):
        assert NetSpec.make("tile", game, hidden=width, pair_hidden=width).hidden == width
    spec = NetSpec.make("graph", game, hidden=8, pair_hidden=2)
    assert spec.game == (("max_pips", 9), ("num_players", 3), ("rounds", 4))
    assert (spec.config.num_players, spec.config.max_pips, spec.config.rounds) == (3, 9, 4)
    assert spec.to_json() == {
        "format": "mtrain-selfplay-policy",
        "version": 2,
        "net": "graph",
        "game": {"max_pips": 9, "num_players": 3, "rounds": 4},
        "hidden": 8,
        "pair_hidden": 2,
        "observation_version": 1,
    }
    assert NetSpec.from_json({**spec.to_json(), "parameters": {}}) == spec
    assert NetSpec.make("tile", game) == NetSpec("tile", spec.game)  # the default widths are the spec's


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"format": "mtrain-policy"}, "format must be 'mtrain-selfplay-policy', got 'mtrain-policy'"),
        ({"version": 3}, "format version 3; this version reads 1, 2"),
        ({"version": 1.0}, "format version 1.0; this version reads 1, 2"),
        ({"observation_version": 0}, "observation_version must be an int >= 1, got 0"),
        ({"extra": 1}, "keys must be ["),
        ({"game": [6, 2, 1]}, "game must map num_players, max_pips, rounds to ints, got [6, 2, 1]"),
        (
            {"game": {"max_pips": 6, "num_players": True, "rounds": 1}},
            "game must map num_players, max_pips, rounds",
        ),
        (
            {"game": {"max_pips": 6.0, "num_players": 2, "rounds": 1}},
            "game must map num_players, max_pips, rounds",
        ),
    ],
)
def test_a_spec_read_from_json_is_checked(change: dict[str, Any], says: str) -> None:
    spec = NetSpec.make("mlp", GAME, hidden=4, pair_hidden=3)
    with pytest.raises(ValueError) as err:
        NetSpec.from_json({**spec.to_json(), "parameters": {}, **change})
    assert says in str(err.value)
    missing = {k: v for k, v in spec.to_json().items() if k != "hidden"}
    with pytest.raises(ValueError) as err:
        NetSpec.from_json({**missing, "parameters": {}})
    assert "keys must be" in str(err.value) and "'hidden'" in str(err.value)
    with pytest.raises(ValueError) as err:
        NetSpec.from_json([spec.to_json()])
    assert str(err.value) == "must be a JSON object, got list"


def test_a_policy_file_round_trips_and_lists_its_shapes(tmp_path: Path) -> None:
    spec = NetSpec.make("graph", GAME, hidden=4, pair_hidden=3)
    rng = np.random.default_rng(0)
    arrays = {k: rng.normal(size=s).astype(np.float64) for k, s in parameter_shapes(spec).items()}
    path = write_selfplay_file(spec, arrays, tmp_path / "p.npz")
    header = json.loads(zipfile.ZipFile(path).read("policy.json"))
    assert header["parameters"] == {k: list(s) for k, s in parameter_shapes(spec).items()}
    back_spec, back = read_selfplay_file(path)
    assert back_spec == spec and list(back) == list(arrays)
    for name, array in arrays.items():
        assert back[name].dtype == np.float32 and np.array_equal(back[name], array.astype(np.float32))
    assert {i.compress_type for i in zipfile.ZipFile(path).infolist()} == {zipfile.ZIP_DEFLATED}
    assert is_selfplay_policy(path)
    with pytest.raises(ValueError) as err:
        write_selfplay_file(spec, {**arrays, "pip_embed": np.zeros((1, 1))}, tmp_path / "bad.npz")
    assert str(err.value) == "the arrays are not the tensors of a graph network of this spec"
    assert not (tmp_path / "bad.npz").exists()


def test_only_a_self_play_policy_file_is_recognised_as_one(tmp_path: Path) -> None:
    good = _policy_file(tmp_path / "good.npz")
    other_format = _with_header(good, tmp_path / "other.npz", lambda h: h.update(format="mtrain-policy"))
    no_header = tmp_path / "plain.zip"
    with zipfile.ZipFile(no_header, "w") as zf:
        zf.writestr("readme.txt", "hi")
    not_json = tmp_path / "notjson.zip"
    with zipfile.ZipFile(not_json, "w") as zf:
        zf.writestr("policy.json", "{")
    listed = tmp_path / "list.zip"
    with zipfile.ZipFile(listed, "w") as zf:
        zf.writestr("policy.json", '["mtrain-selfplay-policy"]')
    (tmp_path / "text.npz").write_text("hello")
    assert is_selfplay_policy(good)
    for path in (other_format, no_header, not_json, listed, tmp_path / "text.npz", tmp_path / "missing.npz"):
        assert not is_selfplay_policy(path), path


def test_reading_names_the_file_and_what_is_wrong(tmp_path: Path) -> None:
    text = tmp_path / "text.npz"
    text.write_text("hello")
    with pytest.raises(ValueError) as err:
        read_selfplay_file(text)
    assert str(err.value).startswith(f"{text}: not a self-play policy file (")
    good = _policy_file(tmp_path / "good.npz")
    bad = _with_header(good, tmp_path / "bad.npz", lambda h: h["parameters"].__setitem__("trunk.0.bias", [5]))
    with pytest.raises(ValueError) as err:
        read_selfplay_file(bad)
    assert str(err.value) == f"{bad}: parameters: the shapes listed are not those of the network"
    with pytest.raises(FileNotFoundError):
        read_selfplay_file(tmp_path / "missing.npz")


# ------------------------------------------------------------ checkpoints: the state and the model data
def _state(
    n: int = 2, obs: int = 5, snapshots: tuple[str, ...] = (), seated: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A checkpoint state of ``n`` envs that :func:`_check_state` accepts (step 256)."""
    league = League(heuristics={"greedy": 1.0}).state_dict()
    league["snapshots"] = [{"step": 128 * (i + 1), "file": f} for i, f in enumerate(snapshots)]
    specs = {f"player_{i + 1}": OpponentSpec(SNAPSHOT, f) for i, f in enumerate(seated)}
    specs["player_9"] = OpponentSpec("heuristic", "greedy")
    state: dict[str, Any] = {k: None for k in _STATE_KEYS}
    state.update(format=2, step=256, n_envs=n, league=league, last_obs=np.zeros((n, obs), np.float32))
    state["env_states"] = [{"opponent_specs": dict(specs)} for _ in range(n)]
    return state


def test_a_checkpoint_state_must_fit_the_run(tmp_path: Path) -> None:
    league_dir = tmp_path / "league"
    league_dir.mkdir()
    for name in ("snap_000000000128.npz", "snap_000000000256.pt"):
        (league_dir / name).write_bytes(b"x")
    config = TrainConfig(n_envs=2)
    path = tmp_path / "state.pkl"

    def check(state: object) -> None:
        _check_state(path, state, config, 256, 5, league_dir)

    check(_state(snapshots=("snap_000000000128.npz",), seated=("snap_000000000256.pt",)))
    check({**_state(), "format": 1})
    _refused_file(lambda: check([1]), path, "not a checkpoint state (a list)")
    _refused_file(
        lambda: check({**_state(), "format": 3}), path, "state format 3; this version reads 1 and 2"
    )
    _refused_file(  # True == 1 in Python: it was read as format 1
        lambda: check({**_state(), "format": True}), path, "state format True; this version reads 1 and 2"
    )
    incomplete = {k: v for k, v in _state().items() if k not in ("rng", "monitor")}
    _refused_file(lambda: check(incomplete), path, "not a checkpoint state (no monitor, rng)")
    _refused_file(lambda: check({**_state(), "step": 128}), path, "holds step 128, but latest.json says 256")
    _refused_file(
        lambda: check({**_state(), "n_envs": 3}),
        path,
        "holds 2 env states of n_envs=3, but the run's config.json has n_envs=2",
    )
    _refused_file(lambda: check(_state(n=3)), path, "holds 3 env states of n_envs=3")
    one_short = {**_state(), "env_states": _state()["env_states"][:1]}
    _refused_file(lambda: check(one_short), path, "holds 1 env states of n_envs=2")
    _refused_file(lambda: check(_state(obs=6)), path, "observations of shape (2, 6), the model takes (2, 5)")
    _refused_file(
        lambda: check({**_state(), "last_obs": [[0.0] * 5] * 2}), path, "observations of shape None"
    )
    bad_league = {**_state(), "league": {"heuristics": {}}}
    _refused_file(lambda: check(bad_league), path, "league: not a league state (KeyError")
    no_specs = {**_state(), "env_states": [{}, {}]}
    _refused_file(lambda: check(no_specs), path, "env_states: not env states (KeyError: 'opponent_specs')")
    for name in ("../state.pkl", "snap_1.npz", "snap_000000000128.npy"):
        _refused_file(
            partial(check, _state(seated=(name,))),
            path,
            f"league: {name!r} is not a snapshot file name (snap_<N>.npz in league/)",
        )
    for state in (
        _state(seated=("snap_000000000384.npz",)),
        _state(snapshots=("snap_000000000384.npz",), seated=("snap_000000000128.npz",)),
    ):
        unplayable = _refused_file(partial(check, state), league_dir / "snap_000000000384.npz")
        assert unplayable.message == "missing (a snapshot the run's league plays)"


def _model_zip(path: Path, data: object) -> Path:
    """A ``model.zip`` whose ``data`` member is ``data`` as JSON."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", json.dumps(data))
    return path


def test_a_model_whose_data_pickles_an_object_no_checkpoint_holds_is_refused(tmp_path: Path) -> None:
    pickled = {":type:": "x", ":serialized:": "gASV"}
    allowed = {name: pickled for name in sorted(MODEL_OBJECTS)}
    _check_model_data(_model_zip(tmp_path / "ok.zip", {**allowed, "gamma": 0.99, "plain": {"a": 1}}))
    bad = _model_zip(tmp_path / "bad.zip", {**allowed, "zeta": pickled, "alpha": pickled})
    _refused_file(
        lambda: _check_model_data(bad), bad, "its data pickles alpha, zeta, which a checkpoint never holds"
    )
    listed = _model_zip(tmp_path / "list.zip", [pickled])
    not_object = _refused_file(lambda: _check_model_data(listed), listed)
    assert not_object.message == "damaged: its data is not a JSON object"
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("other", "{}")
    _refused_file(lambda: _check_model_data(empty), empty, "damaged: its data is not readable (KeyError")
    text = tmp_path / "text.zip"
    text.write_text("hello")
    _refused_file(lambda: _check_model_data(text), text, "damaged: its data is not readable (BadZipFile")
    with zipfile.ZipFile(tmp_path / "json.zip", "w") as zf:
        zf.writestr("data", b"\xff")
    _refused_file(
        lambda: _check_model_data(tmp_path / "json.zip"),
        tmp_path / "json.zip",
        "its data is not readable (UnicodeDecodeError",
    )


def test_a_format_1_state_is_renamed_to_the_converted_snapshots(tmp_path: Path) -> None:
    """Snapshots already converted (``.npz`` beside the ``.pt``) are not converted again; the
    league and the seated opponents name the ``.npz``; other names are kept."""
    for name in ("snap_000000000128.npz", "snap_000000000256.npz", "snap_000000000384.npz"):
        (tmp_path / name).write_bytes(b"converted")
    state = _state(
        snapshots=("snap_000000000128.pt", "snap_000000000384.npz"),
        seated=("snap_000000000256.pt", "snap_000000000384.npz"),
    )
    state["format"] = 1
    for env_state in state["env_states"]:
        env_state["league"] = state["league"]
    new = upgrade_format_1(state, tmp_path)
    assert new["format"] == 2 and state["format"] == 1  # a new state; the old one is left as it was
    files = ["snap_000000000128.npz", "snap_000000000384.npz"]
    assert [s["file"] for s in new["league"]["snapshots"]] == files
    for env_state in new["env_states"]:
        assert [s["file"] for s in env_state["league"]["snapshots"]] == files
        specs = env_state["opponent_specs"]
        assert specs["player_1"] == OpponentSpec(SNAPSHOT, "snap_000000000256.npz")
        assert specs["player_2"] == OpponentSpec(SNAPSHOT, "snap_000000000384.npz")  # already a policy file
        assert specs["player_9"] == OpponentSpec("heuristic", "greedy")
    assert [s["file"] for s in state["league"]["snapshots"]] == [
        "snap_000000000128.pt",
        "snap_000000000384.npz",
    ]
    assert {p.read_bytes() for p in tmp_path.iterdir()} == {b"converted"}
