"""The build's papermill step, run as `python -m ndcg_report.report.papermill_process TEMPLATE OUT
PARAMETERS.yml CWD TIMEOUT`: papermill's execute_notebook as its command line would run it, with the
kernel shut down at once when the last cell is done (a graceful shutdown waits ~2.5 s on ipykernel 7
for nothing: every output is in by then) and a progress line per cell for the parent's bar."""

from __future__ import annotations

import sys

from ndcg_report.report.processes import print_progress, skip_unused_jsonschema_formats


def main(argv: list[str]) -> int:
    template, executed, parameter_file, cwd, timeout = argv
    skip_unused_jsonschema_formats()
    import json

    import papermill
    import yaml

    with open(parameter_file, encoding="utf-8") as stream:
        parameters = yaml.safe_load(stream)
    with open(template, encoding="utf-8") as stream:
        cells = len(json.load(stream)["cells"]) + 1  # and the cell of injected parameters

    def executed_cell(cell, cell_index, **_):
        print_progress(min(cell_index + 1, cells), cells)

    papermill.execute_notebook(
        template, executed, parameters=parameters, kernel_name="python3", cwd=cwd,
        execution_timeout=int(timeout), progress_bar=False, log_output=False, request_save_on_cell_execute=False,
        shutdown_kernel="immediate", on_cell_executed=executed_cell,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
