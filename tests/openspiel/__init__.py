"""The OpenSpiel games (mtrain_env/openspiel) against the envs and OpenSpiel's own."""
