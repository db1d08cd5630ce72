"""What papermill's execution hands to nbval's concurrent re-execution, through files.

First the parameterised notebook, once papermill's kernel is up (beside the executed one, so that nbval's
kernel runs in the same folder), then into a folder each cell's outputs as soon as that cell has run.
Every file is written whole (a temporary file renamed), so a reader sees all of it or nothing.

nbval re-executes a cell from the parameterised notebook's source while papermill is still running,
and compares its outputs with the cell's snapshot; at the end it checks every snapshot it compared
with against the executed notebook itself (build/steps/nbval_plugin.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

def cell_path(folder: str | Path, index: int) -> Path:
    """Where save_cell writes the cell at `index` (counting every cell of the notebook, from 0)."""
    return Path(folder) / f"cell-{index}.json"


def save_notebook(path: str | Path, notebook: Any) -> None:
    """The parameterised notebook (a notebook as a dict, no output yet) to path."""
    _write_whole(Path(path), json.dumps(notebook, ensure_ascii=False))


def cell_record(cell: Any) -> dict:
    """What a snapshot holds of a notebook cell: {source, execution_count, outputs}."""
    return {"source": cell.get("source", ""), "execution_count": cell.get("execution_count"),
            "outputs": cell.get("outputs", [])}


def save_cell(folder: str | Path, index: int, cell: Any) -> None:
    """The cell_record of the cell at `index`, once it has run."""
    _write_whole(cell_path(folder, index), json.dumps(cell_record(cell), ensure_ascii=False))


def load_cell(folder: str | Path, index: int) -> dict | None:
    """The snapshot of the cell at `index` ({source, execution_count, outputs}), or None before it is saved."""
    try:
        text = cell_path(folder, index).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return json.loads(text)


def _write_whole(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
