"""The pure partnership block-dominoes rules core: config, state, rules, dealing, scoring, snapshots.

It imports no framework (no PettingZoo, Gymnasium or torch; the import-linter contract in
``pyproject.toml`` keeps it so). Rules B1-B13: :mod:`mtrain_env.block.core.rules`.
"""
