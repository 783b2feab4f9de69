"""The agents (agents/): baselines, search, the play loop, specs and the registry, policy files and
pickles, custom agents, features and networks.
"""
