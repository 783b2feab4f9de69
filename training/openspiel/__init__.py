"""OpenSpiel's algorithms on the package's OpenSpiel games (the ``openspiel`` and ``train`` extras).

:mod:`training.openspiel.example`: MCTS on determinizations and NFSP on 2-player double-6
Mexican Train, each measured against a uniform random player
(``python -m training.openspiel.example``).
"""
