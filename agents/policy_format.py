"""The checks every policy file's JSON header goes through (numpy-free, torch-free).

Both policy-file formats (:mod:`agents.policy_net`'s SB3-shaped MLPs and
:mod:`agents.mexican_train.selfplay_file`'s self-play networks) start with a
``policy.json`` naming the format and its version; this module checks that header,
without importing any learning framework, so reading a self-play policy needs numpy only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check_format"]


def check_format(data: Any, name: str, version: int) -> None:
    """A policy file's JSON header is an object of format ``name`` at ``version``;
    ``ValueError`` saying what is not."""
    if not isinstance(data, dict):
        raise ValueError(f"must be a JSON object, got {type(data).__name__}")
    if data.get("format") != name:
        raise ValueError(f"format must be {name!r}, got {data.get('format')!r}")
    if data.get("version") != version:
        raise ValueError(f"format version {data.get('version')!r}; this version reads {version}")
