"""Ray RLlib training of Mexican Train (the new API stack: RLModule, Learner, EnvRunner).

* :mod:`training.rllib.env`: the turn-based ``MultiAgentEnv`` adapter of the AEC env;
* :mod:`training.rllib.module`: the action-masking RLModule, exported as a policy file;
* :mod:`training.rllib.league`: shared-policy self-play and the league (frozen snapshots);
* :mod:`training.rllib.train`: the run (curve by the tournament harness, checkpoints,
  resume, TensorBoard), behind ``mtrain train --backend rllib``.

Ray is imported only here and in :mod:`agents.tournament.ray_backend` (the ``ray``
import-linter contract); importing this package itself imports nothing of Ray.
"""
