"""Scripted deals for the rule tests (pgx / OpenSpiel ``deal_hands`` style).

Everything goes through the public env API (``raw_env``, ``reset(options={"deal": ...})``,
``encode_action``, ``DRAW`` / ``PASS``, ``observe()["action_mask"]``, ``state_dict()``), so
the tests pin the contract users see.

Tiles are written as text, ``"6-3"`` (either order). Moves are written with ABSOLUTE
trains, which reads better beside a picture of the table:

* ``"3-6 @0"``   lay 3-6 on the train of seat 0;
* ``"3-6 @mex"`` lay it on the Mexican train;
* ``"DRAW"`` / ``"PASS"``.

The env's actions are relative to the acting seat (train ``k`` = seat ``(seat + k) % n``,
``n`` = Mexican); :func:`legal` and :func:`act` convert with that documented formula, and
``test_rules_turns.py`` pins the relative encoding itself once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pytest

import mtrain_env

TileText = str | tuple[int, int]


def tile(t: TileText) -> tuple[int, int]:
    """``"6-3"`` or ``(6, 3)`` -> ``(6, 3)`` (order kept)."""
    if isinstance(t, str):
        a, b = t.split("-")
        return int(a), int(b)
    return int(t[0]), int(t[1])


def norm(t: TileText) -> str:
    """Canonical text of a tile, low half first: ``"6-3"`` -> ``"3-6"``."""
    a, b = sorted(tile(t))
    return f"{a}-{b}"


def line(text: str) -> list[list[int]]:
    """A train as ``state_dict`` shows it, from the station: ``"6-3 3-3"`` -> ``[[6, 3], [3, 3]]``."""
    return [list(tile(t)) for t in text.split()]


def full_deal(
    max_pips: int,
    hands: Sequence[Iterable[TileText]],
    boneyard: Iterable[TileText] = (),
    *,
    rest_to: int | None = None,
    engine_dealt: bool = False,
) -> dict[str, Any]:
    """A complete deal of a double-``max_pips`` set for ``reset(options={"deal": ...})``.

    ``hands`` are the tiles each seat holds, ``boneyard`` the top of the boneyard (drawn
    first). Every tile of the set not named goes, in lexicographic order, to the BOTTOM of
    the boneyard, or into hand ``rest_to``. The round-0 engine ``(N, N)`` is set aside (R5)
    unless ``engine_dealt`` (variant ``engine_holder_opens``), where it is dealt like any
    other tile (and joins the rest if not named).
    """
    engine = (max_pips, max_pips)
    named: list[tuple[int, int]] = []
    out_hands = [[tile(t) for t in h] for h in hands]
    out_bone = [tile(t) for t in boneyard]
    for t in [*(x for h in out_hands for x in h), *out_bone]:
        key = (min(t), max(t))
        if key in named:
            raise AssertionError(f"scripted deal names {t} twice")
        if key == engine and not engine_dealt:
            raise AssertionError(f"the engine {t} is set aside; do not deal it")
        named.append(key)
    rest = [
        (a, b)
        for a in range(max_pips + 1)
        for b in range(a, max_pips + 1)
        if (a, b) not in named and ((a, b) != engine or engine_dealt)
    ]
    if rest_to is None:
        out_bone += rest
    else:
        out_hands[rest_to] += rest
    return {
        "hands": [[list(t) for t in h] for h in out_hands],
        "boneyard": [list(t) for t in out_bone],
    }


def rest_of_set(max_pips: int, *named: Iterable[TileText], engine_dealt: bool = False) -> list[str]:
    """The tiles of the set not in ``named`` (and not the engine), lexicographic, as text."""
    used = {norm(t) for group in named for t in group}
    if not engine_dealt:
        used.add(f"{max_pips}-{max_pips}")
    return [f"{a}-{b}" for a in range(max_pips + 1) for b in range(a, max_pips + 1) if f"{a}-{b}" not in used]


def deal_env(
    hands: Sequence[Iterable[TileText]],
    boneyard: Iterable[TileText] = (),
    *,
    first_player: int | None = 0,
    rest_to: int | None = None,
    max_pips: int = 6,
    hand_size: int = 3,
    seed: int = 0,
    **kwargs: Any,
) -> mtrain_env.raw_env:
    """A ``raw_env`` with one seat per hand, reset on the scripted deal.

    ``hand_size`` only has to be valid (R4): a fixed deal may give any hand sizes.
    ``kwargs`` go to ``raw_env`` (``rules=``, ``rounds=``, ``reward=``, variant flags).
    """
    env = mtrain_env.raw_env(num_players=len(hands), max_pips=max_pips, hand_size=hand_size, **kwargs)
    deal = full_deal(
        max_pips,
        hands,
        boneyard,
        rest_to=rest_to,
        engine_dealt=bool(env.config.engine_holder_opens),
    )
    options: dict[str, Any] = {"deal": deal}
    if first_player is not None:
        options["first_player"] = first_player
    env.reset(seed=seed, options=options)
    return env


def seat_on_turn(env: mtrain_env.raw_env) -> int:
    """The seat on turn, checked to agree between ``state_dict`` and ``agent_selection``."""
    seat = env.state_dict()["current_player"]
    assert env.agent_selection == f"player_{seat}"
    return int(seat)


def _train_name(seat: int, rel: int, n: int) -> str:
    return "mex" if rel == n else str((seat + rel) % n)


def legal(env: mtrain_env.raw_env) -> set[str]:
    """The mask of the seat on turn, decoded to move texts (absolute trains).

    Also checks the AEC contract around it: every other seat's mask is all zero, and the
    mask agrees with ``legal_actions()``.
    """
    seat = seat_on_turn(env)
    n = env.config.num_players
    out = set()
    for p, agent in enumerate(env.possible_agents):
        mask = env.observe(agent)["action_mask"]
        assert mask.dtype == np.int8
        if p != seat:
            assert not mask.any(), f"{agent} is not on turn but has a non-zero mask"
            continue
        ids = np.flatnonzero(mask).tolist()
        assert ids == env.legal_actions()
        for a in ids:
            d = env.decode_action(a)
            if d.kind == "play":
                assert d.tile is not None and d.train is not None
                out.add(f"{norm(d.tile)} @{_train_name(seat, d.train, n)}")
            else:
                out.add(d.kind.upper())
    return out


def encode(env: mtrain_env.raw_env, move: str) -> int:
    """The (relative) action id of a move text for the seat on turn."""
    if move == "DRAW":
        return int(env.DRAW)
    if move == "PASS":
        return int(env.PASS)
    t, where = move.split()
    assert where.startswith("@"), move
    n = env.config.num_players
    seat = seat_on_turn(env)
    rel = n if where == "@mex" else (int(where[1:]) - seat) % n
    return env.encode_action(tile(t), rel)


def act(env: mtrain_env.raw_env, *moves: str) -> None:
    """Step the seat on turn through ``moves`` (each must be legal: ``raw_env`` raises otherwise)."""
    for move in moves:
        action = encode(env, move)
        assert env.observe(env.agent_selection)["action_mask"][action] == 1, (
            f"{move!r} is not in the mask {sorted(legal(env))}"
        )
        env.step(action)


def hand(env: mtrain_env.raw_env, seat: int) -> set[str]:
    """Seat ``seat``'s hand as canonical tile texts (hidden info, read from ``state_dict``)."""
    return {norm((a, b)) for a, b in env.state_dict()["hands"][seat]}


def boneyard(env: mtrain_env.raw_env) -> list[str]:
    """The boneyard, top (next draw) first, as canonical tile texts."""
    return [norm((a, b)) for a, b in env.state_dict()["boneyard"]]


def play_out(env: mtrain_env.raw_env, max_steps: int = 10_000) -> None:
    """Play the episode to its end with the lowest legal action each step (deterministic)."""
    for _ in range(max_steps):
        if all(env.terminations.values()):
            return
        env.step(env.legal_actions()[0])
    raise AssertionError("episode did not end")


def finish_round(env: mtrain_env.raw_env, max_steps: int = 10_000) -> None:
    """Play the lowest legal action until the current round is over (next round dealt or episode over)."""
    start = env.state_dict()["round"]
    for _ in range(max_steps):
        if all(env.terminations.values()) or env.state_dict()["round"] != start:
            return
        env.step(env.legal_actions()[0])
    raise AssertionError("round did not end")


def assert_refused_naming(
    call: Callable[[], object], key: str, rule: str, error: type[Exception] = ValueError
) -> None:
    """``call()`` raises ``error`` worded as the snapshot readers word every refusal,
    ``state dict 'KEY': RULE: <what is wrong>``, with a real reason after the rule."""
    with pytest.raises(error) as err:
        call()
    head = f"state dict {key!r}: {rule}: "
    msg = str(err.value)
    assert msg.startswith(head), msg
    assert len(msg) > len(head) + 10 and not msg.endswith("None")
