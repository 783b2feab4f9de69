"""The shared field checks (training/checks.py): the SB3 and RLlib trainers refuse the same
values, each with a :class:`ConfigError` naming the field; the self-play configuration's
errors name theirs too (no message parsing in its command line).

RLlibConfig.validate once re-implemented the checks by hand and drifted: every value of
``BAD`` was accepted by it (``True`` is a number to ``isinstance(v, (int, float))``).
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from mtrain_env.mexican_train import rewards
from training.checks import ConfigError
from training.rllib.train import RLlibConfig
from training.run_config import TrainConfig
from training.selfplay.config import RunOptions, SelfPlayConfig, config_to_json, read_config_file

#: (field, a value RLlibConfig.validate accepted before the shared checks)
BAD: list[tuple[str, Any]] = [
    ("gamma", True),
    ("learning_rate", True),
    ("seed", -5),
    ("eval_seed", "x"),
    ("heuristics", {"greedy": -1.0}),
    ("net_arch", [True, 64]),
    ("net_arch", [2049]),  # wider than MAX_WIDTH
    ("net_arch", [8] * 9),  # deeper than MAX_LAYERS
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


def test_the_largest_network_the_bounds_allow_fits_a_policy_file() -> None:
    """``MAX_WIDTH`` x ``MAX_LAYERS`` on the largest table with the planner features stays within
    the parameters a policy file may hold: a run's snapshots and checkpoints read back."""
    from agents.mexican_train.features import feature_size
    from agents.policy_net import MAX_PARAMETERS, PolicySpec
    from mtrain_env.mexican_train.core.config import GameConfig
    from mtrain_env.mexican_train.observation import ObservationLayout
    from training.checks import MAX_LAYERS, MAX_WIDTH

    tables = []
    for max_pips in range(6, 19):
        for players in range(2, 20):
            with contextlib.suppress(ValueError):  # too many players for the set (R3)
                tables.append(GameConfig.make(num_players=players, max_pips=max_pips))
    game = max(tables, key=lambda g: (ObservationLayout(g).size, g.num_actions))
    assert (game.num_players, game.max_pips) == (17, 18)
    sizes = (MAX_WIDTH,) * MAX_LAYERS
    spec = PolicySpec(
        observation_size=feature_size("planner", game, ObservationLayout(game).size),
        action_count=game.num_actions,
        pi=sizes,
        vf=sizes,
        features="planner",
    )
    count = sum(math.prod(shape) for shape in spec.parameter_shapes().values())
    assert 80_000_000 < count <= MAX_PARAMETERS
    wider = (2 * MAX_WIDTH,) * MAX_LAYERS
    with pytest.raises(ValueError, match="parameters"):  # twice as wide would not
        PolicySpec(spec.observation_size, spec.action_count, wider, wider, features="planner")


def test_selfplay_bounds_its_rollout_and_names_the_seat_book() -> None:
    """``num_games x steps`` is bounded (F3 of audit s31: each alone in range, the seat book
    of their product was a MemoryError); the product at the bound passes."""
    for make in (
        lambda: SelfPlayConfig(num_games=2048, steps=513),
        lambda: SelfPlayConfig(num_games=65536, steps=65536),
    ):
        with pytest.raises(ConfigError) as err:
            make()
        assert err.value.field == "num_games x steps"
        assert err.value.message.startswith("must be at most 1,048,576 decisions a rollout, got ")
    with pytest.raises(ConfigError) as err:
        SelfPlayConfig(num_games=65536, steps=65536)
    assert err.value.message.endswith("got 65536 x 65536 = 4,294,967,296 (a seat book of 7.3 TiB)")
    from training.checks import MAX_ROLLOUT

    assert SelfPlayConfig(num_games=512, steps=2048).num_games * 2048 == MAX_ROLLOUT == 1 << 20


def test_a_saved_selfplay_rollout_past_the_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "selfplay.json"
    path.write_text(json.dumps({**config_to_json(SelfPlayConfig()), "num_games": 4096, "steps": 4096}))
    says = "num_games x steps must be at most 1,048,576 decisions a rollout, got 4096 x 4096 = 16,777,216"
    with pytest.raises(ValueError, match=rf"selfplay.json: {says} \(a seat book of 29.1 GiB\)$"):
        read_config_file(path)
