"""A cap on request bodies, enforced while they arrive (an ASGI middleware).

A declared ``Content-Length`` over the limit is refused at once; a chunked body is counted
as it streams and refused as soon as it passes the limit, so a huge body is never held in
memory. The refusal is a 413 with the usual ``{"error": ...}`` body.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimit", "refuse"]


class _TooLargeError(Exception):
    pass


class BodyLimit:
    """Refuse bodies over ``default`` bytes (``limits``: per path prefix) with a 413."""

    def __init__(self, app: ASGIApp, default: int, limits: Mapping[str, int] | None = None) -> None:
        self.app = app
        self.default = default
        self.limits = dict(limits or {})

    def _limit(self, path: str) -> int:
        for prefix, limit in self.limits.items():
            if path.startswith(prefix):
                return limit
        return self.default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self._limit(scope["path"])
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await refuse(send, 400, "Content-Length is not a number")
                    return
                if declared > limit:
                    await refuse(send, 413, _message(declared, limit))
                    return
        seen = 0
        over = False  # set once the body passes the limit: the app's answer is replaced
        replaced = False

        async def counted() -> Message:
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    over = True
                    raise _TooLargeError  # frameworks may turn this into their own 400: see below
            return message

        async def guarded(message: Message) -> None:
            nonlocal replaced
            if over:
                if not replaced:
                    replaced = True
                    await refuse(send, 413, _message(seen, limit))
                return
            await send(message)

        try:
            await self.app(scope, counted, guarded)
        except _TooLargeError:
            if not replaced:
                replaced = True
                await refuse(send, 413, _message(seen, limit))


def _message(size: int, limit: int) -> str:
    return f"request body too large: over {limit} bytes (got at least {size})"


async def refuse(send: Send, status: int, message: str) -> None:
    """Answer ``status`` with the JSON body ``{"error": message}``."""
    body = json.dumps({"error": message}).encode()
    headers: list[Any] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
