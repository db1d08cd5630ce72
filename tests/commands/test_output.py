"""What a command prints (commands/output.py): an input or output error is one line, and output that cannot
be written fails the command."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import SMALL, cli, one_line


def test_input_and_output_errors_are_one_line():
    one_line(cli("eval", SMALL / "qrels.txt", "/proc/self/mem"), 2, "/proc/self/mem: cannot be read")
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", "eval", SMALL / "qrels.txt", SMALL / "monot5.txt"],
                                stdout=full, stderr=subprocess.PIPE, text=True, check=False)
    one_line(result, 1, "cannot write the output (No space left on device)")
    result = subprocess.run(f"{sys.executable} -m ndcg_report.cli eval {SMALL / 'qrels.txt'} {SMALL / 'monot5.txt'} >&-",
                            shell=True, stderr=subprocess.PIPE, text=True, check=False)
    one_line(result, 1, "cannot write the output")
