"""The notebooks run top to bottom (small budgets), as users will run them."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests import REPO

NOTEBOOKS = REPO / "notebooks"
SMALL = {"MTRAIN_NB_DEALS": "4", "MTRAIN_NB_STEPS": "2048", "MPLBACKEND": "Agg"}


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebook_executes(name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key, value in SMALL.items():
        monkeypatch.setenv(key, value)
    scratch = tmp_path / "tmp"  # the notebooks write their runs to tempfile.mkdtemp(): not into /tmp
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(
        book, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    errors = [
        o
        for c in book.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]
    assert not errors
    # every code cell ran and produced its outputs (prints, tables, figures)
    assert all(c.get("execution_count") for c in book.cells if c.cell_type == "code")
    assert any(
        o.get("output_type") in ("stream", "display_data") for c in book.cells for o in c.get("outputs", [])
    )
    assert os.environ["MTRAIN_NB_DEALS"] == "4"


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebook_opens_with_a_markdown_title(name: str) -> None:
    """Markdown cells are plain markdown (a stray prefix once turned every heading into text)."""
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert book.cells[0].cell_type == "markdown" and book.cells[0].source.startswith("# ")
    for cell in book.cells:
        if cell.cell_type == "markdown":
            assert not cell.source.startswith("!"), cell.source[:40]


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebook_is_committed_with_its_outputs(name: str) -> None:
    """A reader sees results on the page: every code cell was run (``make notebooks``), in
    order, and the notebook shows printed or drawn output."""
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    counts = [c.get("execution_count") for c in book.cells if c.cell_type == "code"]
    assert all(counts), f"{name}: run `make notebooks` to save it with its outputs"
    assert counts == sorted(counts)
    kinds = {o.get("output_type") for c in book.cells for o in c.get("outputs", [])}
    assert kinds & {"stream", "display_data", "execute_result"}
    assert "error" not in kinds
