"""The commands' parsers (commands/parser.py): a usage error is one line, cut at 1000 characters, a range
is checked before any work, and --help or --version that cannot be written fail."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import QRELS, RUN, SMALL, cli, one_line


@pytest.mark.parametrize(("args", "message"), [
    (["eval", "-k", "18446744073709551616"], "is larger than 1,000,000,000"),
    (["build", "--timeout", "2147484"], "--timeout: 2147484 must be a whole number of seconds from 1 to 604,800"),
])
def test_ranges_are_checked_before_any_kernel(tmp_path, args, message):
    if args[0] == "eval":
        args = [*args, SMALL / "qrels.txt", SMALL / "monot5.txt"]
    else:
        args = [*args, "--run", SMALL / "monot5.txt", "--baseline", SMALL / "bm25.txt", "--qrels", SMALL / "qrels.txt",
                "--out", tmp_path / "out"]
    one_line(cli(*args), 2, message)


def test_usage_errors_are_cut_at_1000_characters():
    result = cli("eval", "--digits", "9" * 5000, QRELS, RUN)
    one_line(result, 2, "argument --digits: invalid int value")
    assert len(result.stderr) <= 1001


@pytest.mark.parametrize("args", [["--version"], ["build", "--help"]])
def test_help_and_version_to_a_full_disk_fail(args):
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "ndcg_report.cli", *args], stdout=full, stderr=subprocess.PIPE,
                                text=True, check=False)
    one_line(result, 1, "cannot write the output (No space left on device)")
