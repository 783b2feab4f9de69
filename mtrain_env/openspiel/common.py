"""Pieces both OpenSpiel games share: the tile-by-tile chance deal, the seats' event log, the observer.

* :class:`TileDeal`: a deal as chance nodes, ONE OUTCOME PER DEALT TILE (uniform over the
  tiles not dealt yet), seat 0's hand first; the same distribution as the envs' seeded
  shuffle (:func:`mtrain_env.tilegame.deal.shuffled_hands`), exposed to the algorithms.
* :class:`Log`: what happened, event by event, each with the text every seat sees and,
  for private events, the text its owner sees; a seat's information-state string is its
  log (perfect recall). Immutable and shared by clones, so cloning a state copies no event.
* :func:`log_deal` / :func:`log_pick_up`: how a deal enters the log. The tiles are dealt
  face down (a public ``deal pK`` per tile: every seat sees how many each has), and when
  the deal is complete each seat picks up its hand: ONE private event with its tiles in
  tile-id order. So a seat's information state holds its hand as a set, never the order
  it was dealt in (which the rules never use): one real information set is one string,
  not up to ``hand_size!`` of them, as tabular algorithms (CFR, ``TabularPolicy``,
  exploitability) that key by the string need. Draws later (R16) stay one event each.
* :class:`SeatObserver`: OpenSpiel's ``PyObserver`` over a state's ``seat_vector`` (the
  env's observation of that seat), ``info_string`` and ``obs_string``.
* :class:`Static`, :func:`static_for`: a game's shared tables; :class:`SeatViews`: what a
  state says about one seat, and the state methods both games share.
* :func:`game_type`: the ``pyspiel.GameType`` both games register (sequential, explicit
  chance, imperfect information, terminal rewards, every string and tensor provided).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from mtrain_env.tilegame.layout import FlatLayout
from mtrain_env.tilegame.tiles import bits_list

__all__ = ["Log", "SeatObserver", "TileDeal", "game_type", "log_deal", "log_pick_up", "seat_log"]


def tiles_text(tiles: Sequence[tuple[int, int]], mask: int) -> str:
    """The tiles of bitmask ``mask`` as ``"a-b c-d"``, in tile-id order."""
    return " ".join(f"{tiles[i][0]}-{tiles[i][1]}" for i in bits_list(mask))


def game_type(
    short_name: str, long_name: str, *, zero_sum: bool, players: tuple[int, int], params: dict[str, Any]
) -> Any:
    """The ``pyspiel.GameType`` of a tile game of this package (``players``: min and max)."""
    import pyspiel

    kind = pyspiel.GameType
    return kind(
        short_name=short_name,
        long_name=long_name,
        dynamics=kind.Dynamics.SEQUENTIAL,
        chance_mode=kind.ChanceMode.EXPLICIT_STOCHASTIC,
        information=kind.Information.IMPERFECT_INFORMATION,
        utility=kind.Utility.ZERO_SUM if zero_sum else kind.Utility.GENERAL_SUM,
        reward_model=kind.RewardModel.TERMINAL,
        min_num_players=players[0],
        max_num_players=players[1],
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=params,
    )


class Static:
    """What every state of one game shares (rules core, encoder: never copied); a game
    subclasses it with its own tables. Build it with :func:`static_for`."""

    def __init__(self, config: Any, reward: str) -> None:
        self.config = config
        self.reward = reward

    def __deepcopy__(self, memo: dict[int, object]) -> Static:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (static_for, (type(self), self.config, self.reward))


@cache
def static_for(kind: type[Static], config: Any, reward: str) -> Any:
    """A game's static tables (``kind``), built once per (config, reward): every state of a
    game and its clones share them, so a state carries only what play changes."""
    return kind(config, reward)


class TileDeal:
    """A deal in progress: ``sizes[k]`` tiles to seat ``k`` from ``pool``, one chance outcome per tile."""

    __slots__ = ("count", "hands", "pool", "seat", "sizes")

    def __init__(self, pool: list[int], sizes: list[int]) -> None:
        self.pool = sorted(pool)  #: tiles not dealt yet, increasing
        self.sizes = sizes
        self.hands = [0] * len(sizes)
        self.seat = 0  #: the seat the next tile goes to
        self.count = 0  #: tiles it has so far
        self._skip_full()

    def _skip_full(self) -> None:
        while self.seat < len(self.sizes) and self.count == self.sizes[self.seat]:
            self.seat += 1
            self.count = 0

    @property
    def done(self) -> bool:
        return self.seat == len(self.sizes)

    def outcomes(self) -> list[tuple[int, float]]:
        """``(tile, probability)``: the next tile is uniform over the undealt ones."""
        p = 1.0 / len(self.pool)
        return [(t, p) for t in self.pool]

    def give(self, tile: int) -> int:
        """Deal ``tile`` to the seat on turn to receive; returns that seat."""
        seat = self.seat
        self.pool.remove(tile)
        self.hands[seat] |= 1 << tile
        self.count += 1
        self._skip_full()
        return seat

    def copy(self) -> TileDeal:
        new = TileDeal.__new__(TileDeal)
        new.pool = list(self.pool)
        new.sizes = self.sizes
        new.hands = list(self.hands)
        new.seat = self.seat
        new.count = self.count
        return new

    def __deepcopy__(self, memo: dict[int, object]) -> TileDeal:
        return self.copy()


class Log:
    """One event and the log before it (``None`` = the start): an immutable linked list.

    ``owner`` is -1 for a public event (every seat reads ``public``), else the seat that
    reads ``private`` while the others read ``public``.
    """

    __slots__ = ("owner", "prev", "private", "public")

    def __init__(self, prev: Log | None, owner: int, public: str, private: str = "") -> None:
        self.prev = prev
        self.owner = owner
        self.public = public
        self.private = private

    def __deepcopy__(self, memo: dict[int, object]) -> Log:
        return self  # immutable: clones share it

    def entries(self) -> list[tuple[int, str, str]]:
        """The events, oldest first."""
        out = []
        node: Log | None = self
        while node is not None:
            out.append((node.owner, node.public, node.private))
            node = node.prev
        out.reverse()
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        # flat, so that pickling a long game does not recurse once per event
        return (_log_from_entries, (self.entries(),))


def _log_from_entries(entries: list[tuple[int, str, str]]) -> Log | None:
    log = None
    for owner, public, private in entries:
        log = Log(log, owner, public, private)
    return log


def log_deal(log: Log | None, seat: int) -> Log:
    """One tile dealt face down to ``seat``: public (everyone sees who got a tile, nobody which)."""
    return Log(log, -1, f"deal p{seat}")


def log_pick_up(log: Log | None, tiles: Sequence[tuple[int, int]], hands: Sequence[int]) -> Log | None:
    """The deal is complete: each seat picks up its hand (a bitmask in ``hands``).

    One event per seat: its owner reads its tiles in tile-id order (the hand as a set,
    whatever the order of the chance outcomes that dealt it), the others its size.
    """
    for seat, hand in enumerate(hands):
        shown = tiles_text(tiles, hand)
        log = Log(log, seat, f"p{seat} picks up {hand.bit_count()} tiles", f"p{seat} picks up {shown}")
    return log


def seat_log(log: Log | None, seat: int) -> str:
    """The events as ``seat`` saw them, one per line, oldest first."""
    lines = []
    node = log
    while node is not None:
        lines.append(node.private if node.owner == seat else node.public)
        node = node.prev
    lines.reverse()
    return "".join(line + "\n" for line in lines)


class SeatObserver:
    """OpenSpiel's ``PyObserver`` for both games.

    The tensor is the env's observation of the seat (``state.seat_vector``, named views
    of ``layout`` in ``dict``). The string is the seat's information-state string (its
    whole event log: perfect recall) when ``perfect_recall`` is asked, else the seat's
    current view (``state.obs_string``). Only the seat's own private information is used
    (``private_info=SINGLE_PLAYER``, the default and what the information state asks).
    """

    def __init__(self, iig_obs_type: Any, layout: FlatLayout, params: Any = None) -> None:
        import pyspiel

        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        if iig_obs_type is not None and (
            not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(
                "only the seat's own observation is provided (public_info=True, "
                f"private_info=SINGLE_PLAYER), got {iig_obs_type}"
            )
        self.perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        self.tensor = np.zeros(layout.size, np.float32)
        self.dict = {name: self.tensor[view.slice].reshape(view.shape) for name, view in layout.views.items()}

    def set_from(self, state: Any, player: int) -> None:
        self.tensor[:] = state.seat_vector(player)

    def string_from(self, state: Any, player: int) -> str:
        return state.info_string(player) if self.perfect_recall else state.obs_string(player)


class SeatViews:
    """What both games' pyspiel states say about one seat: its information state (perfect
    recall: what it knew at a resampled root, then every event as it saw it), its current
    view and the env's observation vector of it.

    Mixed into a ``pyspiel.State`` subclass that sets ``_st`` (its game's static part:
    ``config``, ``layout``, ``encoder``), ``_s`` (the core state, None while dealing),
    ``_deal``, ``_log``, ``_roots``, ``_returns`` and ``_terminal``, and names its game's
    ``public_view`` and ``view_text`` as :attr:`PUBLIC_VIEW` and :attr:`VIEW_TEXT`.
    """

    PUBLIC_VIEW: Any  #: the game's ``core.public.public_view`` (a staticmethod)
    VIEW_TEXT: Any  #: the game's view-to-text function (a staticmethod)
    _st: Any
    _s: Any
    _deal: Any
    _log: Log | None
    _roots: tuple[str, ...] | None
    _returns: list[float]
    _terminal: bool
    resample: Any  #: ``(player, numpy generator) -> state``: the game's determinizer

    def is_terminal(self) -> bool:
        return self._terminal

    def returns(self) -> list[float]:
        return list(self._returns) if self._terminal else [0.0] * len(self._returns)

    def resample_from_infostate(self, player: int, probability_sampler: Any) -> Any:
        """A state ``player`` cannot tell from this one (OpenSpiel's sampler seeds the determinizer)."""
        seed = int(probability_sampler() * 2**53)
        return self.resample(player, np.random.default_rng(seed))

    def set_sampled(self, s: Any, keep_seat: int, keep_root: str) -> None:
        """Make this state ``s`` (a determinization): ``keep_seat`` knows ``keep_root``, the others
        their views."""
        config = self._st.config
        self._s = s
        self._deal = None
        self._log = None
        self._roots = tuple(
            keep_root if q == keep_seat else "view " + self.VIEW_TEXT(self.PUBLIC_VIEW(s, config, q)) + "\n"
            for q in range(config.num_players)
        )

    def seat_history(self, player: int) -> str:
        """What ``player`` knew at the root (a resampled state), then every event as it saw it."""
        root = self._roots[player] if self._roots is not None else ""
        return root + seat_log(self._log, player)

    def info_string(self, player: int) -> str:
        """``player``'s information state (perfect recall): its :meth:`seat_history`."""
        return f"p{player}\n{self.seat_history(player)}"

    def obs_string(self, player: int) -> str:
        """``player``'s current view (public table + own hand)."""
        if self._s is None:
            return f"p{player} dealing"
        return self.VIEW_TEXT(self.PUBLIC_VIEW(self._s, self._st.config, player))

    def seat_vector(self, player: int) -> np.ndarray:
        """The env's observation vector of ``player`` (zeros while the first deal is dealt)."""
        if self._s is None:
            return np.zeros(self._st.layout.size, np.float32)
        return self._st.encoder.encode(self._s, player)

    @property
    def game_state(self) -> Any:
        """The wrapped core state (hidden information included; for tests and tooling)."""
        return self._s
