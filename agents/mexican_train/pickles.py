"""Reading a training run's pickled state: only what a checkpoint holds, under old names too.

Checkpoints hold pickled agents (the single-agent wrapper's opponents): a pickle names
each object's class by module path, and the modules moved when the layout became
``mtrain_env/{tilegame,mexican_train,block}`` and ``agents/mexican_train``. :func:`loads`
and :func:`load` map the old paths to the new ones, so a run checkpointed by an earlier
version resumes. They read only a run's own ``state.pkl`` (see :mod:`training.train`: the
trainer wrote it, and resume checks its sha256 first); nothing else is unpickled. (Policy
files are not pickles at all, and model archives name
``training.policy.GuardedMaskablePolicy``, which still exists.)

A pickle can name any function to call, so the sha256 is not the only guard: the
unpickler resolves only the globals a checkpoint holds (:data:`SAFE_GLOBALS`: containers,
numpy arrays, scalars and generators, a torch tensor, read with ``weights_only=True``),
the classes of this package's own modules and the agent classes of modules already
imported (a plugin opponent the run's configuration named); anything else
(``os.system``, ``builtins.eval``, a function of ours, a module not yet imported) is an
:class:`pickle.UnpicklingError` naming it.
"""

from __future__ import annotations

import _compat_pickle
import io
import pickle
import sys
from typing import IO, Any

from agents.base import BaseAgent

#: module paths of earlier versions -> where those modules live now
RENAMED_MODULES: dict[str, str] = {
    **{f"agents.{m}": f"agents.mexican_train.{m}" for m in ("greedy", "planner", "chains", "mc", "features")},
    "agents.ppo": "agents.mexican_train.ppo",
    "agents.random_agent": "agents.mexican_train.random_agent",
    "agents.base": "agents.mexican_train.base",  # Agent and Decision (the generic part stayed)
    "mtrain_env.core.tiles": "mtrain_env.tilegame.tiles",
    **{
        f"mtrain_env.core.{m}": f"mtrain_env.mexican_train.core.{m}"
        for m in ("config", "dealing", "public", "rules", "scoring", "serialize", "state")
    },
    "mtrain_env.env": "mtrain_env.mexican_train.env",
    "training.league": "agents.mexican_train.league",  # the pool moved down with the single-agent env
}
#: classes renamed within their module: (old module, old name) -> new name
RENAMED_CLASSES: dict[tuple[str, str], str] = {("mtrain_env.core.public", "PublicState"): "PublicView"}


_NUMPY_CORE = ("numpy.core.multiarray", "numpy._core.multiarray")  # numpy 1 and 2
_RANDOM_CTORS = ("__generator_ctor", "__bit_generator_ctor", "__randomstate_ctor")
_DTYPES = ("Float64DType", "Float32DType", "Int64DType", "Int32DType", "UInt8DType", "BoolDType")
#: the globals other than this package's classes that a checkpoint's state may name
SAFE_GLOBALS: frozenset[tuple[str, str]] = frozenset(
    {
        *(("builtins", n) for n in ("set", "frozenset", "complex", "slice", "range", "bytearray", "object")),
        ("collections", "OrderedDict"),
        ("collections", "deque"),
        ("copyreg", "_reconstructor"),
        ("_codecs", "encode"),  # bytes in protocols 0-2
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        *((m, n) for m in _NUMPY_CORE for n in ("_reconstruct", "scalar")),
        *(("numpy.dtypes", n) for n in _DTYPES),
        *(("numpy.random._pickle", n) for n in _RANDOM_CTORS),
        ("numpy.random._pcg64", "PCG64"),
        ("numpy.random._mt19937", "MT19937"),
        ("numpy.random.bit_generator", "SeedSequence"),
        ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
        ("torch._utils", "_rebuild_tensor_v2"),  # the trainer's torch generator state (a uint8 tensor)
        ("torch.storage", "_load_from_bytes"),  # replaced by a weights_only read: see find_class
    }
)
#: the packages whose classes (not functions) a checkpoint may name: its agents, league specs
OWN_PACKAGES = ("agents.", "mtrain_env.", "training.")


def _load_storage(data: bytes) -> Any:
    """A pickled torch storage, read by torch's ``weights_only`` loader (which names no code)."""
    import torch

    return torch.load(io.BytesIO(data), weights_only=True)


class _CheckpointUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        # Python 2 names of protocols 0-2 (copy_reg, __builtin__), as pickle itself maps them
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if module == "agents.base" and name in ("BaseAgent", "SeatDecision"):
            return self._own_class(module, name)
        new_name = RENAMED_CLASSES.get((module, name), name)
        module = RENAMED_MODULES.get(module, module)
        if (module, new_name) == ("torch.storage", "_load_from_bytes"):
            return _load_storage
        if (module, new_name) in SAFE_GLOBALS:
            return super().find_class(module, new_name)
        return self._own_class(module, new_name)

    def _own_class(self, module: str, name: str) -> Any:
        """A class of this package, or an agent class of a module the run already imported
        (a plugin opponent, ``module:Class``); never a function, never a new import elsewhere."""
        refused = pickle.UnpicklingError(f"the state names {module}.{name}, which a checkpoint never holds")
        if "." in name:
            raise refused
        if module.startswith(OWN_PACKAGES):
            try:
                __import__(module)
            except ImportError:
                raise refused from None
        elif module not in sys.modules:  # importing it would run its code
            raise refused
        found = getattr(sys.modules[module], name, None)
        if not isinstance(found, type):
            raise refused  # a function or an object
        if found.__module__.startswith(OWN_PACKAGES) or issubclass(found, BaseAgent):
            return found
        raise refused  # a class imported from elsewhere


def load(file: IO[bytes]) -> Any:
    """``pickle.load`` of a checkpoint's state: old module paths mapped, only
    :data:`SAFE_GLOBALS` and this package's classes resolved (else ``UnpicklingError``)."""
    return _CheckpointUnpickler(file).load()


def loads(data: bytes) -> Any:
    """:func:`load` of bytes (the opponents pickled inside an env's state)."""
    return load(io.BytesIO(data))
