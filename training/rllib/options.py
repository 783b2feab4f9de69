"""``mtrain train --backend rllib``: the command line's options as an :class:`RLlibConfig`.

:mod:`training.cli` parses the command line (one parser for both backends) and hands the
options given, as ``TrainConfig`` field names, to :func:`rllib_config`. The options mean
what they mean for the SB3 path, with these differences: ``--workers`` counts RLlib
EnvRunner actors (default 1) and ``--envs`` envs per EnvRunner (default 1);
``--n-steps`` is the env steps of one training iteration (all seats, default 4000);
``--max-snapshots K`` gives the league K frozen snapshot slots (default 0: pure
shared-policy self-play); ``--p-heuristic`` defaults to 0 (no heuristic seats);
``--snapshot-every 0`` never refreshes the league (its slots keep ``main``'s initial
weights). Options of the SB3 path alone are refused with one line (:data:`SB3_ONLY`).
``--address`` is checked for its form
(:func:`agents.tournament.ray_backend.address_problem`, shared with ``mtrain bench``)
before anything else and for an answer (``reach_problem``) last, before Ray connects.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mtrain_env.tilegame import json_text
from training.rllib.train import CONFIG_FILE, RESUME_OVERRIDES, TRAINER_FILE, RLlibConfig, read_latest
from training.rllib.trainer_file import read_trainer_state
from training.run_dir import CheckpointError

#: TrainConfig field -> RLlibConfig field, where the names differ
RENAMED = {
    "workers": "env_runners",
    "n_envs": "envs_per_runner",
    "n_steps": "train_batch",
    "batch_size": "minibatch_size",
    "n_epochs": "epochs",
    "max_snapshots": "snapshots",
}
#: TrainConfig fields the RLlib backend has no use for
SB3_ONLY = (
    "vec",
    "verbose",
    "seat",
    "lr_schedule",
    "target_kl",
    "shaping",
    "bc_expert",
    "bc_samples",
    "bc_expert_params",
    "bc_epochs",
    "bc_lr",
)


#: RLlibConfig field -> the TrainConfig field of its command-line option
OPTION_FIELD = {v: k for k, v in RENAMED.items()}


def option_field(field: str) -> str:
    """The TrainConfig field (hence the option) of an RLlibConfig field."""
    return OPTION_FIELD.get(field, field)


class OptionClashError(ValueError):
    """An option the RLlib backend refuses: ``field`` (a TrainConfig field) and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _fields(given: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, value in given.items():
        if field in SB3_ONLY:
            raise OptionClashError(field, "is an option of the SB3 trainer, not used by --backend rllib")
        if not field.startswith("game."):
            out[RENAMED.get(field, field)] = value
    return out


def rllib_config(
    given: Mapping[str, Any],
    game: Any,
    *,
    steps: int,
    out: str,
    progress: bool,
    address: str | None,
    resume: bool,
) -> RLlibConfig:
    """The run's :class:`RLlibConfig` (validated); on ``resume`` the saved one with what a
    resume may change, any other option given having to match. Raises :class:`OptionClashError`,
    ``ConfigError`` or ``CheckpointError``; writes nothing."""
    fields = _fields(given)
    if not resume:
        config = RLlibConfig(steps=steps, out=out, progress=progress, address=address, game=game, **fields)
        config.validate()
        return config

    path = Path(out) / CONFIG_FILE
    try:
        data = json_text.read_file(path)
        saved = RLlibConfig.from_json(data, out=out, progress=progress, address=address)
    except (OSError, ValueError, TypeError) as err:
        raise CheckpointError(path, f"not the config of an RLlib run ({err})") from None
    latest = read_latest(Path(out))
    at = 0
    if latest is not None:
        at = read_trainer_state(latest / TRAINER_FILE)["step"]
    if steps < at:
        raise OptionClashError(
            "steps", f"the run in {out} is at step {at}; give --steps >= {at} to extend it"
        )
    clashes = [
        (f, v, getattr(saved, f))
        for f, v in fields.items()
        if f not in RESUME_OVERRIDES and getattr(saved, f) != v
    ]
    if any(k.startswith("game.") for k in given) and game != saved.game:
        clashes.append(("game", game, saved.game))
    if clashes:
        text = "; ".join(f"{f} {v!r} but the run has {h!r}" for f, v, h in clashes)
        raise OptionClashError(
            option_field(clashes[0][0]),
            f"conflicting with the run in {out} ({text}); --resume keeps the run's configuration",
        )
    saved.steps = steps
    for f in ("env_runners", "envs_per_runner", "torch_threads"):
        if f in fields:
            setattr(saved, f, fields[f])
    saved.validate()
    return saved
