"""The README, the guide and what they promise: doc commands, notebooks, install, layers, this
layout.
"""
