"""Named views over one flat float32 vector (the OpenSpiel observer idea), game-agnostic.

A :class:`FlatLayout` is built from 0/1 views (listed first) and real-valued views (listed
last). Encoders OR the 0/1 features into one Python int at their bit offsets and call
:func:`fill` once: a single bit-unpacking call writes every 0/1 view, one list the rest.
Used by every game of this package (Mexican Train, partnership block dominoes).

Every layout carries a **version** (an int, published as ``layout.version`` and the env's
``observation_version``): one version number names one set of views, in one order, with
one shape rule and one meaning each (for every game config). A network trained on a
vector learns those positions, so its policy file records the version and is refused by
an env writing another one. Bump it whenever a view is added, removed, reordered,
reshaped or changes meaning (another scale, another encoding); a change that leaves every
vector the same (a faster encoder, a better doc string) keeps it. Each game documents
its versions beside its layout.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Sequence
from operator import itemgetter
from typing import NamedTuple

import numpy as np

#: byte value -> the little-endian float32 bytes of its 8 bits (bit 0 first): the 0/1
#: views are written with one table lookup per 8 features, no numpy call per view
_FLOATS_OF_BYTE: list[bytes] = [struct.pack("<8f", *[(v >> i) & 1 for i in range(8)]) for v in range(256)]
#: little-endian float32; the scalar type where that is native (numpy takes a type faster
#: than a dtype instance, and this runs once per observation)
_F32_LE: type[np.float32] | np.dtype[np.float32] = (
    np.float32 if sys.byteorder == "little" else np.dtype("<f4")
)
#: joins straight into a bytearray (np.frombuffer of it is writable), no extra copy
_join_bytearray = bytearray().join


class View(NamedTuple):
    """Where one named part lives in the flat vector: ``obs[slice].reshape(shape)``."""

    slice: slice
    shape: tuple[int, ...]


class FlatLayout:
    """Names, offsets, shapes, bounds and docs of a flat observation vector.

    Args:
        binary: ``(name, shape, doc)`` of the 0/1 views, in order.
        real: ``(name, shape, high, doc)`` of the real-valued views (low is 0), in order.
        version: the layout's version (see the module docstring), an int ``>= 1``.
    """

    def __init__(
        self,
        binary: Sequence[tuple[str, tuple[int, ...], str]],
        real: Sequence[tuple[str, tuple[int, ...], float, str]],
        *,
        version: int,
    ) -> None:
        if type(version) is not int or version < 1:  # not True, not 1.0
            raise ValueError(f"version must be an int >= 1, got {version!r}")
        #: the layout's version: which views, in which order, shapes and meaning
        self.version = version
        specs = [(name, shape, 1.0, doc) for name, shape, doc in binary] + list(real)
        self.views: dict[str, View] = {}
        self.docs: dict[str, str] = {}
        self.size = sum(int(np.prod(shape)) for _, shape, _, _ in specs)
        self.high = np.empty(self.size, dtype=np.float32)
        offset = 0
        for name, shape, high, doc in specs:
            if name in self.views:
                raise ValueError(f"duplicate view name {name!r}")
            size = int(np.prod(shape))
            self.views[name] = View(slice(offset, offset + size), tuple(shape))
            self.docs[name] = doc
            self.high[offset : offset + size] = high
            offset += size
        self.binary_size = sum(int(np.prod(shape)) for _, shape, _ in binary)
        self._nbytes = (self.binary_size + 7) // 8
        self._pack_real = struct.Struct(f"<{self.size - self.binary_size}f").pack
        self._binary_float_bytes = 4 * self.binary_size

    def __getitem__(self, name: str) -> View:
        return self.views[name]

    def __contains__(self, name: object) -> bool:
        return name in self.views

    def offset(self, name: str) -> int:
        """First index (for 0/1 views: first bit) of a view."""
        return self.views[name].slice.start

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """The vector (or a batch of them) as a dict of named, reshaped views (no copy)."""
        lead = obs.shape[:-1]
        return {name: obs[..., v.slice].reshape(lead + v.shape) for name, v in self.views.items()}

    def as_table(self) -> list[tuple[str, int, int, tuple[int, ...], str]]:
        """``(name, start, stop, shape, doc)`` rows, for docs and the README."""
        return [(k, v.slice.start, v.slice.stop, v.shape, self.docs[k]) for k, v in self.views.items()]

    def fill(self, bits: int, real: Sequence[float]) -> np.ndarray:
        """A new float32 vector: bit ``i`` of ``bits`` -> element ``i`` (0/1 views), then ``real``.

        Built as bytes (one table lookup per 8 bits, one ``struct`` pack for the reals) and
        wrapped by a single ``np.frombuffer``: numpy's per-call cost, not arithmetic,
        dominates vectors this small. The result is writable and owns a fresh buffer.
        """
        packed = bits.to_bytes(self._nbytes, "little")
        if len(packed) > 1:  # itemgetter: every byte's floats in one C call
            out = _join_bytearray(itemgetter(*packed)(_FLOATS_OF_BYTE))
        else:
            out = bytearray(_FLOATS_OF_BYTE[packed[0]] if packed else b"")
        del out[self._binary_float_bytes :]  # the last byte's padding bits, if any
        out += self._pack_real(*real)
        return np.frombuffer(out, _F32_LE)
