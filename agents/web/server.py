"""The uvicorn server of the web table, with limits on how long a client may take.

uvicorn closes a kept-alive connection that sends nothing (``timeout_keep_alive``) and caps
a request's head (``h11_max_incomplete_event_size``), but waits forever on a request that
has begun and stalls: headers or a body sent in part, or a connection that never sends a
byte. :class:`RequestTimeoutProtocol` (uvicorn's h11 protocol) gives every request a
deadline: from the moment one is awaited until it has arrived whole, ``request_timeout``
seconds, then the connection is closed. Answering takes as long as the agents need; only
reading the request is timed. ``X-Forwarded-*`` headers are not trusted (no proxy sits in
front of ``mtrain serve``), so a client cannot pose as another address.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEAD_LIMIT", "KEEP_ALIVE", "REQUEST_TIMEOUT", "RequestTimeoutProtocol", "server_config"]

REQUEST_TIMEOUT = 20.0  #: seconds to send a whole request (head and body: 32 MiB at 1.6 MB/s)
KEEP_ALIVE = 5  #: seconds an idle kept-alive connection stays open
HEAD_LIMIT = 16 * 1024  #: bytes of a request line and its headers


class RequestTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol; a request that has not arrived whole ``request_timeout``
    seconds after the server began to wait for it closes its connection."""

    request_timeout: float = REQUEST_TIMEOUT
    _request_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        self._stop()  # idle between requests: timeout_keep_alive's turn, until data comes
        super().on_response_complete()
        if self.conn.their_state is not h11.IDLE:
            self._watch()  # a pipelined request being read

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _watch(self) -> None:
        """Time the request being read; stop once it is whole."""
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            if self._request_timer is None:
                self._request_timer = self.loop.call_later(self.request_timeout, self._too_slow)
        else:
            self._stop()

    def _stop(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _too_slow(self) -> None:
        self._request_timer = None
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            self.logger.warning("closed a connection whose request took over %g s", self.request_timeout)
            self.transport.close()


def server_config(app: Any, request_timeout: float = REQUEST_TIMEOUT, **kwargs: Any) -> uvicorn.Config:
    """The uvicorn config of ``app`` with the web table's limits (``kwargs``: more of
    uvicorn's settings, e.g. ``host`` and ``port``)."""
    if not request_timeout > 0:
        raise ValueError(f"request_timeout must be > 0 seconds, got {request_timeout}")
    protocol = type("TimedH11Protocol", (RequestTimeoutProtocol,), {"request_timeout": request_timeout})
    settings: dict[str, Any] = {
        "http": protocol,
        "timeout_keep_alive": KEEP_ALIVE,
        "h11_max_incomplete_event_size": HEAD_LIMIT,
        "proxy_headers": False,
        "server_header": False,
        "log_level": "warning",
    }
    return uvicorn.Config(app, **{**settings, **kwargs})
