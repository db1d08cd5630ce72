"""`ndcg-report judges` (commands/judges.py, judges_text.py): a judgment set named by its file's name
prints safely in every format, whatever bytes the name holds."""

from __future__ import annotations

import csv
import io
import json
import shutil

from tests.helpers import SMALL, cli


def test_a_set_named_by_a_file_name_with_control_characters_forges_no_line_and_no_colour(tmp_path):
    hostile = tmp_path / "ev\nil\x1b[31mred.txt"
    shutil.copy(SMALL / "qrels.txt", hostile)
    reference = tmp_path / "reference.txt"
    shutil.copy(SMALL / "qrels.txt", reference)
    text = cli("judges", reference, hostile)
    assert text.returncode == 0, text.stderr
    assert "\x1b" not in text.stdout and "ev\nil" not in text.stdout
    assert "  ev\ufffdil\ufffd[31mred: " in text.stdout  # one line, the controls replaced as a run's name is
    table = cli("judges", "--format", "csv", reference, hostile)
    rows = list(csv.reader(io.StringIO(table.stdout)))
    assert all("\n" not in cell and "\x1b" not in cell for row in rows for cell in row)
    assert any("ev\ufffdil\ufffd[31mred" in cell for row in rows for cell in row)
    shown = json.loads(cli("judges", "--format", "json", reference, hostile).stdout)
    assert "ev\ufffdil\ufffd[31mred" in json.dumps(shown, ensure_ascii=False)
