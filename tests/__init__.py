"""The test suite: a folder per part of the code (tests/layout.py); shared helpers here."""

from pathlib import Path

#: the repository's root, for tests that read its files (docs, policies, the web's static files)
REPO = Path(__file__).resolve().parent.parent
