"""Who may talk to the server, checked before any route runs (an ASGI middleware).

* **Host**: every request names a host the server answers to (loopback names, the host it
  is bound to, the names given with ``--allow-host``), so a page of another site whose name
  is re-pointed at this machine (DNS rebinding) gets a 421 instead of the API.
* **Same origin**: a request that changes state (``POST``, ``PUT``, ``PATCH``,
  ``DELETE``) coming from a browser says where it was sent from; one sent from another
  site (``Sec-Fetch-Site`` other than ``same-origin`` or ``none``, or an ``Origin`` that is
  not this server) is a 403. Clients that are not browsers send neither header.
* **Content type**: a body is JSON (``application/json``; an uploaded replay JSON Lines:
  ``application/jsonl`` or ``application/x-ndjson``); anything else is a 415. A cross-site
  form or ``fetch`` can send ``text/plain`` without asking, never these types.

Every refusal is the usual ``{"error": ...}`` JSON body.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from agents.web.limits import refuse

__all__ = ["JSON_TYPES", "LOOPBACK_HOSTS", "RequestGuard", "host_name"]

#: host names that always reach this machine only
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
#: the body type of every request that has one, unless ``types`` says otherwise for its path
JSON_TYPES = ("application/json",)
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SAME_SITE = frozenset({"same-origin", "none"})  # ``none``: typed in the address bar, a bookmark


def host_name(host: str) -> str:
    """The name part of a ``Host`` header or an origin's authority (no port, no brackets,
    lower case): ``"[::1]:8000"`` -> ``"::1"``."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1 : name.find("]")] if "]" in name else name
    elif name.count(":") == 1:  # name:port; more colons: a bare IPv6 address
        name = name.rsplit(":", 1)[0]
    return name.rstrip(".")  # "localhost." is localhost


class RequestGuard:
    """Refuse requests to hosts outside ``hosts``, cross-site state changes, and bodies
    that are not of the JSON types (``types``: media types per path prefix)."""

    def __init__(
        self,
        app: ASGIApp,
        hosts: Iterable[str] = (),
        types: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.app = app
        named = (host_name(h) for h in hosts)
        self.hosts = frozenset({*LOOPBACK_HOSTS, *(h for h in named if h)})  # never "": no Host
        self.types = dict(types or {})

    def _types(self, path: str) -> tuple[str, ...]:
        for prefix, types in self.types.items():
            if path.startswith(prefix):
                return types
        return JSON_TYPES

    def _problem(self, scope: Scope) -> tuple[int, str] | None:
        headers: dict[str, str] = {}
        for name, value in scope.get("headers", ()):
            headers.setdefault(name.decode("latin-1"), value.decode("latin-1"))
        host = headers.get("host", "")
        if host_name(host) not in self.hosts:
            return 421, (
                f"this server does not answer to host {host!r}; it answers to {sorted(self.hosts)} "
                "(mtrain serve --allow-host adds a name)"
            )
        if scope.get("method", "GET") not in UNSAFE_METHODS:
            return None
        site = headers.get("sec-fetch-site")
        if site is not None and site not in SAME_SITE:
            return 403, f"refused a {site} request: only this server's own pages may change a game"
        origin = headers.get("origin")
        if origin is not None and (origin == "null" or urlsplit(origin).netloc.lower() != host.lower()):
            return 403, f"refused a request from origin {origin!r}: only this server's own pages may send it"
        kind = headers.get("content-type")
        if kind is None and scope.get("method") == "DELETE":
            return None
        media = (kind or "").split(";", 1)[0].strip().lower()
        allowed = self._types(scope["path"])
        if media not in allowed:
            return 415, f"Content-Type must be {' or '.join(allowed)}, got {kind!r}"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            problem = self._problem(scope)
            if problem is not None:
                await refuse(send, *problem)
                return
        await self.app(scope, receive, send)
