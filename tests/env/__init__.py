"""The envs as the frameworks see them (AEC, wrappers, Gymnasium, the PettingZoo suite): codec,
observation, hidden information, bad input, snapshots, rendering, determinism.
"""
