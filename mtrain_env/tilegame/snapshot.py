"""Readers for JSON state dicts shared by every game: exact types, ranges, naming key and rule.

A snapshot is plain JSON, so every value has one exact type: ``int`` (never ``bool`` or a
numpy integer), ``float``, ``bool``, ``str``, ``list``, ``dict`` or ``None``. The readers
accept exactly those, so a loaded snapshot writes itself back unchanged, types included.

Every error names the key (dotted and indexed: ``'turn.tiles'``, ``'hands[2]'``) and the
rule it breaks, in one format: ``state dict 'KEY': RULE: what is wrong``. A wrong type is a
``TypeError``; a missing key, an unknown key or a value out of range is a ``ValueError``.
"""

from __future__ import annotations

import math
from typing import Any

from mtrain_env.tilegame.tiles import TileSet

__all__ = [
    "bad_type",
    "bad_value",
    "check_json",
    "check_keys",
    "is_exact",
    "json_equal",
    "read_finite",
    "read_pips",
    "read_rng_state",
    "read_tile",
    "read_tile_set",
    "req",
    "req_bools",
    "req_int",
]

#: the only bit generator ``numpy.random.default_rng`` uses (and so the only one a snapshot holds)
RNG_BIT_GENERATOR = "PCG64"


def bad_value(key: str, rule: str, message: str) -> ValueError:
    """The ``ValueError`` of a snapshot value that breaks ``rule``."""
    return ValueError(f"state dict {key!r}: {rule}: {message}")


def bad_type(key: str, rule: str, message: str) -> TypeError:
    """The ``TypeError`` of a snapshot value of the wrong type."""
    return TypeError(f"state dict {key!r}: {rule}: {message}")


def _type_name(value: Any) -> str:
    return type(value).__name__


def is_exact(value: Any, kind: type) -> bool:
    """``type(value) is kind``: no ``bool`` for ``int``, no subclasses, no numpy scalars."""
    return type(value) is kind


def check_keys(d: dict[str, Any], expected: tuple[str, ...], key: str, rule: str) -> None:
    """``d`` holds exactly the keys ``expected`` (a missing one or an unknown one is refused)."""
    missing = [k for k in expected if k not in d]
    if missing:
        raise bad_value(f"{key}{missing[0]}", rule, "missing")
    unknown = sorted(str(k) for k in d if k not in expected)
    if unknown:
        raise bad_value(f"{key}{unknown[0]}", rule, f"unknown key (expected only {list(expected)})")


def req(d: dict[str, Any], key: str, kind: type, rule: str, prefix: str = "") -> Any:
    """``d[key]``, which must exist and be exactly of type ``kind``."""
    name = prefix + key
    if key not in d:
        raise bad_value(name, rule, "missing")
    value = d[key]
    if not is_exact(value, kind):
        raise bad_type(name, rule, f"must be {kind.__name__}, got {_type_name(value)} {value!r}")
    return value


def req_int(d: dict[str, Any], key: str, lo: int, hi: int, rule: str, prefix: str = "") -> int:
    """``d[key]`` as an int in ``lo .. hi``."""
    value: int = req(d, key, int, rule, prefix)
    if not lo <= value <= hi:
        raise bad_value(prefix + key, rule, f"must be in {lo}..{hi}, got {value}")
    return value


def req_bools(d: dict[str, Any], key: str, length: int, rule: str, prefix: str = "") -> list[bool]:
    """``d[key]`` as a list of ``length`` bools."""
    value: list[Any] = req(d, key, list, rule, prefix)
    if len(value) != length:
        raise bad_value(prefix + key, rule, f"must hold {length} bools, got {len(value)}")
    for i, x in enumerate(value):
        if not is_exact(x, bool):
            raise bad_type(f"{prefix}{key}[{i}]", rule, f"must be bool, got {_type_name(x)} {x!r}")
    return list(value)


def read_tile(tiles: TileSet, value: Any, key: str, rule: str) -> tuple[int, int, int]:
    """``[a, b]`` (two ints, either order) as ``(tile id, a, b)``; the tile must be in the set."""
    if not is_exact(value, list) or len(value) != 2:
        raise bad_type(key, rule, f"a tile is a list [a, b], got {value!r}")
    a, b = value
    if not (is_exact(a, int) and is_exact(b, int)):
        raise bad_type(key, rule, f"tile halves must be ints, got {value!r}")
    if not (0 <= a <= tiles.max_pips and 0 <= b <= tiles.max_pips):
        raise bad_value(key, "R1", f"{value} is not a tile of the double-{tiles.max_pips} set")
    return tiles.tile_id(a, b), a, b


def read_tile_set(
    tiles: TileSet,
    value: Any,
    key: str,
    rule: str,
    twice_rule: str,
    *,
    list_rule: str | None = None,
    expected: str = "must be a list of [a, b] tiles",
) -> int:
    """A list of tiles (any order, either orientation) as a bitmask of tile ids; each tile once.

    A value that is not a list breaks ``list_rule`` (default ``rule``; the message is
    ``expected`` and the type found), a tile :func:`read_tile`'s ``rule``, a tile listed
    twice ``twice_rule``: a hand, a set of sleeping tiles, the tiles a seat laid.
    """
    if not is_exact(value, list):
        raise bad_type(key, rule if list_rule is None else list_rule, f"{expected}, got {_type_name(value)}")
    mask = 0
    for k, tile in enumerate(value):
        i, _, _ = read_tile(tiles, tile, f"{key}[{k}]", rule)
        if mask >> i & 1:
            raise bad_value(f"{key}[{k}]", twice_rule, f"{tile} is listed twice")
        mask |= 1 << i
    return mask


def read_pips(value: Any, max_pips: int, key: str, rule: str) -> int:
    """A list of distinct pip values ``0 .. max_pips`` as a pip bitmask."""
    if not is_exact(value, list):
        raise bad_type(key, rule, f"must be a list of pip values, got {_type_name(value)}")
    mask = 0
    for v in value:
        if not is_exact(v, int):
            raise bad_type(key, rule, f"pip values are ints, got {v!r}")
        if not 0 <= v <= max_pips:
            raise bad_value(key, rule, f"{v} is not a pip value 0..{max_pips}")
        if mask >> v & 1:
            raise bad_value(key, rule, f"pip {v} is listed twice")
        mask |= 1 << v
    return mask


def read_finite(value: Any, kind: type, key: str, rule: str) -> Any:
    """A number of exactly type ``kind`` (``int`` or ``float``) that is finite."""
    if not is_exact(value, kind):
        raise bad_type(key, rule, f"must be {kind.__name__}, got {_type_name(value)} {value!r}")
    if kind is float and not math.isfinite(value):
        raise bad_value(key, rule, f"must be a finite number, got {value!r}")
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values with exact types at every depth (``1 != 1.0 != True``).

    Objects compare by value: JSON objects are unordered, so two dicts with the same keys
    and values are equal whatever order their keys come in; lists keep their order.
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def check_json(value: Any, key: str, rule: str) -> None:
    """``value`` is plain JSON: dicts with str keys, lists, str, int, finite float, bool, None."""
    if value is None or type(value) in (str, int, bool):
        return
    if type(value) is float:
        if not math.isfinite(value):
            raise bad_value(key, rule, f"must be a finite number, got {value!r}")
        return
    if type(value) is list:
        for i, x in enumerate(value):
            check_json(x, f"{key}[{i}]", rule)
        return
    if type(value) is dict:
        for k, x in value.items():
            if type(k) is not str:
                raise bad_type(key, rule, f"JSON keys are strings, got {k!r}")
            check_json(x, f"{key}.{k}", rule)
        return
    raise bad_type(key, rule, f"not a JSON value: {_type_name(value)} {value!r}")


def read_rng_state(value: Any, key: str, rule: str) -> dict[str, Any]:
    """A ``PCG64`` bit-generator state as ``numpy`` writes it, every integer in its range.

    ``{"bit_generator": "PCG64", "state": {"state": s, "inc": i}, "has_uint32": h,
    "uinteger": u}`` with ``0 <= s, i < 2**128``, ``i`` odd (PCG64's stream increment),
    ``h`` 0 or 1, ``0 <= u < 2**32``. Checked here so that numpy never sees a value it
    would refuse with an error that names no key.
    """
    try:
        return _read_pcg64(value, key, rule)
    except TypeError as err:
        raise TypeError(f"{err} (not a numpy {RNG_BIT_GENERATOR} bit-generator state)") from None
    except ValueError as err:
        raise ValueError(f"{err} (not a numpy {RNG_BIT_GENERATOR} bit-generator state)") from None


def _read_pcg64(value: Any, key: str, rule: str) -> dict[str, Any]:
    if not is_exact(value, dict):
        raise bad_type(key, rule, f"must be a dict, got {_type_name(value)}")
    check_keys(value, ("bit_generator", "state", "has_uint32", "uinteger"), f"{key}.", rule)
    name = req(value, "bit_generator", str, rule, f"{key}.")
    if name != RNG_BIT_GENERATOR:
        raise bad_value(f"{key}.bit_generator", rule, f"must be {RNG_BIT_GENERATOR!r}, got {name!r}")
    inner = req(value, "state", dict, rule, f"{key}.")
    check_keys(inner, ("state", "inc"), f"{key}.state.", rule)
    req_int(inner, "state", 0, 2**128 - 1, rule, f"{key}.state.")
    inc = req_int(inner, "inc", 0, 2**128 - 1, rule, f"{key}.state.")
    if not inc & 1:
        raise bad_value(f"{key}.state.inc", rule, f"a PCG64 increment is odd, got {inc}")
    req_int(value, "has_uint32", 0, 1, rule, f"{key}.")
    req_int(value, "uinteger", 0, 2**32 - 1, rule, f"{key}.")
    return value
