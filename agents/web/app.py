"""The web table's FastAPI app: two pages (replay viewer, play against agents) and a JSON API.

Pages are static files (``agents/web/static``: plain HTML, CSS and ES modules, nothing
fetched from elsewhere). The API:

* ``GET /api/options``: agents, rule presets and limits for the new-game form; with
  ``num_players``, ``max_pips`` and ``rules`` only the agents that can play that table
  (``refused`` says why the others cannot);
* ``POST /api/games``: a new game (:class:`~agents.web.schemas.NewGameRequest`), answered
  with the human seat's state and its seat ``token``; with that token as the
  ``X-Seat-Token`` header, ``GET /api/games/{id}``: that state again;
  ``POST /api/games/{id}/move`` (:class:`~agents.web.schemas.MoveRequest`): the human's
  move, then the agents' up to its next turn; ``DELETE /api/games/{id}``: abandon it (its
  replay saved first: when it cannot be, a 500 saying why and the game is kept);
* ``GET /api/replays``: the replay files under ``--replays``; ``GET /api/replays/view``
  (``path``, optional ``seat``) and ``POST /api/replays/upload`` (the file as the body,
  ``Content-Type: application/jsonl``): a replay as frames, each decision's annotations cut
  to what the viewer shows (the best moves of an action table and the move played, with
  what the numbers mean).

Requests are checked before any route (:mod:`agents.web.guard`): the Host must be one the
server answers to (421), a state change must come from its own pages (403), a body must
be JSON (415). Every refusal is a 4xx (429 when the client holds its most live games, 503
when the game store is full) whose JSON body is ``{"error": "one line saying why"}``;
bodies over the limits get a 413 before they are read in full; a replay that cannot be
saved is a 500 of the same form, and any other failure a 500 that names only its kind.
"""

from __future__ import annotations

import contextlib
import secrets
import sys
from collections.abc import Iterable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Header, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from agents.registry import agent_class, agent_names
from agents.web.games import (
    ConflictError,
    GameStore,
    NotFoundError,
    TableGame,
    TableSetup,
    WebError,
    opponents_for,
    table_refusals,
)
from agents.web.guard import RequestGuard
from agents.web.limits import BodyLimit
from agents.web.replays import (
    MAX_REPLAY_BYTES,
    ReplayRefusedError,
    list_replays,
    load_replay,
    parse_replay,
    replay_json,
)
from agents.web.schemas import MAX_WEB_PLAYERS, MoveRequest, NewGameRequest
from mtrain_env.mexican_train import GameConfig
from mtrain_env.mexican_train.core.config import MIN_PLAYERS, PRESETS

__all__ = ["create_app"]

STATIC = Path(__file__).parent / "static"
GAME_ID = r"^[0-9a-f]{32}$"
API_BODY_LIMIT = 16 * 1024  #: bytes of a JSON request body
UPLOAD_LIMIT = MAX_REPLAY_BYTES  #: bytes of an uploaded replay
#: the body types of an uploaded replay (a JSON Lines file): none is one a page of another
#: site may send without the browser asking this server first
UPLOAD_TYPES = ("application/jsonl", "application/x-ndjson")
MAX_CLIENT_GAMES = 8  #: live games one client may hold
Seat = Annotated[int | None, Query(ge=0, le=7, description="one seat's view (default: every hand)")]
GameId = Annotated[str, PathParam(pattern=GAME_ID, description="the id POST /api/games answered")]
SeatToken = Annotated[
    str | None, Header(alias="X-Seat-Token", max_length=64, description="the token POST /api/games answered")
]


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _validation_message(err: RequestValidationError) -> str:
    parts = []
    for e in err.errors()[:3]:
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {e.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)


def create_app(
    replays_dir: str | Path = "runs/replays",
    save_dir: str | Path | None = None,
    max_games: int = 32,
    idle_seconds: float = 300.0,
    hosts: Iterable[str] = (),
    max_client_games: int = MAX_CLIENT_GAMES,
) -> FastAPI:
    """The app. Replays are listed from ``replays_dir``; games against agents are saved in
    ``save_dir`` (default ``replays_dir/played``, so the viewer lists them); at most
    ``max_games`` games are held, ``max_client_games`` live ones per client, a game idle
    for ``idle_seconds`` may be evicted. Requests must name a loopback host or one of
    ``hosts`` (the host the server is bound to, other names it is reached by)."""
    replays_root = Path(replays_dir)
    saves = Path(save_dir) if save_dir else replays_root / "played"
    store = GameStore(max_games, saves, idle_seconds, replays_root, max_client_games)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> Any:
        yield
        for err in store.close_all():  # every unfinished game's replay is saved, or said lost
            print(f"mtrain serve: {err}", file=sys.stderr)

    app = FastAPI(title="mtrain web table", lifespan=lifespan)
    app.state.store = store
    app.add_middleware(BodyLimit, default=API_BODY_LIMIT, limits={"/api/replays/upload": UPLOAD_LIMIT})
    # outermost: a request to another host, or from another site, is refused before its body
    app.add_middleware(RequestGuard, hosts=hosts, types={"/api/replays/upload": UPLOAD_TYPES})

    @app.exception_handler(WebError)
    async def _web_error(_request: Request, err: WebError) -> JSONResponse:
        return _error(err.status, str(err))

    @app.exception_handler(ReplayRefusedError)
    async def _replay_refused(_request: Request, err: ReplayRefusedError) -> JSONResponse:
        return _error(err.status, str(err))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, err: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(err))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, err: StarletteHTTPException) -> JSONResponse:
        return _error(err.status_code, str(err.detail))

    @app.exception_handler(Exception)
    async def _failed(_request: Request, err: Exception) -> JSONResponse:
        # its kind only: a message could name a hidden tile
        return _error(500, f"internal error ({type(err).__name__}); the server goes on")

    # ------------------------------------------------------------------ pages
    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/play", include_in_schema=False)
    def play_page() -> FileResponse:
        return FileResponse(STATIC / "play.html")

    @app.get("/viewer", include_in_schema=False)
    def viewer_page() -> FileResponse:
        return FileResponse(STATIC / "viewer.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # ------------------------------------------------------------------ games
    @app.get("/api/options")
    def options(
        num_players: Annotated[int | None, Query(ge=MIN_PLAYERS, le=MAX_WEB_PLAYERS)] = None,
        max_pips: Annotated[int | None, Query(ge=6, le=18)] = None,
        rules: Annotated[str | None, Query(max_length=32)] = None,
    ) -> dict[str, Any]:
        agents, refused = agent_names("mexican_train"), {}
        if (num_players, max_pips, rules) != (None, None, None):
            table: dict[str, Any] = {"num_players": num_players, "max_pips": max_pips, "rules": rules}
            try:
                config = GameConfig.make(**{k: v for k, v in table.items() if v is not None})
            except (ValueError, TypeError) as err:
                raise WebError(f"game config: {err}") from None
            refused = table_refusals(config)
            agents = [a for a in agents if a not in refused]
        return {
            "agents": agents,
            "refused": refused,
            # agents that see the hidden hands (their class declares ``cheats``): labelled so
            "cheats": [a for a in agents if getattr(agent_class(a), "cheats", False)],
            "presets": sorted(PRESETS),
            "players": [MIN_PLAYERS, MAX_WEB_PLAYERS],
            "max_pips": [6, 18],
            "max_games": store.max_games,
            "max_client_games": store.max_client_games,
        }

    @app.post("/api/games", status_code=201)
    def new_game(req: NewGameRequest, request: Request) -> dict[str, Any]:
        known = agent_names("mexican_train")
        unknown = [a for a in req.agents if a not in known]
        if unknown:
            raise WebError(f"unknown agent(s) {unknown}; known: {known}")
        if not req.seat < req.num_players:
            raise WebError(f"seat must be 0..{req.num_players - 1} for {req.num_players} players")
        try:
            config = GameConfig.make(
                num_players=req.num_players, max_pips=req.max_pips, rules=req.rules, rounds=req.rounds
            )
        except (ValueError, TypeError) as err:
            raise WebError(f"game config: {err}") from None
        refused = table_refusals(config)  # a network of another table: refused now, not mid-game
        for name in dict.fromkeys(req.agents):
            if name in refused:
                raise WebError(f"agent {name}: {refused[name]}")
        # 63 bits: a deal a player cannot find again by trying seeds against its own hand
        seed = req.seed if req.seed is not None else secrets.randbits(63)
        setup = TableSetup(config, req.seat, opponents_for(req.agents, req.num_players), seed)
        game = store.create(setup, request.client.host if request.client else None)
        with game.lock:
            return {**game.state(), "token": game.token}  # the seat's token: this answer only

    @contextlib.contextmanager
    def _locked(game_id: str, token: str | None) -> Iterator[TableGame]:
        game = store.seat(game_id, token)
        if not game.lock.acquire(blocking=False):
            raise ConflictError(f"game {game_id} is busy with another request; retry when it answers")
        try:
            yield game
        finally:
            game.lock.release()

    @app.get("/api/games/{game_id}")
    def get_game(game_id: GameId, token: SeatToken = None) -> dict[str, Any]:
        with _locked(game_id, token) as game:
            return game.state()

    @app.post("/api/games/{game_id}/move")
    def move(game_id: GameId, req: MoveRequest, token: SeatToken = None) -> dict[str, Any]:
        with _locked(game_id, token) as game:
            game.move(req.seat, req.action, req.step)
            return game.state()

    @app.delete("/api/games/{game_id}")
    def abandon(game_id: GameId, token: SeatToken = None) -> dict[str, Any]:
        with _locked(game_id, token) as game:
            game.abandon()  # the replay is written first: a SaveError keeps the game
            state = game.state()
            with contextlib.suppress(NotFoundError):  # the server shutting down took it already
                store.remove(game_id)
        return {
            "id": game.id,
            "abandoned": True,
            "replay": state["replay"],
            "replay_path": state["replay_path"],
        }

    # ---------------------------------------------------------------- replays
    @app.get("/api/replays")
    def replays() -> dict[str, Any]:
        return {"dir": str(replays_root), "replays": list_replays(replays_root)}

    @app.get("/api/replays/view")
    def view_replay(path: Annotated[str, Query(max_length=1024)], seat: Seat = None) -> dict[str, Any]:
        return replay_json(load_replay(replays_root, path), seat)

    @app.post("/api/replays/upload")
    async def upload_replay(request: Request, seat: Seat = None) -> dict[str, Any]:
        data = await request.body()  # the body's type is checked by RequestGuard
        # parsing and re-simulating take a while: off the event loop, like the sync routes
        return await run_in_threadpool(lambda: replay_json(parse_replay(data), seat))

    return app
