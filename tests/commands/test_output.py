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


def test_an_error_line_shows_control_characters_as_escapes_not_raw():
    from ndcg_report.commands.output import one_line as error_text

    given = "bad name 'a\x1b[31mred\x07\tb\u202etxt.exe\x85c'"
    shown = error_text(given)
    assert shown == "bad name 'a\\x1b[31mred\\x07\\tb\\u202etxt.exe c'"
    assert not any(ord(character) < 32 or 0x7f <= ord(character) <= 0x9f for character in shown)
    result = cli("eval", SMALL / "qrels.txt", SMALL / "monot5.txt", "-m", "x\x1b[2Jy\x07")
    assert result.returncode == 2 and "\x1b" not in result.stderr and "\x07" not in result.stderr
