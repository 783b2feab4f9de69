"""Checking a run's newest checkpoint before it is resumed (nothing is started or written).

:func:`load_checkpoint`: ``latest.json`` must name a ``step_<N>`` directory inside
``checkpoints/`` whose step it states; ``model.zip`` must be a GuardedMaskablePolicy model
(read without unpickling) whose observation size, action count, ``net_arch``, feature set
and logit bound are the run's config and whose ``num_timesteps`` is that step;
``model.zip``, ``state.pkl`` and ``league.json`` must have the sha256 that
``checkpoint.json`` recorded (so a damaged state is never unpickled); ``state.pkl`` must
hold that step, ``n_envs`` states and observations of the model's size, and a league whose
snapshot files are in ``league/``. Anything else raises
:class:`~training.run_dir.CheckpointError` (``<file>: <what is wrong>``). Checkpoints of
format 1 (league snapshots pickled by SB3's ``policy.save``) are upgraded on resume
(:func:`upgrade_format_1`).

Without ``latest.json`` the newest ``step_<N>`` directory that passes every check (its
sha256s recorded and matching: format 2) is the checkpoint; a run with none that shows
progress (:func:`~training.run_dir.progress_files`) is refused: it is never started over.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.mexican_train import pickles
from agents.mexican_train.league import SNAPSHOT, League, OpponentSpec
from agents.policy_net import PolicyFileError, PolicySpec, read_sb3_archive, upgrade_trusted_policy
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.files import os_error_text
from training.run_config import TrainConfig
from training.run_dir import (
    CHECKPOINT_FILE,
    CHECKPOINTS,
    CONFIG_FILE,
    LATEST,
    LEAGUE_DIR,
    LEAGUE_FILE,
    MODEL_FILE,
    SNAPSHOT_NAME,
    STATE_FILE,
    STATE_FORMAT,
    CheckpointError,
    progress_files,
    read_latest,
    step_directories,
)
from training.single_agent import SingleAgentEnv

__all__ = [
    "MODEL_OBJECTS",
    "Checkpoint",
    "load_checkpoint",
    "run_policy_spec",
    "sha256_of",
    "upgrade_format_1",
]


@dataclass
class Checkpoint:
    """A checkpoint checked by :func:`load_checkpoint`, its state unpickled."""

    dir: Path
    step: int
    state: dict[str, Any]
    #: how it was found when ``latest.json`` did not name it ("" when it did)
    found_by: str = ""


def run_policy_spec(config: TrainConfig) -> PolicySpec:
    """The architecture of the run's policy (what its ``model.zip`` must hold)."""
    env = SingleAgentEnv(env_kwargs=config.env_kwargs(), features=config.features)
    assert env.observation_space.shape is not None
    return PolicySpec(
        observation_size=int(env.observation_space.shape[0]),
        action_count=int(env.raw.config.num_actions),
        pi=tuple(config.net_arch),
        vf=tuple(config.net_arch),
        features=config.features,
        logit_bound=float(config.logit_bound),
    )


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file (read in blocks: checkpoints are large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _readable_sha256(path: Path) -> str:
    """:func:`sha256_of`, or a :class:`CheckpointError` naming the file when it cannot be
    read (permissions, an I/O error): a one-line refusal, not a traceback."""
    try:
        return sha256_of(path)
    except OSError as err:
        raise CheckpointError(path, f"cannot read it ({os_error_text(err)})") from None


def _check_model(path: Path, expected: PolicySpec, step: int, recorded: str | None) -> None:
    """``model.zip`` is an intact model of the run's architecture at ``step`` (read without
    unpickling: :func:`agents.policy_net.read_sb3_archive`). What it holds is checked before
    its ``recorded`` sha256, so that a model of another run is named as such."""
    problem = None
    try:
        spec, steps, _weights = read_sb3_archive(path)
        with zipfile.ZipFile(path) as zf:
            missing = [m for m in ("policy.optimizer.pth", "pytorch_variables.pth") if m not in zf.NameToInfo]
            damaged = zf.testzip()
        if missing or damaged:
            problem = f"member {missing[0]} missing" if missing else f"member {damaged} damaged"
    except PolicyFileError as err:
        problem = err.message
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
        problem = f"damaged ({err})"
    if problem is not None:
        if recorded is not None and recorded != _readable_sha256(path):
            problem = f"damaged or replaced: its sha256 is not the one {CHECKPOINT_FILE} recorded ({problem})"
        raise CheckpointError(path, problem)
    for name, label in (
        ("observation_size", "observation size"),
        ("action_count", "action count"),
        ("pi", "net_arch (actor)"),
        ("vf", "net_arch (critic)"),
        ("features", "features"),
        ("logit_bound", "logit_bound"),
        ("activation", "activation"),
    ):
        have, want = getattr(spec, name), getattr(expected, name)
        if have != want:
            have, want = (list(x) if isinstance(x, tuple) else x for x in (have, want))
            raise CheckpointError(
                path,
                f"{label} {have!r}, but the run's {CONFIG_FILE} gives {want!r} (a model of another run?)",
            )
    if steps != step:
        raise CheckpointError(
            path, f"holds step {steps}, but {LATEST} says {step} (a model of another checkpoint?)"
        )


def _recorded_hashes(directory: Path, step: int) -> dict[str, str] | None:
    """The sha256 per file that the checkpoint's ``checkpoint.json`` recorded (``None`` if
    it has none: format 1)."""
    meta_path = directory / CHECKPOINT_FILE
    if not meta_path.exists():
        return None
    try:
        meta = json_text.read_file(meta_path)
    except (OSError, ValueError) as err:
        raise CheckpointError(meta_path, f"not readable JSON ({err})") from None
    hashes = meta.get("sha256") if isinstance(meta, dict) else None
    files = (MODEL_FILE, STATE_FILE, LEAGUE_FILE)
    if (
        not isinstance(hashes, dict)
        or meta.get("step") != step
        or not all(isinstance(hashes.get(f), str) for f in files)
    ):
        raise CheckpointError(
            meta_path, f'must be {{"format": 2, "step": {step}, "sha256": {{<file>: <hex>}}}}'
        )
    return {f: hashes[f] for f in files}


def _check_hashes(directory: Path, hashes: Mapping[str, str]) -> None:
    """The files of ``directory`` are those its ``checkpoint.json`` recorded (format 2)."""
    for file in (MODEL_FILE, STATE_FILE, LEAGUE_FILE):
        if not (directory / file).is_file():
            raise CheckpointError(directory / file, "missing")
        if hashes.get(file) != _readable_sha256(directory / file):
            raise CheckpointError(
                directory / file, f"damaged or replaced: its sha256 is not the one {CHECKPOINT_FILE} recorded"
            )


#: what unpickling damaged bytes raises
_UNPICKLING_ERRORS = (
    pickle.UnpicklingError,
    EOFError,
    AttributeError,
    ImportError,
    IndexError,
    KeyError,
    TypeError,
    ValueError,
    OverflowError,
)
_STATE_KEYS = (
    "format",
    "step",
    "n_envs",
    "league",
    "next_eval",
    "next_checkpoint",
    "curve",
    "env_states",
    "last_obs",
    "last_episode_starts",
    "monitor",
    "ep_info_buffer",
    "rng",
)


def _snapshot_names(state: Mapping[str, Any]) -> list[str]:
    """Every snapshot file a checkpoint state names: the league's and those seated in the
    episodes in flight."""
    names = [s["file"] for s in state["league"]["snapshots"]]
    for env_state in state["env_states"]:
        names += [s.name for s in env_state["opponent_specs"].values() if s.kind == SNAPSHOT]
    return list(dict.fromkeys(names))


def _check_state(path: Path, state: Any, config: TrainConfig, step: int, obs_size: int, league: Path) -> None:
    if not isinstance(state, dict):
        raise CheckpointError(path, f"not a checkpoint state (a {type(state).__name__})")
    if type(state.get("format")) is not int or state["format"] not in (1, STATE_FORMAT):  # True == 1
        raise CheckpointError(
            path, f"state format {state.get('format')!r}; this version reads 1 and {STATE_FORMAT}"
        )
    missing = [k for k in _STATE_KEYS if k not in state]
    if missing:
        raise CheckpointError(path, f"not a checkpoint state (no {', '.join(missing)})")
    if state["step"] != step:
        raise CheckpointError(path, f"holds step {state['step']!r}, but {LATEST} says {step}")
    n = config.n_envs
    if state["n_envs"] != n or len(state["env_states"]) != n:
        raise CheckpointError(
            path,
            f"holds {len(state['env_states'])} env states of n_envs={state['n_envs']!r}, "
            f"but the run's {CONFIG_FILE} has n_envs={n} (resume needs the same)",
        )
    shape = getattr(state["last_obs"], "shape", None)
    if shape != (n, obs_size):
        raise CheckpointError(path, f"observations of shape {shape}, the model takes ({n}, {obs_size})")
    try:
        League.from_state_dict(state["league"])
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise CheckpointError(path, f"league: not a league state ({type(err).__name__}: {err})") from None
    try:
        names = _snapshot_names(state)
    except (KeyError, TypeError, AttributeError) as err:
        raise CheckpointError(path, f"env_states: not env states ({type(err).__name__}: {err})") from None
    for name in names:
        if not isinstance(name, str) or not SNAPSHOT_NAME.fullmatch(name):
            raise CheckpointError(
                path, f"league: {name!r} is not a snapshot file name (snap_<N>.npz in {LEAGUE_DIR}/)"
            )
        if not (league / name).is_file():
            raise CheckpointError(league / name, "missing (a snapshot the run's league plays)")


#: the entries of ``model.zip``'s data that SB3 pickles (cloudpickle) and the trainer gives
#: SB3's loader instead (``custom_objects``, rebuilt from the run's config): nothing else may be
MODEL_OBJECTS = frozenset(
    {
        "policy_class", "rollout_buffer_class", "observation_space", "action_space", "learning_rate",
        "lr_schedule", "clip_range", "_last_obs", "_last_episode_starts", "ep_info_buffer",
        "ep_success_buffer",
    }
)  # fmt: skip


def _check_model_data(path: Path) -> None:
    """Every entry that ``model.zip``'s data pickled is one of :data:`MODEL_OBJECTS`: SB3
    would unpickle any other with cloudpickle, running whatever code it names."""
    try:
        with zipfile.ZipFile(path) as zf:
            data = json_text.loads(zf.read("data").decode("utf-8"))
    except (OSError, KeyError, zipfile.BadZipFile, zlib.error, ValueError) as err:
        reason = f"{type(err).__name__}: {err}"  # ValueError: bad UTF-8, bad or too deeply nested JSON
        raise CheckpointError(path, f"damaged: its data is not readable ({reason})") from None
    if not isinstance(data, dict):
        raise CheckpointError(path, "damaged: its data is not a JSON object")
    pickled = sorted(k for k, v in data.items() if isinstance(v, dict) and ":serialized:" in v)
    unknown = [k for k in pickled if k not in MODEL_OBJECTS]
    if unknown:
        raise CheckpointError(path, f"its data pickles {', '.join(unknown)}, which a checkpoint never holds")


def load_checkpoint(out: Path, config: TrainConfig) -> Checkpoint | None:
    """The newest checkpoint of the run in ``out`` after every check of the module docstring
    (``None`` if the run has none yet); raises :class:`CheckpointError`. Writes nothing.

    ``state.pkl`` is unpickled: it is trusted as the file this module wrote inside the run
    directory, once its sha256 matches ``checkpoint.json`` (format 2)."""
    found = read_latest(out)
    if found is not None:
        return _checked(Path(out), *found, config, hashed=False)
    pointer = Path(out) / CHECKPOINTS / LATEST
    refused: list[tuple[str, CheckpointError]] = []
    for directory, step in step_directories(out):
        try:
            checkpoint = _checked(Path(out), directory, step, config, hashed=True)
        except CheckpointError as err:
            refused.append((directory.name, err))
            continue
        # relative paths only: the summary stores this, and no file of a run names a directory
        verified = "the newest checkpoint whose sha256s verify"
        checkpoint.found_by = f"{CHECKPOINTS}/{LATEST} was missing: {verified}"
        if refused:
            checkpoint.found_by += f" ({', '.join(name for name, _err in refused)} did not)"
        return checkpoint
    if refused:
        raise CheckpointError(
            pointer, f"missing, and no checkpoint in {CHECKPOINTS}/ verifies (the newest: {refused[0][1]})"
        )
    progress = progress_files(out)
    if progress:
        raise CheckpointError(
            pointer,
            f"missing, but the run went past its first checkpoint ({', '.join(progress)}): it cannot "
            "be continued exactly, and starting over would mix two runs; restore checkpoints/ or use "
            "a new --out",
        )
    return None


def _checked(out: Path, directory: Path, step: int, config: TrainConfig, *, hashed: bool) -> Checkpoint:
    """The checkpoint in ``directory`` at ``step``, every check done (``hashed``: its
    ``checkpoint.json`` is required, as for a directory no ``latest.json`` names)."""
    for file in (MODEL_FILE, STATE_FILE) if hashed else ():
        if not (directory / file).is_file():
            raise CheckpointError(directory / file, "missing")
    spec = run_policy_spec(config)
    hashes = _recorded_hashes(directory, step)  # format 1 wrote no checkpoint.json
    if hashes is None and hashed:
        raise CheckpointError(directory / CHECKPOINT_FILE, "missing (the sha256 of the checkpoint's files)")
    _check_model(directory / MODEL_FILE, spec, step, None if hashes is None else hashes[MODEL_FILE])
    if hashes is not None:
        _check_hashes(directory, hashes)
    _check_model_data(directory / MODEL_FILE)
    path = directory / STATE_FILE
    try:
        with open(path, "rb") as f:
            state = pickles.load(f)
    except OSError as err:
        raise CheckpointError(path, f"cannot read it ({os_error_text(err)})") from None
    except _UNPICKLING_ERRORS as err:
        raise CheckpointError(
            path, f"damaged: not a state this version reads ({type(err).__name__}: {err})"
        ) from None
    _check_state(path, state, config, step, spec.observation_size, out / LEAGUE_DIR)
    if hashes is None and state["format"] != 1:
        raise CheckpointError(directory / CHECKPOINT_FILE, "missing (the sha256 of the checkpoint's files)")
    return Checkpoint(directory, step, state)


def upgrade_format_1(state: dict[str, Any], league: Path) -> dict[str, Any]:
    """A format-1 checkpoint state as format 2: each snapshot it names that SB3's
    ``policy.save`` pickled (``snap_<N>.pt``) is converted once into a policy file beside it
    (``snap_<N>.npz``; it unpickles the run's own file, named by the run's own state), and
    the league and the seated opponents name the new files."""
    renamed: dict[str, str] = {}
    for name in _snapshot_names(state):
        if name.endswith(".pt"):
            renamed[name] = name[: -len(".pt")] + ".npz"
            if not (league / renamed[name]).exists():
                upgrade_trusted_policy(league / name, league / renamed[name])

    def league_state(d: Mapping[str, Any]) -> dict[str, Any]:
        snaps = [{**s, "file": renamed.get(s["file"], s["file"])} for s in d["snapshots"]]
        return {**d, "snapshots": snaps}

    def spec(s: OpponentSpec) -> OpponentSpec:
        return dataclasses.replace(s, name=renamed[s.name]) if s.kind == SNAPSHOT and s.name in renamed else s

    env_states = [
        {
            **e,
            "league": league_state(e["league"]),
            "opponent_specs": {k: spec(v) for k, v in e["opponent_specs"].items()},
        }
        for e in state["env_states"]
    ]
    return {
        **state,
        "format": STATE_FORMAT,
        "league": league_state(state["league"]),
        "env_states": env_states,
    }
