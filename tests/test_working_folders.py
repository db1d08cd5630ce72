"""The tool's own working folders (working_folders.py): made private, marked without following links."""

from __future__ import annotations

import os

import pytest

from ndcg_report.working_folders import OWNED_MARKER, mark_owned, new_private_folder, open_up, same_folder


def test_the_marker_is_never_written_through_a_link_or_over_a_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's own file")
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / OWNED_MARKER).symlink_to(secret)
    with pytest.raises(FileExistsError):
        mark_owned(folder)
    assert secret.read_text() == "the user's own file"
    (folder / OWNED_MARKER).unlink()
    (folder / OWNED_MARKER).write_text("someone's")
    with pytest.raises(FileExistsError):
        mark_owned(folder, only=["a"])
    assert (folder / OWNED_MARKER).read_text() == "someone's"


def test_a_private_folder_is_known_by_its_identity_not_its_name(tmp_path):
    folder, identity = new_private_folder(tmp_path, ".out.staging")
    assert same_folder(folder, identity) and folder.stat().st_mode & 0o777 == 0o700
    assert (folder / OWNED_MARKER).read_text().startswith("made by ndcg-report, process")
    folder.rename(tmp_path / "aside")
    folder.mkdir(mode=0o700)  # another folder at its name
    assert not same_folder(folder, identity)
    with pytest.raises(PermissionError):
        open_up(folder, identity)
    assert folder.stat().st_mode & 0o777 == 0o700
    folder.rmdir()
    folder.symlink_to(tmp_path / "aside")  # a link to the very folder is not the folder at its name
    assert not same_folder(folder, identity)
    with pytest.raises(OSError):
        open_up(folder, identity)
