"""Self-play policy files: what a network is (:class:`NetSpec`) and its weights, in numpy only.

A policy file (``.npz``, written by ``mtrain selfplay``, read by the ``ppo`` agent) is the
container of :mod:`agents.policy_format` with its members deflated: ``policy.json``
(``{"format": "mtrain-selfplay-policy", "version": 2, "net": ..., "game": ..., "hidden":
..., "pair_hidden": ..., "observation_version": ..., "parameters": {name: shape}}``) and
one little-endian float32 ``<name>.npy`` per tensor of the network's ``state_dict``.

The networks read the env's flat observation vector and nothing else (the numpy and
torch forward passes slice it by the named views of its layout), so
``observation_version`` is that layout's version
(:mod:`mtrain_env.mexican_train.observation`), and :func:`read_selfplay_file` refuses a
network of another version than the env it is read for, naming both, before any shape
is compared. A file of format version 1 predates the field and is read as observation
version 1, the only layout there was (:func:`agents.policy_format.observation_version_of`):
a stated rule rather than rewritten headers, so the shipped networks
(``agents/policies/*.npz``) and every file users have keep loading byte for byte as they are.

:func:`read_selfplay_file` checks the JSON, compares the listed shapes with those the
spec implies (:func:`parameter_shapes`, the torch networks' ``state_dict`` shapes) and
reads each array after checking its dtype and shape
(:func:`agents.policy_format.read_npy_members`, no unpickler): a file never runs code, and
anything else is one ``ValueError`` naming the file. No torch: the torch networks
(:mod:`agents.mexican_train.tilenet`) and the numpy forward pass
(:mod:`agents.mexican_train.numpy_nets`) both build on these arrays.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.policy_format import (
    HEADER_MEMBER,
    check_format,
    check_observation_version,
    observation_version_of,
    read_json_member,
    read_npy_members,
    write_npy_zip,
)
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.observation import (
    OBSERVATION_VERSION,
    ObservationLayout,
)
from mtrain_env.mexican_train.observation import (
    check_observation_version as known_observation_version,
)
from mtrain_env.tilegame.validate import as_int

__all__ = [
    "GAME_KEYS",
    "GRAPH_ROUNDS",
    "GRAPH_WIDTH",
    "MASKED",
    "NET_KINDS",
    "SELFPLAY_FORMAT",
    "NetSpec",
    "is_selfplay_policy",
    "parameter_shapes",
    "read_selfplay_file",
    "write_selfplay_file",
]

SELFPLAY_FORMAT = "mtrain-selfplay-policy"
#: the format version written, and those read (1: no ``observation_version``, read as 1)
SELFPLAY_VERSION = 2
SELFPLAY_VERSIONS_READ = (1, 2)
#: the header keys of each format version read
_KEYS = {
    1: frozenset({"format", "version", "net", "game", "hidden", "pair_hidden", "parameters"}),
    2: frozenset(
        {"format", "version", "net", "game", "hidden", "pair_hidden", "observation_version", "parameters"}
    ),
}
SPEC_MEMBER = HEADER_MEMBER
NET_KINDS = ("tile", "graph", "mlp")
#: the game keywords that shape the observation and the actions
GAME_KEYS = ("num_players", "max_pips", "rounds")
#: a masked-out logit (finite, so that ``0 * logp`` stays 0 in the entropy)
MASKED = -1e9
#: message-passing rounds over the hand's pip graph of each net kind (``graph`` only)
GRAPH_ROUNDS = {"tile": 0, "graph": 3, "mlp": 0}
#: width of the pip-node embeddings of the graph
GRAPH_WIDTH = 32


@dataclass(frozen=True)
class NetSpec:
    """What a self-play network is: its kind, the game it plays, its widths and the version
    of the observation layout it reads (default the env's default layout, which the
    self-play trainer plays)."""

    net: str
    game: tuple[tuple[str, int], ...]  #: sorted ``GAME_KEYS`` items
    hidden: int = 128
    pair_hidden: int = 64
    observation_version: int = OBSERVATION_VERSION

    def __post_init__(self) -> None:
        if self.net not in NET_KINDS:
            raise ValueError(f"net must be one of {', '.join(NET_KINDS)}, got {self.net!r}")
        for name in ("hidden", "pair_hidden"):
            value = getattr(self, name)
            as_int(name, value, low=1, high=4096, numpy=False, error=ValueError)
        keys = tuple(k for k, _ in self.game)
        if keys != tuple(sorted(GAME_KEYS)):
            raise ValueError(f"game must give exactly {', '.join(sorted(GAME_KEYS))}, got {list(keys)}")
        known_observation_version(self.observation_version)

    @classmethod
    def make(
        cls,
        net: str,
        config: GameConfig,
        hidden: int = 128,
        pair_hidden: int = 64,
        observation_version: int = OBSERVATION_VERSION,
    ) -> NetSpec:
        """The spec of a ``net`` for the game ``config`` reading ``observation_version``."""
        game = {k: int(getattr(config, k)) for k in GAME_KEYS}
        return cls(net, tuple(sorted(game.items())), hidden, pair_hidden, observation_version)

    @property
    def config(self) -> GameConfig:
        """The (default-rules) game config of the observation and action layout."""
        game = dict(self.game)
        return GameConfig.make(
            num_players=game["num_players"], max_pips=game["max_pips"], rounds=game["rounds"]
        )

    @property
    def layout(self) -> ObservationLayout:
        """The observation layout the network reads (its config, its observation version)."""
        return ObservationLayout(self.config, self.observation_version)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": SELFPLAY_FORMAT,
            "version": SELFPLAY_VERSION,
            "net": self.net,
            "game": dict(self.game),
            "hidden": self.hidden,
            "pair_hidden": self.pair_hidden,
            "observation_version": self.observation_version,
        }

    @classmethod
    def from_json(cls, data: Any, env_version: int | None = None) -> NetSpec:
        """Inverse of :meth:`to_json` (plus ``parameters``; format version 1 read as
        observation version 1); ``ValueError`` saying what is wrong. With ``env_version``
        (what the env it is read for writes) a network of another observation version is
        refused first, naming both."""
        check_format(data, SELFPLAY_FORMAT, SELFPLAY_VERSIONS_READ)
        keys = _KEYS[data["version"]]
        if set(data) != keys:
            raise ValueError(f"keys must be {sorted(keys)}, got {sorted(data)}")
        version = observation_version_of(data)
        if env_version is not None:
            check_observation_version(version, env_version)
        game = data["game"]
        if not isinstance(game, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in game.values()
        ):
            raise ValueError(f"game must map {', '.join(GAME_KEYS)} to ints, got {game!r}")
        return cls(data["net"], tuple(sorted(game.items())), data["hidden"], data["pair_hidden"], version)


def parameter_shapes(spec: NetSpec) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor of the ``spec`` network's ``state_dict`` (what a file
    must hold; ``tests/agents/test_numpy_nets.py`` checks them against the torch networks)."""
    cfg = spec.config
    size = spec.layout.size
    h, hp = spec.hidden, spec.pair_hidden
    if spec.net == "mlp":
        return {
            "trunk.0.weight": (h, size),
            "trunk.0.bias": (h,),
            "trunk.2.weight": (h, h),
            "trunk.2.bias": (h,),
            "policy_head.weight": (cfg.num_actions, h),
            "policy_head.bias": (cfg.num_actions,),
            "value_head.weight": (1, h),
            "value_head.bias": (1,),
        }
    t, p, w = cfg.num_tiles, cfg.max_pips + 1, cfg.num_trains
    rounds, gw = GRAPH_ROUNDS[spec.net], GRAPH_WIDTH
    trunk_in = h + 2 * hp + 2 * p + (size - 2 * t) + (gw if rounds else 0)
    shapes: dict[str, tuple[int, ...]] = {
        "pip_embed": (p, hp),
        "tile_embed": (t, hp),
        "double_embed": (hp,),
        "open_embed": (p, hp),
        "hand_pool.weight": (h, hp),
        "table_pool.weight": (h, hp),
        "train_token.weight": (hp, 2 * p + 5 + w),
        "train_token.bias": (hp,),
        "trunk.0.weight": (h, trunk_in),
        "trunk.0.bias": (h,),
        "trunk.2.weight": (h, h),
        "trunk.2.bias": (h,),
        "pair_context.weight": (hp, h),
        "pair_context.bias": (hp,),
        "open_counts.weight": (hp, 4),
        "pair_mlp.1.weight": (hp, hp),
        "pair_mlp.1.bias": (hp,),
        "pair_mlp.3.weight": (1, hp),
        "pair_mlp.3.bias": (1,),
        "special.weight": (2, h),
        "special.bias": (2,),
        "value_head.0.weight": (h, h),
        "value_head.0.bias": (h,),
        "value_head.2.weight": (1, h),
        "value_head.2.bias": (1,),
    }
    if rounds:
        shapes.update({"node_pip": (p, gw), "node_in.weight": (gw, 6), "node_in.bias": (gw,)})
        for r in range(rounds):
            shapes[f"node_self.{r}.weight"] = (gw, gw)
            shapes[f"node_self.{r}.bias"] = (gw,)
            shapes[f"node_nb.{r}.weight"] = (gw, gw)
        shapes["open_node.weight"] = (hp, gw)
    return shapes


# ----------------------------------------------------------------- the file
def write_selfplay_file(spec: NetSpec, arrays: dict[str, np.ndarray], path: str | Path) -> Path:
    """Write the ``spec`` network's ``arrays`` (its ``state_dict`` as numpy) to ``path``,
    atomically; ``ValueError`` if they are not the tensors ``spec`` implies."""
    state = {k: np.ascontiguousarray(v, dtype="<f4") for k, v in arrays.items()}
    shapes = {k: tuple(v.shape) for k, v in state.items()}
    if shapes != parameter_shapes(spec):
        raise ValueError(f"the arrays are not the tensors of a {spec.net} network of this spec")
    header = spec.to_json()
    header["parameters"] = {k: list(v) for k, v in shapes.items()}
    return write_npy_zip(path, json.dumps(header, indent=1, sort_keys=True), state, zipfile.ZIP_DEFLATED)


def is_selfplay_policy(path: str | Path) -> bool:
    """Whether ``path`` is a zip whose ``policy.json`` names the self-play format."""
    try:
        with zipfile.ZipFile(path) as zf:
            data = read_json_member(zf) if SPEC_MEMBER in zf.NameToInfo else None
    except (zipfile.BadZipFile, OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("format") == SELFPLAY_FORMAT


def read_selfplay_file(
    path: str | Path, env_version: int = OBSERVATION_VERSION
) -> tuple[NetSpec, dict[str, np.ndarray]]:
    """The spec and the float32 arrays stored at ``path``, for an env writing observation
    version ``env_version`` (default the default layout's); ``ValueError`` (``<path>: <what
    is wrong>``) for anything that is not such a file or a network of another observation
    version (named before any shape) (``FileNotFoundError`` if missing)."""
    try:
        with zipfile.ZipFile(path) as zf:
            data = read_json_member(zf)
            spec = NetSpec.from_json(data, env_version)
            shapes = parameter_shapes(spec)
            if data["parameters"] != {k: list(v) for k, v in shapes.items()}:
                raise ValueError("parameters: the shapes listed are not those of the network")
            arrays = read_npy_members(zf, shapes)
    except zipfile.BadZipFile as e:
        raise ValueError(f"{path}: not a self-play policy file ({e})") from None
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    return spec, arrays
