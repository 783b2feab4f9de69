"""The pure Mexican Train rules core: config, state, rules, dealing, scoring, public view, snapshots.

It imports no framework (no PettingZoo, Gymnasium or torch; the import-linter contract in
``pyproject.toml`` keeps it so): the AEC env (:mod:`mtrain_env.mexican_train.env`), the
agents and the training code are adapters around it. Rule ids are those of RULES.md.
"""
