"""The shared field checks (training/checks.py): the SB3 and RLlib trainers refuse the same
values, each with a :class:`ConfigError` naming the field; the self-play configuration's
errors name theirs too (no message parsing in its command line).

RLlibConfig.validate once re-implemented the checks by hand and drifted: every value of
``BAD`` was accepted by it (``True`` is a number to ``isinstance(v, (int, float))``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mtrain_env.mexican_train import rewards
from training.checks import ConfigError
from training.rllib.train import RLlibConfig
from training.run_config import TrainConfig
from training.selfplay.config import DMCConfig, RunOptions, SelfPlayConfig, config_to_json, read_config_file

#: (field, a value RLlibConfig.validate accepted before the shared checks)
BAD: list[tuple[str, Any]] = [
    ("gamma", True),
    ("learning_rate", True),
    ("seed", -5),
    ("eval_seed", "x"),
    ("heuristics", {"greedy": -1.0}),
    ("net_arch", [True, 64]),
    ("progress", "yes"),
    ("p_latest", False),
    ("eval_opponents", ["random", "random"]),
]


@pytest.mark.parametrize(("field", "value"), BAD, ids=[f for f, _v in BAD])
def test_rllib_refuses_what_the_sb3_trainer_refuses(field: str, value: Any) -> None:
    with pytest.raises(ConfigError) as rllib:
        RLlibConfig(**{field: value}).validate()
    assert rllib.value.field == field, rllib.value
    with pytest.raises(ConfigError) as sb3:
        TrainConfig(**{field: value}).validate()
    assert sb3.value.field == field, sb3.value


def test_rllib_takes_the_reward_modes_of_the_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The modes are the env's (``REWARD_MODES``), not a copy that a new mode leaves behind."""
    with pytest.raises(ConfigError) as err:
        RLlibConfig(reward="margin").validate()
    assert err.value.field == "reward"
    monkeypatch.setattr(rewards, "REWARD_MODES", (*rewards.REWARD_MODES, "margin"))
    RLlibConfig(reward="margin").validate()


def test_rllib_accepts_its_defaults_and_fills_the_league() -> None:
    config = RLlibConfig(p_heuristic=0.5)
    config.validate()
    assert config.heuristics  # the default heuristics, checked like given ones


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: SelfPlayConfig(num_games=0), "num_games"),
        (lambda: SelfPlayConfig(lr=True), "lr"),
        (lambda: SelfPlayConfig(clip=0.0), "clip"),
        (lambda: SelfPlayConfig(net="cnn"), "net"),
        (lambda: SelfPlayConfig(opponent_seats=1), "opponent_seats"),
        (lambda: DMCConfig(epsilon=2.0), "epsilon"),
        (lambda: RunOptions(eval_deals=0), "eval_deals"),
        (lambda: RunOptions(max_minutes=-1.0), "max_minutes"),
    ],
)
def test_selfplay_errors_name_their_field(make: Any, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        make()
    assert err.value.field == field
    assert not err.value.message.startswith(field)  # the field is named once, in front


def test_a_saved_selfplay_setting_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "selfplay.json"
    path.write_text(json.dumps({**config_to_json(SelfPlayConfig()), "hidden": 4}))
    with pytest.raises(ValueError, match=r"selfplay.json: hidden must be an int in 8..4096, got 4$"):
        read_config_file(path)
