"""mtrain_env: Mexican Train as a PettingZoo AEC environment, on a pure rules core.

``mtrain_env.env(**config)`` is the wrapped env (as PettingZoo classic envs are),
``mtrain_env.raw_env(**config)`` the bare one. Both are registered in PettingZoo's
registry (``pettingzoo.make("aec", "mexican_train_v0")``) where the installed PettingZoo
has one. The single-agent env (one learner seat against agents) is Gymnasium's
``gymnasium.make("mtrain_env/MexicanTrain-v0", opponents=[...], ...)``: it lives in the
agents layer and is registered by a string entry point, so this import loads no agent.
"""

from mtrain_env.block.env import env as block_dominoes_env
from mtrain_env.mexican_train.env import env, raw_env

__all__ = ["block_dominoes_env", "env", "raw_env"]
__version__ = "0.1.0"

#: registry ids -> entry points (also under the ``mtrain_env/`` namespace)
REGISTERED_ENVS: dict[str, str] = {
    "mexican_train_v0": "mtrain_env.mexican_train.env:env",
    "partnership_dominoes_v0": "mtrain_env.block.env:env",
}


def _register_with_pettingzoo() -> None:
    try:
        from pettingzoo import register
    except ImportError:  # PettingZoo < 1.26 has no registry
        return
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # re-imports re-register the same ids
        for env_id, entry_point in REGISTERED_ENVS.items():
            register("aec", env_id, entry_point=entry_point)
            register("aec", f"mtrain_env/{env_id}", entry_point=entry_point)


_register_with_pettingzoo()

#: Gymnasium ids -> entry points (imported by ``gymnasium.make``, never by ``import mtrain_env``)
GYMNASIUM_ENVS: dict[str, str] = {
    "mtrain_env/MexicanTrain-v0": "agents.mexican_train.single_agent:SingleAgentEnv",
}


def _register_with_gymnasium() -> None:
    import gymnasium

    for env_id, entry_point in GYMNASIUM_ENVS.items():
        if env_id not in gymnasium.registry:  # a re-import would log "Overriding environment"
            gymnasium.register(id=env_id, entry_point=entry_point)


_register_with_gymnasium()
