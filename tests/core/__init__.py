"""The rules cores (mtrain_env/mexican_train/core, mtrain_env/block/core): scripted deals, rule
variants and flags, invariants, determinizers, properties and golden playthroughs.
"""
