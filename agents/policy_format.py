"""The container every policy file is, and the checks it goes through (torch-free).

Both policy-file formats (:mod:`agents.policy_net`'s SB3-shaped MLPs and
:mod:`agents.mexican_train.selfplay_file`'s self-play networks) are a zip archive of a
``policy.json`` naming the format and its version (:func:`check_format`) and one
little-endian float32 ``<parameter>.npy`` per tensor, every member dated 1980-01-01 so that
the same weights give the same bytes, written to a temporary file and then renamed
(:func:`write_npy_zip`; the formats differ in compression only). Reading is shared too:
:func:`read_json_member` (the size checked before anything is decompressed),
:func:`read_npy_members` (the member set, then :func:`read_checked_npy` per member: its
header checked before any byte of data is read). Each failure is a ``ValueError`` naming
the member; each format adds its own spec checks and error class. Nothing here imports a
learning framework, so reading a self-play policy needs numpy only.

Both formats record the **observation version** of their network's input
(``observation_version``: the env's observation layout version, or a feature set's own
version) from their format version 2 on. :func:`observation_version_of` reads it and
states the rule for the files written before the field existed (format version 1: every
one of them was trained on observation version 1, the only layout there was), and
:func:`check_observation_version` refuses a network of another version, before any of its
sizes are compared, with both versions named.
"""

from __future__ import annotations

import io
import math
import os
import re
import zipfile
import zlib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from mtrain_env.mexican_train.observation import OBSERVATION_VERSION
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.files import atomic_path

__all__ = [
    "HEADER_MEMBER",
    "MAX_HEADER_BYTES",
    "MAX_MEMBERS",
    "check_format",
    "check_member_names",
    "check_observation_version",
    "observation_version_of",
    "read_checked_npy",
    "read_json_member",
    "read_member",
    "read_npy_members",
    "weights_only_refusal",
    "write_npy_zip",
]

_FLOAT32 = np.dtype("<f4")
#: the member naming the format, its version and the architecture
HEADER_MEMBER = "policy.json"
#: the largest ``policy.json`` read (a few kB in practice), refused before decompressing
MAX_HEADER_BYTES = 1 << 20
#: what reading a member of a damaged archive raises
_DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError)


def _zip_info(name: str, compression: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # the same bytes for the same weights
    info.compress_type = compression
    info.external_attr = 0o644 << 16
    return info


def write_npy_zip(
    path: str | os.PathLike[str], header_text: str, arrays: Mapping[str, np.ndarray], compression: int
) -> Path:
    """Write ``header_text`` as ``policy.json`` and each of ``arrays`` as a little-endian
    float32 ``<name>.npy`` (in their order), members compressed with ``compression``
    (``zipfile.ZIP_STORED`` or ``ZIP_DEFLATED``), atomically
    (:func:`~mtrain_env.tilegame.files.atomic_path`); ``path``."""
    target = Path(path)
    with atomic_path(target) as tmp, zipfile.ZipFile(tmp, "w") as zf:
        zf.writestr(_zip_info(HEADER_MEMBER, compression), header_text)
        for name, array in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(array, dtype=_FLOAT32), allow_pickle=False)
            zf.writestr(_zip_info(f"{name}.npy", compression), buf.getvalue())
    return target


#: the most members an archive read as a policy may hold (an SB3 model archive has 6)
MAX_MEMBERS = 64


def check_member_names(zf: zipfile.ZipFile) -> None:
    """``ValueError`` for an archive no writer of policies makes: more than
    :data:`MAX_MEMBERS` members, or a member name that is absolute, climbs out of its folder
    (``..``), names a drive or holds a backslash or a control character. Such an archive is
    refused whole, read or not, so that nothing unpacking it later writes outside its folder."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise ValueError(f"{len(infos)} members, more than the {MAX_MEMBERS} a policy archive holds")
    for info in infos:
        name = info.filename
        parts = name.split("/")
        if (
            not name
            or name.startswith("/")
            or "\\" in name
            or ".." in parts
            or re.match(r"[A-Za-z]:", name)
            or any(ord(c) < 32 for c in name)
        ):
            raise ValueError(f"member name {name!r} is not a plain relative path")


def read_member(zf: zipfile.ZipFile, name: str, limit: int) -> bytes:
    """The bytes of member ``name``, at most ``limit`` (its declared size checked before
    decompressing, its CRC checked); ``ValueError`` ``<name>: <what is wrong>``."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ValueError(f"{name}: missing") from None
    if info.file_size > limit:
        raise ValueError(f"{name}: {info.file_size} bytes, more than the {limit} expected")
    try:
        with zf.open(info) as f:
            data = f.read(limit + 1)
    except _DAMAGED as err:
        raise ValueError(f"{name}: damaged ({err})") from None
    if len(data) > limit:
        raise ValueError(f"{name}: more than the {limit} bytes expected")
    return data


def read_json_member(zf: zipfile.ZipFile, name: str = HEADER_MEMBER, limit: int = MAX_HEADER_BYTES) -> Any:
    """The JSON of member ``name`` (:func:`read_member`); ``ValueError`` ``<name>: ...``."""
    raw = read_member(zf, name, limit)
    try:
        return json_text.loads(raw.decode("utf-8"))
    except ValueError as err:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ValueError(f"{name}: not JSON ({err})") from None


def read_npy_members(zf: zipfile.ZipFile, shapes: Mapping[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """Name -> float32 array of each of ``shapes`` from ``<name>.npy``, after checking that
    the archive holds those members and ``policy.json`` only; ``ValueError`` naming the
    member and what is wrong (:func:`read_checked_npy`: nothing huge is allocated)."""
    unexpected = sorted(set(zf.namelist()) - {HEADER_MEMBER} - {f"{k}.npy" for k in shapes})
    if unexpected:
        more = f" and {len(unexpected) - 3} more" if len(unexpected) > 3 else ""
        raise ValueError(f"unexpected members {unexpected[:3]}{more} (not parameters of {HEADER_MEMBER})")
    arrays = {}
    for name, shape in shapes.items():
        member = f"{name}.npy"
        if member not in zf.NameToInfo:
            raise ValueError(f"{member}: missing")
        try:
            with zf.open(member) as f:
                arrays[name] = read_checked_npy(f, shape)
        except _DAMAGED as err:
            raise ValueError(f"{member}: damaged ({err})") from None
        except ValueError as err:
            raise ValueError(f"{member}: {err}") from None
    return arrays


def check_format(data: Any, name: str, version: int | Collection[int]) -> None:
    """A policy file's JSON header is an object of format ``name`` at ``version`` (or one of
    several versions); ``ValueError`` saying what is not."""
    if not isinstance(data, dict):
        raise ValueError(f"must be a JSON object, got {type(data).__name__}")
    if data.get("format") != name:
        raise ValueError(f"format must be {name!r}, got {data.get('format')!r}")
    versions = (version,) if isinstance(version, int) else tuple(version)
    found = data.get("version")
    if type(found) is not int or found not in versions:  # not True, not 1.0
        raise ValueError(f"format version {found!r}; this version reads {', '.join(map(str, versions))}")


#: the format version from which a header carries ``observation_version`` (both formats)
FIRST_VERSION_WITH_OBSERVATION = 2
#: the observation version of a file written before the field existed (format version 1):
#: its network read the only layout there was, observation version 1
PRE_FIELD_OBSERVATION_VERSION = 1


def observation_version_of(data: Mapping[str, Any]) -> int:
    """The ``observation_version`` of a header already passed by :func:`check_format`: the
    field from format version 2 on (an int ``>= 1``, else ``ValueError``), and
    :data:`PRE_FIELD_OBSERVATION_VERSION` for a format-version-1 file, which has no such field."""
    if data["version"] < FIRST_VERSION_WITH_OBSERVATION:
        if "observation_version" in data:
            raise ValueError(f"observation_version: not a key of format version {data['version']}")
        return PRE_FIELD_OBSERVATION_VERSION
    if "observation_version" not in data:
        raise ValueError("missing key observation_version (the version of the observation it was trained on)")
    found = data["observation_version"]
    if type(found) is not int or found < 1:
        raise ValueError(f"observation_version must be an int >= 1, got {found!r}")
    return found


def check_observation_version(found: int, expected: int, what: str = "observation") -> None:
    """``ValueError`` unless a network trained on ``what`` version ``found`` reads the
    ``expected`` one (what this env writes); checked before any size, so that a network of
    another layout is refused for its layout, not for the sizes that follow from it."""
    if found != expected:
        raise ValueError(
            f"trained on {what} version {found}; this env writes version {expected} -- retrain it on "
            f"version {expected}, or play it in an env made with observation_version={found}"
        )


def read_checked_npy(
    f: IO[bytes], shape: tuple[int | None, ...], dtype: np.dtype[Any] = _FLOAT32, max_elements: int = 1 << 26
) -> np.ndarray:
    """An array of ``dtype`` and ``shape`` (``None``: any length there, at most
    ``max_elements`` in all) from an ``.npy`` stream. Its header is checked before its data
    is read, so a file declaring a huge array allocates nothing and no pickled object array
    is ever read; a float array must be finite. ``ValueError`` saying what is wrong."""
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        found, fortran, found_dtype = np.lib.format.read_array_header_1_0(f)
    elif version == (2, 0):
        found, fortran, found_dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise ValueError(f".npy format version {version} (1.0 or 2.0 expected)")
    if found_dtype != dtype:
        raise ValueError(
            f"dtype {found_dtype} ({'little-endian ' if dtype.itemsize > 1 else ''}{dtype.name} expected)"
        )
    found = tuple(found)
    if len(found) != len(shape) or any(
        want is not None and n != want for n, want in zip(found, shape, strict=False)
    ):
        raise ValueError(f"shape {found}, the architecture says {_shape_text(shape)}")
    if math.prod(found) > max_elements:
        raise ValueError(f"shape {found}: more than {max_elements} values")
    nbytes = math.prod(found) * dtype.itemsize
    data = f.read(nbytes)
    if len(data) != nbytes:
        raise ValueError(f"{len(data)} data bytes, {nbytes} expected")
    if f.read(1):
        raise ValueError(f"bytes after the {nbytes} data bytes of shape {found}")
    array = np.frombuffer(data, dtype=dtype).reshape(found, order="F" if fortran else "C")
    if dtype.kind == "f" and not np.isfinite(array).all():
        raise ValueError("non-finite values")
    return np.array(array, order="C")


def _shape_text(shape: tuple[int | None, ...]) -> str:
    return (
        "("
        + ", ".join("any" if n is None else str(n) for n in shape)
        + ("," if len(shape) == 1 else "")
        + ")"
    )


def weights_only_refusal(err: Exception, holder: str = "a policy") -> str:
    """One line of why ``torch.load(weights_only=True)`` refused a file (its message runs
    to a page): the global it names or the type it builds, which ``holder`` never holds,
    else the unpickler's own reason (``Unsupported operand 103``: not a pickle)."""
    text = str(err)
    named = re.search(r"GLOBAL (\S+) (?:was not an allowed global|whose module)", text)
    if named:
        return f"it names {named.group(1)}, which {holder} never holds"
    built = re.search(r"Can only build .*?, but got (.+)", text)
    if built:
        return f"it builds {built.group(1).strip()}, which {holder} never holds"
    unpickler = re.search(r"WeightsUnpickler error:\s*(.+)", text)
    if unpickler:
        return unpickler.group(1).strip()[:200]
    lines = [line.strip() for line in text.splitlines() if line.strip() and "documentation" not in line]
    if lines:
        return lines[0][:200]
    return "empty or cut short" if isinstance(err, EOFError) else type(err).__name__


# ---------------------------------------------------------------- input versions
FEATURE_SETS: tuple[str, ...] = ("env", "planner")
#: observation version of the env vector -> the ``"planner"`` feature version built on it
#: (1: observation version 1, then ``planner_choice`` and ``chain``)
PLANNER_VERSIONS: dict[int, int] = {1: 1}


def input_version(name: str, observation_version: int = OBSERVATION_VERSION) -> int:
    """The version of feature set ``name``'s input in an env writing ``observation_version``
    (what a policy file of that set records); ``ValueError`` if the set is not defined there."""
    check_feature_set(name)
    if name == "env":
        return observation_version
    if observation_version not in PLANNER_VERSIONS:
        built_on = ", ".join(map(str, PLANNER_VERSIONS))
        raise ValueError(
            f"the planner features extend observation version {built_on}; "
            f"this env writes version {observation_version}"
        )
    return PLANNER_VERSIONS[observation_version]


def input_label(name: str) -> str:
    """What the version of feature set ``name`` counts, for messages."""
    return "observation" if name == "env" else f"{name!r} features"


def check_feature_set(name: str) -> None:
    """``ValueError`` naming the known sets unless ``name`` is one of :data:`FEATURE_SETS`."""
    if name not in FEATURE_SETS:
        raise ValueError(f"features must be one of {FEATURE_SETS}, got {name!r}")
