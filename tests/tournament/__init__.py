"""The tournament harness (agents/tournament): seating, results, statistics, paired runs,
evaluation, replays of a tournament.
"""
