"""Training (training/): the trainers and their CLI, runs, checkpoints and resume, self-play,
vectorised envs, Ray and RLlib.
"""
