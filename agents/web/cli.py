"""``mtrain serve``: the web table on a local server (a replay viewer and play against agents).

Example::

    mtrain serve --replays results/x/replays --port 8000
    # then open http://127.0.0.1:8000/ (the viewer: /viewer, play: /play)

``--replays DIR`` is the directory whose replay files (``*.jsonl``, searched recursively)
the viewer lists; games played in the browser are saved there too, under ``played/``
(``--save-dir`` to choose another place), when they end or are abandoned. At most
``--max-games`` games are held in memory; when full, a finished game, else the oldest
game idle for ``--idle-seconds``, is dropped (its replay saved) to make room; one client
holds at most ``--max-client-games`` live games. Needs the ``web`` extra
(``pip install "mtrain_env[web]"``).

The server answers only to requests naming a loopback host, ``--host`` or a name given
with ``--allow-host``, and changes a game only at the request of its own pages. Listening
beyond this machine (``--host 0.0.0.0``) prints a warning: anyone on the network can then
read the replays and start games; each game's seat stays its creator's (a seat token).
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import socket
import sys
from pathlib import Path
from typing import Any

from mtrain_env.cli import int_at_least, output_problem, positive_float
from mtrain_env.tilegame.files import os_error_text


def register(subparsers: Any) -> None:
    """Add the ``serve`` subcommand to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "serve",
        help="web table: watch replays and play against agents in the browser",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int_at_least(1), default=8000, help="port (default 8000)")
    p.add_argument("--max-games", type=int_at_least(1), default=32, help="games held in memory (default 32)")
    p.add_argument(
        "--max-client-games",
        type=int_at_least(1),
        default=8,
        help="live games one client (address) may hold (default 8)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another host name or address the server answers to (repeatable; loopback names "
        "and --host always): the name others type with --host 0.0.0.0",
    )
    p.add_argument(
        "--idle-seconds", type=positive_float, default=300.0, help="idle time before a game may be evicted"
    )
    p.add_argument("--replays", default="runs/replays", help="replay directory the viewer lists")
    p.add_argument("--save-dir", default=None, help="where played games are saved (default REPLAYS/played)")
    p.set_defaults(func=serve)


def serve(args: argparse.Namespace) -> int:
    """Run the server until interrupted."""
    if args.port > 65535:
        print(f"mtrain serve: --port must be 1..65535, got {args.port}", file=sys.stderr)
        return 2
    replays = Path(args.replays)
    if replays.exists() and not replays.is_dir():
        print(f"mtrain serve: --replays: {replays} is a file, not a directory", file=sys.stderr)
        return 2
    option, save_dir = (
        ("--save-dir", args.save_dir) if args.save_dir is not None else ("--replays", replays / "played")
    )
    problem = output_problem(save_dir, "directory")  # where played games go: known now, not at their end
    if problem is not None:
        print(f"mtrain serve: {option}: {problem}", file=sys.stderr)
        return 2
    try:
        import uvicorn

        from agents.web.app import create_app
    except ImportError as err:
        print(f'mtrain serve: needs the web extra (pip install "mtrain_env[web]"): {err}', file=sys.stderr)
        return 2
    sock, problem = listening_socket(args.host, args.port)  # bound before the URL is printed
    if sock is None:
        print(f"mtrain serve: {problem}", file=sys.stderr)
        return 2
    from agents.web.server import server_config

    hosts = [args.host, *args.allow_host]
    app = create_app(
        args.replays, args.save_dir, args.max_games, args.idle_seconds, hosts, args.max_client_games
    )
    if not is_loopback(sock):
        print(exposure_warning(args.host, hosts), file=sys.stderr)
    print(f"mtrain serve: http://{args.host}:{args.port}/  (replays: {args.replays}; Ctrl-C stops)")
    with sock:
        uvicorn.Server(server_config(app)).run(sockets=[sock])
    return 0


def is_loopback(sock: socket.socket) -> bool:
    """Whether ``sock`` listens on a loopback address only (this machine alone reaches it)."""
    address = sock.getsockname()[0]
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, hosts: list[str]) -> str:
    """The stderr warning of a server listening beyond loopback: who can reach it, what
    they can do and how the names it answers to are set."""
    return (
        f"mtrain serve: warning: listening on {host}, beyond this machine: anyone who can reach "
        "this port can list and read the replays and start games (each game's seat is kept "
        f"by its token); requests must name one of {sorted(set(hosts))} or a loopback name "
        "(--allow-host NAME adds one). Use --host 127.0.0.1 to serve this machine only."
    )


def listening_socket(host: str, port: int) -> tuple[socket.socket | None, str]:
    """A socket listening on ``host:port``, or ``None`` and the option at fault with why (a
    host that does not resolve or is not this machine's, a port in use): found before the
    server says it is up, and the socket handed to it, so nothing else can take the port."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as err:
        return None, f"--host: cannot listen on {host!r} ({err.strerror})"
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as err:
        sock.close()
        option = "--port" if err.errno in (errno.EADDRINUSE, errno.EACCES) else "--host"
        return None, f"{option}: cannot listen on {host}:{port} ({os_error_text(err)})"
    return sock, ""
