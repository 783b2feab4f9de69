"""The compiled Mexican Train rules core (numba), beside the pure one.

Importing this subpackage imports numba (the ``fast`` extra); ``import mtrain_env`` does not.

* :mod:`.engine` — the rules as ``@njit(cache=True)`` functions on flat ``int64`` arrays:
  ``legal_moves_into``, ``apply``, ``is_round_over``, scoring, ``start_round`` /
  ``next_round``, and random play (``random_steps``) for benchmarks and search.
* :mod:`.game` — :class:`CompiledMexicanTrain`, the Python face: tables from a
  :class:`~mtrain_env.mexican_train.core.config.GameConfig`, deals made by the pure core's
  dealing code (the same seed gives the same deal; the engine itself draws no random
  numbers), and the exact converters ``to_compiled(pure_state)`` / ``to_pure(state)``.
* :mod:`.bench` — the compiled contenders of ``mtrain dev bench-speed`` (the core alone and
  the batched API, random legal play).
* :mod:`.backend` — the compiled core behind the AEC env (``raw_env(backend="compiled")``):
  the live state is the ``int64`` array, the hot path (mask, apply, observation) runs
  compiled, and everything rare goes through ``to_pure`` to the pure core's code.
* :mod:`.batch` — :class:`~.batch.BatchedMexicanTrain`, the batched API: ``B`` games stepped
  in one jitted call, observations (``engine.encode_into``, the Python encoder's exact
  vector) and relative masks (``engine.mask_into``) for every decision, rewards, SAME_STEP
  autoreset. Its Gymnasium and SB3 adapters live outside this subpackage
  (``mexican_train/batched.py``, ``training/batched_vec.py``): the core imports no framework.

Moves are the pure core's absolute encoding (``tile * (n + 1) + train``, then DRAW, PASS),
in the same order, so the two engines compare move for move (``tests/compiled/test_compiled_core.py``).

Design (what the backend, the batched API and the kernels build on):

* State = ONE ``int64`` vector of ``engine.STATE_SIZE`` entries with named fields at fixed
  offsets (``engine.S_*``), laid out for the largest game (17 seats, double-18, 19 rounds),
  so one layout and one compiled version serve every config. Unused entries hold canonical
  values, so equal games are equal arrays (cloning is ``s.copy()``, comparing is
  ``np.array_equal``, hashing is ``s.tobytes()``).
* Tiles are stored by location (pgx style: where is each piece): ``loc[tile]`` is the seat
  holding it, a train (with ``pos[tile]`` its place in the line), the station or the
  boneyard; the boneyard order is its own field. Per seat, ``hand_pips[seat, v]`` counts the
  tiles with a ``v`` half, so "can this seat match v" is one load; hand counts, train ends,
  train lengths, markers, voids and the pending-double lists are plain fields. Scores are
  float64 bit patterns in the same vector (shared pots of ``positive_scoring``).
* Static data = ONE ``int64`` tables vector (``engine.K_*``): sizes, resolved flags, tile
  halves, penalties, the match lists ``[v, k]`` and ``other_end[tile, v]`` (R7).
* Batching: a batch of B games is a ``(B, STATE_SIZE)`` C-contiguous array; ``states[b]`` is
  a contiguous row of the same type as a single state, so every engine function runs on it
  unchanged (a batched step is a jitted loop over rows). An observation encoder is a
  function ``(state, tables, seat, out)`` reading the fields above (everything the flat
  observation of :mod:`~mtrain_env.mexican_train.observation` needs is a field or a scan of
  ``loc``); neither needs a change of layout.
"""

from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain, build_tables, deal_arrays

__all__ = ["CompiledMexicanTrain", "build_tables", "deal_arrays"]
