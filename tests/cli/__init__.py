"""The ``mtrain`` command line as a whole (mtrain_env/cli.py): errors, interrupts, the demo."""
