"""Replays (mtrain_env/replay*), the terminal game (agents/terminal.py) and the web table
(agents/web).
"""
