"""What every tile game of the package shares, and nothing game-specific.

Pure pieces (no framework import): :mod:`~mtrain_env.tilegame.tiles` (double-N sets,
tile ids, bitmasks), :mod:`~mtrain_env.tilegame.validate` (config keyword checks),
:mod:`~mtrain_env.tilegame.deal` (seeded shuffles, tiles from JSON),
:mod:`~mtrain_env.tilegame.snapshot` (typed readers of JSON snapshots, the RNG as JSON),
:mod:`~mtrain_env.tilegame.layout` (named views over one flat observation vector),
:mod:`~mtrain_env.tilegame.files` (atomic file writes).

Adapter pieces (PettingZoo / Gymnasium): :mod:`~mtrain_env.tilegame.aec` (the AEC env
shared by every game, :class:`~mtrain_env.tilegame.aec.TileGameEnv`) and
:mod:`~mtrain_env.tilegame.wrappers` (the classic wrappers, on PettingZoo's public API).

This package imports no game: games import it.
"""
