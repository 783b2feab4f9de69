"""Helpers of the web table's tests: a real uvicorn server on a free port, in a thread (with
the settings ``mtrain serve`` uses), and a TestClient that talks as the play page does."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from fastapi.testclient import TestClient

from agents.web.app import create_app
from agents.web.server import server_config

GAME_PATH = re.compile(r"/api/games/([0-9a-f]{32})(?:/|$)")

#: why no test lets uvicorn set up logging: its ``logging.config.dictConfig`` closes every
#: logging handler of the process, absl's among them (ray.rllib and OpenSpiel import absl),
#: and absl's handler closes its stream unless that is the current ``sys.stderr``; under
#: ``capsys`` its stream is pytest's capture file of the whole worker, and every later test
#: of that worker then fails. A server here runs with ``log_config=None``; a test of
#: ``mtrain serve`` in-process replaces ``uvicorn.Config.configure_logging``.
LOGGING_SETUP = "uvicorn.Config.configure_logging"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def live_server(
    replays: Path, request_timeout: float | None = None, **kwargs: Any
) -> Iterator[tuple[str, Any]]:
    """``(base_url, app)`` of a uvicorn server serving ``create_app(replays, **kwargs)``."""
    app = create_app(replays, **kwargs)
    port = free_port()
    timeout = {} if request_timeout is None else {"request_timeout": request_timeout}
    # log_config=None: uvicorn's loggers propagate to pytest's (see LOGGING_SETUP)
    config = server_config(app, host="127.0.0.1", port=port, log_config=None, **timeout)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(timeout=20)


class TableClient(TestClient):
    """A TestClient on a loopback host that sends each game's seat token (remembered from
    the answer that created the game) with every request about that game, as the play
    page does; ``tokens=False`` sends none."""

    def __init__(self, app: Any, tokens: bool = True, **kwargs: Any) -> None:
        kwargs.setdefault("base_url", "http://127.0.0.1")
        super().__init__(app, **kwargs)
        self.tokens: dict[str, str] | None = {} if tokens else None

    def request(self, method: str, url: Any, **kwargs: Any) -> Any:
        found = GAME_PATH.search(str(url))
        if self.tokens is not None and found and found.group(1) in self.tokens:
            kwargs["headers"] = {"X-Seat-Token": self.tokens[found.group(1)], **(kwargs.get("headers") or {})}
        r = super().request(method, url, **kwargs)
        created = method.upper() == "POST" and str(url).endswith("/api/games") and r.status_code == 201
        if self.tokens is not None and created:
            self.tokens[r.json()["id"]] = r.json()["token"]
        return r
