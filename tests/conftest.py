"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def ray_local() -> Iterator[None]:
    """One local Ray instance for the whole test session (Ray starts slowly and uses memory)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="session", autouse=True)
def sb3_log_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A bare SB3 model's ``learn()`` makes an (empty) log folder: keep it out of ``/tmp``."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3_logs")))
    yield
    mp.undo()
