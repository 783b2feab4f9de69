"""What both games share (mtrain_env/tilegame): atomic files, JSON text, validation, the flat
observation layout.
"""
