"""The build's papermill step, as its own process: papermill's execute_notebook with cell snapshots.

Run as `python -m ndcg_report.build.steps.papermill_process TEMPLATE OUT PARAMETERS.yml CWD TIMEOUT
[PARAMETERISED CELLS]`: papermill's execute_notebook as its command line would run it,
with the kernel shut down at once when the last cell is done (a graceful shutdown waits ~2.5 s on
ipykernel 7 for nothing: every output is in by then) and a progress line per cell for the parent's bar.

PARAMETERISED, CELLS: what nbval's concurrent re-execution reads (build/steps/cell_snapshots.py), the
parameterised notebook written to PARAMETERISED once the kernel is up, and each cell's outputs into the
folder CELLS as soon as it has run.
"""

from __future__ import annotations

import sys

from ndcg_report.build.steps.processes import print_progress, skip_unused_jsonschema_formats, skip_unused_papermill_stores


def main(argv: list[str]) -> int:
    template, executed, parameter_file, cwd, timeout, *rest = argv
    skip_unused_jsonschema_formats()
    skip_unused_papermill_stores()
    import json

    import papermill
    import yaml

    from ndcg_report.build.steps import cell_snapshots

    parameterised, cells_folder = rest if rest else ("", "")
    with open(parameter_file, encoding="utf-8") as stream:
        parameters = yaml.safe_load(stream)
    with open(template, encoding="utf-8") as stream:
        cells = len(json.load(stream)["cells"]) + 1  # and the cell of injected parameters

    def notebook_started(notebook, **_):
        if parameterised:
            cell_snapshots.save_notebook(parameterised, notebook)

    def executed_cell(cell, cell_index, **_):
        if cells_folder:
            cell_snapshots.save_cell(cells_folder, cell_index, cell)
        print_progress(min(cell_index + 1, cells), cells)

    papermill.execute_notebook(
        template, executed, parameters=parameters, kernel_name="python3", cwd=cwd,
        execution_timeout=int(timeout), progress_bar=False, log_output=False, request_save_on_cell_execute=False,
        shutdown_kernel="immediate", on_notebook_start=notebook_started, on_cell_executed=executed_cell,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
