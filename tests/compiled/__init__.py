"""The compiled engine (mtrain_env/mexican_train/compiled) and the batched API against the pure
reference: backends, batches, kernels, rollouts, the batched planner.
"""
