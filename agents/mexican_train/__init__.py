"""Mexican Train agents: random, greedy, planner (chain keeping), mc (determinized search), ppo,
openspiel_ismcts (OpenSpiel's ISMCTS; the ``openspiel`` extra).

Each sees only a leak-free :class:`~agents.mexican_train.base.Decision`; build them by
name with :func:`agents.make_agent`.
"""
