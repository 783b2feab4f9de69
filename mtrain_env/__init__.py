"""mtrain_env: Mexican Train as a PettingZoo AEC environment, on a pure rules core."""

from mtrain_env.env import env, raw_env

__all__ = ["env", "raw_env"]
__version__ = "0.1.0"
