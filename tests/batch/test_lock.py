"""The batch's lock (batch/lock.py): a lock file it cannot open is one line."""

from __future__ import annotations

import os

from tests.helpers import small_config


def test_a_lock_owned_by_another_user_is_one_line(tmp_path, monkeypatch, capsys):
    from ndcg_report import cli as cli_module
    from ndcg_report.batch import runner

    config = small_config(tmp_path)
    real_open = os.open

    def open_as_another_user(path, flags, *args):  # the lock file belongs to someone else
        if str(path).endswith(".batch.lock"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(runner.os, "open", open_as_another_user)
    monkeypatch.chdir(tmp_path)
    assert cli_module.main(["batch", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot open the lock" in err and "Permission denied" in err
