"""The web table's FastAPI app: two pages (replay viewer, play against agents) and a JSON API.

Pages are static files (``agents/web/static``: plain HTML, CSS and ES modules, nothing
fetched from elsewhere). The API:

* ``GET /api/options``: agents, rule presets and limits for the new-game form; with
  ``num_players``, ``max_pips`` and ``rules`` only the agents that can play that table
  (``refused`` says why the others cannot);
* ``POST /api/games``: a new game (:class:`~agents.web.schemas.NewGameRequest`), answered
  with the human seat's state; ``GET /api/games/{id}``: that state again;
  ``POST /api/games/{id}/move`` (:class:`~agents.web.schemas.MoveRequest`): the human's
  move, then the agents' up to its next turn; ``DELETE /api/games/{id}``: abandon it;
* ``GET /api/replays``: the replay files under ``--replays``; ``GET /api/replays/view``
  (``path``, optional ``seat``) and ``POST /api/replays/upload`` (the file as the body):
  a replay as frames.

Every refusal is a 4xx (503 when the game store is full) whose JSON body is
``{"error": "one line saying why"}``; bodies over the limits get a 413 before they are read
in full.
"""

from __future__ import annotations

import secrets
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from agents.registry import agent_names
from agents.web.games import (
    ConflictError,
    GameStore,
    TableGame,
    TableSetup,
    WebError,
    opponents_for,
    table_refusals,
)
from agents.web.limits import BodyLimit
from agents.web.replays import ReplayRefusedError, list_replays, load_replay, parse_replay, replay_json
from agents.web.schemas import MAX_WEB_PLAYERS, MoveRequest, NewGameRequest
from mtrain_env.mexican_train import GameConfig
from mtrain_env.mexican_train.core.config import MIN_PLAYERS, PRESETS

__all__ = ["create_app"]

STATIC = Path(__file__).parent / "static"
GAME_ID = r"^[0-9a-f]{32}$"
API_BODY_LIMIT = 16 * 1024  #: bytes of a JSON request body
UPLOAD_LIMIT = 32 * 1024 * 1024  #: bytes of an uploaded replay
Seat = Annotated[int | None, Query(ge=0, le=7, description="one seat's view (default: every hand)")]
GameId = Annotated[str, PathParam(pattern=GAME_ID, description="the id POST /api/games answered")]


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
) -> FastAPI:
    """The app. Replays are listed from ``replays_dir``; games against agents are saved in
    ``save_dir`` (default ``replays_dir/played``, so the viewer lists them); at most
    ``max_games`` games are held, a game idle for ``idle_seconds`` may be evicted."""
    replays_root = Path(replays_dir)
    saves = Path(save_dir) if save_dir else replays_root / "played"
    store = GameStore(max_games, saves, idle_seconds, viewer_root=replays_root)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> Any:
        yield
        store.close_all()  # every unfinished game's replay is saved

    app = FastAPI(title="mtrain web table", lifespan=lifespan)
    app.state.store = store
    app.add_middleware(BodyLimit, default=API_BODY_LIMIT, limits={"/api/replays/upload": UPLOAD_LIMIT})

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
            "presets": sorted(PRESETS),
            "players": [MIN_PLAYERS, MAX_WEB_PLAYERS],
            "max_pips": [6, 18],
            "max_games": store.max_games,
        }

    @app.post("/api/games", status_code=201)
    def new_game(req: NewGameRequest) -> dict[str, Any]:
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
        game = store.create(setup)
        with game.lock:
            return game.state()

    def _locked(game_id: str) -> TableGame:
        game = store.get(game_id)
        if not game.lock.acquire(blocking=False):
            raise ConflictError(f"game {game_id} is busy with another request; retry when it answers")
        return game

    @app.get("/api/games/{game_id}")
    def get_game(game_id: GameId) -> dict[str, Any]:
        game = _locked(game_id)
        try:
            return game.state()
        finally:
            game.lock.release()

    @app.post("/api/games/{game_id}/move")
    def move(game_id: GameId, req: MoveRequest) -> dict[str, Any]:
        game = _locked(game_id)
        try:
            game.move(req.seat, req.action, req.step)
            return game.state()
        finally:
            game.lock.release()

    @app.delete("/api/games/{game_id}")
    def abandon(game_id: GameId) -> dict[str, Any]:
        game = store.remove(game_id)
        with game.lock:
            game.abandon()
            state = game.state()
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
        data = await request.body()
        # parsing and re-simulating take a while: off the event loop, like the sync routes
        return await run_in_threadpool(lambda: replay_json(parse_replay(data), seat))

    return app
