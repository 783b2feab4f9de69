"""Games against agents held in memory: one human seat, the other seats played by agents.

A :class:`TableGame` owns a bare env (``raw_env``: an illegal action raises before any
change), the agents of the other seats and a replay recorder. The human's move is checked
in full (seat, position counter, action id, legality) BEFORE the env is touched, then the
opponents move through :func:`agents.play.play_until` (THE play loop) until the human is
on turn again or the game ends. Each game has its own lock, taken without waiting: a
second request while one is being served gets a 409 instead of queueing. Work happens in
the request's own thread and the lock is released by a ``with`` block, so a client that
disconnects mid-request leaves a consistent game and a free lock.

:class:`GameStore` caps the games in memory: when full, a finished game is dropped, else
the least recently used game idle for at least ``idle_seconds`` (its replay saved as
abandoned); when none is, creating a game fails with :class:`StoreFullError` (503). One
client (an address) holds at most ``max_client_games`` live games, so that it cannot fill
the store for everyone else: past that, its own idle game makes room, else a 429.

Each game has a seat token, answered once when the game is created: reading the seat's
view, moving and abandoning need it (another user who learns the game's id, from a URL or
a log, still cannot see the hand or play the seat).

Every replay is written under ``save_dir`` when its game ends, is abandoned or is evicted,
and a game leaves the store only once its replay is written: when writing fails (the
directory gone or not writable, the disk full) the request gets :class:`SaveError` (a
JSON 500 with the system's reason) and the game stays, so a retry can save it.
"""

from __future__ import annotations

import functools
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.base import BaseAgent
from agents.play import AgentError, Step, play_until
from agents.registry import agent_names, make_agent
from agents.web.tables import legal_json, table_json
from mtrain_env.mexican_train import GameConfig, raw_env
from mtrain_env.replay import ReplayRecorder, describe_move, write_replay
from mtrain_env.tilegame.files import os_error_text

__all__ = [
    "ConflictError",
    "ForbiddenError",
    "GameStore",
    "NotFoundError",
    "SaveError",
    "StoreFullError",
    "TableGame",
    "TableSetup",
    "TooManyGamesError",
    "opponents_for",
    "table_refusals",
]

HUMAN = "human"  #: the agent name a human seat gets in a replay


class WebError(Exception):
    """A refused request; ``status`` is its HTTP status and the message says why."""

    status = 400


class NotFoundError(WebError):
    status = 404


class ForbiddenError(WebError):
    status = 403


class ConflictError(WebError):
    status = 409


class TooManyGamesError(WebError):
    status = 429


class StoreFullError(WebError):
    status = 503


class SaveError(WebError):
    """A replay that could not be written; the game is kept so that a retry can save it."""

    status = 500


@dataclass(frozen=True)
class TableSetup:
    """A new game: its config, the human's seat, an agent name per other seat, a seed."""

    config: GameConfig
    seat: int
    opponents: tuple[str, ...]  #: agent names of the other seats, in seat order
    seed: int


class TableGame:
    """One game between a human seat and agents (see the module docstring)."""

    def __init__(
        self,
        game_id: str,
        setup: TableSetup,
        save_dir: Path,
        viewer_root: Path | None = None,
        client: str | None = None,
    ) -> None:
        config = setup.config
        n = config.num_players
        if len(setup.opponents) != n - 1:
            raise ValueError(f"{n} players need {n - 1} opponents, got {len(setup.opponents)}")
        if not 0 <= setup.seat < n:
            raise ValueError(f"seat must be 0..{n - 1}, got {setup.seat}")
        self.id = game_id
        self.token = secrets.token_urlsafe(24)  #: the seat's token: the creator's answer only
        self.client = client  #: the address that created the game (its live games are capped)
        self.setup = setup
        self.seat = setup.seat
        self.save_dir = save_dir
        self.viewer_root = viewer_root  #: the viewer's directory: saved replays under it get a link
        names = list(setup.opponents)
        names.insert(setup.seat, HUMAN)
        self.names = names
        agents: list[BaseAgent[Any] | None] = [
            None if q == setup.seat else make_agent(name, seed=setup.seed + 1 + q)
            for q, name in enumerate(names)
        ]
        self.agents = agents
        self.env = raw_env(**config.to_dict())
        self.env.reset(seed=setup.seed)
        self.agent_id = self.env.possible_agents[self.seat]
        self.recorder = ReplayRecorder(self.env, setup.seed, names)
        self.results: list[dict[str, Any]] = []  #: each finished round's public result
        self.last_moves: list[dict[str, Any]] = []  #: the moves since the human's last move
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self.saved: Path | None = None
        self.over = False
        self._advance()

    # ---------------------------------------------------------------- play
    @property
    def steps(self) -> int:
        """Steps played so far: the position counter a move must name."""
        return len(self.recorder.replay.steps)

    def _observe(self, step: Step) -> None:
        self.recorder(step)  # records the agent's annotations too, when it has them
        self._note(step.seat, step.action, step.round_result)

    def _note(self, seat: int, action: int, result: dict[str, Any] | None) -> None:
        text = describe_move(self.env, seat, action)
        self.last_moves.append({"seat": seat, "agent": self.names[seat], "text": text})
        if result is not None:
            self.results.append(result)

    def _advance(self) -> None:
        """The agents play until the human is on turn or the episode is over."""
        record = play_until(self.env, self.agents, observer=self._observe)
        if record.episode_over:
            self._finish()

    def move(self, seat: int, action: int, step: int) -> None:
        """Play the human's ``action`` at position ``step``; refuse it whole or apply it whole."""
        if self.over:
            raise ConflictError(f"game {self.id} is over; start a new one")
        if seat != self.seat:
            who = self.names[seat] if 0 <= seat < len(self.names) else None
            raise ForbiddenError(
                f"this game's human seat is {self.seat}; seat {seat} "
                + (f"is played by agent {who!r}" if who else "does not exist")
            )
        if step != self.steps:
            raise ConflictError(f"stale move: the game is at step {self.steps}, the move names step {step}")
        mask = self.env.observe_mask(self.agent_id)
        if not 0 <= action < len(mask):
            raise WebError(f"action must be 0..{len(mask) - 1} (Discrete({len(mask)})), got {action}")
        if not mask[action]:
            legal = [m["text"] for m in legal_json(self.env.codec, self.seat, mask)]
            describe = describe_move(self.env, self.seat, action)
            raise WebError(f"illegal move {describe} (action {action}); legal now: {', '.join(legal)}")
        self.last_moves = []
        self.env.step(action)  # legal: cannot raise
        self.recorder.record(self.seat, action)
        result = self.env.infos[self.agent_id].get("round_result")
        self._note(self.seat, action, result)
        try:
            self._advance()
        except AgentError as err:  # an agent bug: end the game, keep its replay
            self.over = True  # nobody can play on with a broken agent
            try:
                self.save()
            except SaveError as save_err:
                raise SaveError(f"game {self.id} ended: {err}; and {save_err}") from err
            raise ConflictError(f"game {self.id} ended: {err}") from err

    def check_token(self, token: str | None) -> None:
        """Refuse (403) a request without this game's seat token."""
        if token is None or not hmac.compare_digest(token.encode(), self.token.encode()):
            said = "without" if token is None else "with a wrong"
            raise ForbiddenError(
                f"a request {said} seat token for game {self.id}: send the token POST /api/games "
                "answered, as the X-Seat-Token header"
            )

    # ----------------------------------------------------------- saving
    def _finish(self) -> None:
        self.over = True
        self.save()

    def abandon(self) -> None:
        """End the game where it stands and save its (unfinished) replay; when the replay
        cannot be written, :class:`SaveError` and the game is as it was (still playable)."""
        self.save()
        self.over = True

    def save(self) -> Path:
        """Write the replay (once: a saved game is not written again); its path, or
        :class:`SaveError` with the system's reason (naming ``save_dir`` as configured)."""
        if self.saved is None:
            path = self.save_dir / f"{time.strftime('%Y%m%d-%H%M%S')}-{self.id[:8]}.jsonl"
            try:
                write_replay(path, self.recorder.replay)  # creates save_dir when it is gone
            except OSError as err:
                raise SaveError(
                    f"the replay of game {self.id} could not be saved in {self.save_dir}: "
                    f"{os_error_text(err)}; the game is kept, try again once it can be written"
                ) from None
            self.saved = path
        return self.saved

    # ------------------------------------------------------------ the page
    def state(self) -> dict[str, Any]:
        """Everything the human's page receives: built from its seat's view only."""
        env = self.env
        view = env.public_view(self.agent_id)
        mask = env.observe_mask(self.agent_id)
        n = self.setup.config.num_players
        return {
            "id": self.id,
            "seat": self.seat,
            "agents": self.names,
            "step": self.steps,
            "over": self.over,
            "table": table_json(env.pure_game, view, {self.seat: view.hand}),
            "legal": [] if self.over else legal_json(env.codec, self.seat, mask),
            "last_moves": self.last_moves,
            "rounds": self.results,  # public: every hand is shown when a round is scored (R24)
            "totals": [sum(float(r["scores"][q]) for r in self.results) for q in range(n)],
            "replay": self.saved.name if self.saved else None,
            "replay_path": self._viewer_path(),
        }

    def _viewer_path(self) -> str | None:
        """The saved replay's path for the viewer (relative to its directory), if it is under it."""
        if self.saved is None or self.viewer_root is None:
            return None
        try:
            return self.saved.resolve().relative_to(self.viewer_root.resolve()).as_posix()
        except ValueError:
            return None


class GameStore:
    """The games in memory, at most ``max_games``, at most ``max_client_games`` live ones
    per client (see the module docstring)."""

    def __init__(
        self,
        max_games: int,
        save_dir: Path,
        idle_seconds: float = 300.0,
        viewer_root: Path | None = None,
        max_client_games: int | None = None,
    ) -> None:
        if max_games < 1:
            raise ValueError(f"max_games must be >= 1, got {max_games}")
        if max_client_games is not None and max_client_games < 1:
            raise ValueError(f"max_client_games must be >= 1, got {max_client_games}")
        self.max_games = max_games
        self.max_client_games = max_client_games if max_client_games is not None else max_games
        self.save_dir = save_dir
        self.idle_seconds = idle_seconds
        self.viewer_root = viewer_root
        self._games: OrderedDict[str, TableGame] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def create(self, setup: TableSetup, client: str | None = None) -> TableGame:
        """A new game of ``client`` (agents already moved up to the human's first turn)."""
        with self._lock:  # checked before the agents play, and again once they have
            self._check_client(client)
        game_id = secrets.token_hex(16)
        try:  # built outside the store's lock
            game = TableGame(game_id, setup, self.save_dir, self.viewer_root, client)
        except ImportError as err:  # an agent whose extra is not installed (ppo: torch)
            raise WebError(f"an agent cannot be loaded here: {err}") from None
        except AgentError as err:  # an agent bug before the human's first turn: no game to keep
            raise ConflictError(f"the game could not start: {err}") from err
        with self._lock:
            self._check_client(client)
            if len(self._games) >= self.max_games:
                self._evict_one(self._games.items())
            self._games[game_id] = game
        return game

    def _check_client(self, client: str | None) -> None:
        """Make room among ``client``'s live games (its idle one goes), else 429."""
        if client is None:
            return
        mine = [(gid, g) for gid, g in self._games.items() if g.client == client and not g.over]
        if len(mine) < self.max_client_games:
            return
        now = time.monotonic()
        if not self._evict_one([(gid, g) for gid, g in mine if now - g.touched >= self.idle_seconds], False):
            raise TooManyGamesError(
                f"this client already plays {len(mine)} games, the most one client may hold "
                f"(--max-client-games {self.max_client_games}); finish or abandon one (or let one "
                f"stay idle for {self.idle_seconds:g} s)"
            )

    def _evict_one(self, candidates: Any, full: bool = True) -> bool:
        """Make room: drop the least recently used finished game among ``candidates``, else
        the least recently used one idle for ``idle_seconds``, once its replay is saved
        (a game whose replay cannot be written stays). False, or with ``full``
        :class:`StoreFullError`, when none can go."""
        now = time.monotonic()
        games = list(candidates)
        finished = [(gid, g) for gid, g in games if g.over]
        idle = [(gid, g) for gid, g in games if not g.over and now - g.touched >= self.idle_seconds]
        for gid, old in finished + idle:
            if old.lock.acquire(blocking=False):
                try:
                    old.abandon()
                except SaveError:
                    continue  # kept: its replay is not written yet
                finally:
                    old.lock.release()
                del self._games[gid]
                return True
        if not full:
            return False
        raise StoreFullError(
            f"the server holds {self.max_games} games (--max-games) and none has been idle for "
            f"{self.idle_seconds:g} s; try again later"
        )

    def get(self, game_id: str) -> TableGame:
        """The game ``game_id`` (marked as used); :class:`NotFoundError` if unknown or evicted."""
        return self.seat(game_id, None, check=False)

    def seat(self, game_id: str, token: str | None, check: bool = True) -> TableGame:
        """The game ``game_id`` for a request holding its seat ``token`` (marked as used);
        :class:`NotFoundError` if unknown or evicted, :class:`ForbiddenError` on a token
        that is missing or not the game's."""
        with self._lock:
            game = self._games.get(game_id)
            if game is None:
                raise NotFoundError(
                    f"no game {game_id!r} (unknown, finished and closed, or evicted when idle)"
                )
            if check:
                game.check_token(token)
            self._games.move_to_end(game_id)
            game.touched = time.monotonic()
            return game

    def remove(self, game_id: str) -> TableGame:
        """Take ``game_id`` out of the store (its replay already saved by the caller)."""
        with self._lock:
            game = self._games.pop(game_id, None)
        if game is None:
            raise NotFoundError(f"no game {game_id!r}")
        return game

    def close_all(self) -> list[SaveError]:
        """Abandon every game (server shutdown): each unfinished replay is saved; the
        refusals of those that could not be."""
        with self._lock:
            games = list(self._games.values())
            self._games.clear()
        failed = []
        for game in games:
            with game.lock:
                try:
                    game.abandon()
                except SaveError as err:
                    failed.append(err)
        return failed


@functools.lru_cache(maxsize=64)
def table_refusals(config: GameConfig) -> dict[str, str]:
    """Registry agents that cannot play ``config``'s table -> why (a network of another
    table, a hand model of another size: :meth:`~agents.base.BaseAgent.check_game`; an
    extra that is not installed). Cached: each agent's files are read once per table."""
    refused = {}
    for name in agent_names("mexican_train"):
        try:
            make_agent(name).check_game(config)
        except ValueError as err:
            refused[name] = str(err)
        except ImportError as err:  # an agent whose extra is not installed (ppo: torch)
            refused[name] = f"cannot be loaded here: {err}"
    return refused


def opponents_for(names: Sequence[str], num_players: int) -> tuple[str, ...]:
    """``names`` checked against the seat count (one agent per other seat)."""
    if len(names) != num_players - 1:
        raise WebError(f"{num_players} players need {num_players - 1} agents, got {len(names)}")
    return tuple(names)
