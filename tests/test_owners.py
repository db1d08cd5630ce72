"""Who owns a path, and which folders another user could swap things in (owners.py)."""

from __future__ import annotations

import os

import pytest

from ndcg_report.owners import group_has_others, others_can_write, shared_folder_problem
from tests.helpers import NOBODY, as_root


@pytest.mark.parametrize("mode, shared", [(0o700, False), (0o755, False), (0o1777, False), (0o757, True),
                                          (0o777, True), (0o703, True)])
def test_a_folder_others_may_write_without_the_sticky_bit_is_shared(tmp_path, mode, shared):
    folder = tmp_path / "f"
    folder.mkdir()
    os.chmod(folder, mode)
    problem = shared_folder_problem(folder / "not-made-yet" / "out")
    if shared:
        assert problem == f"{folder} (mode {mode:04o}, owner {_me()}) is writable by other users without the sticky bit"
    else:
        assert problem is None


def test_a_folder_above_or_behind_a_link_counts_too(tmp_path):
    shared = tmp_path / "shared"
    (shared / "mine").mkdir(parents=True)
    os.chmod(shared, 0o777)
    link = tmp_path / "link"
    link.symlink_to(shared / "mine")
    assert shared_folder_problem(shared / "mine").startswith(f"{shared} (mode 0777")
    assert shared_folder_problem(link).startswith(f"{shared} (mode 0777")  # through the link


@as_root
def test_a_group_writable_folder_is_shared_only_if_another_user_is_in_the_group(tmp_path):
    """Debian's umask 002 makes every folder group-writable, for the user's own private group: that is the
    user's alone. A group another user is in (nobody's own group, nogroup) is not."""
    folder = tmp_path / "f"
    folder.mkdir()
    os.chmod(folder, 0o775)
    os.chown(folder, -1, os.getegid())
    assert not group_has_others(os.getegid()) or others_can_write(os.stat(folder))
    if not group_has_others(os.getegid()):
        assert shared_folder_problem(folder) is None
    os.chown(folder, -1, NOBODY)
    assert group_has_others(NOBODY) and others_can_write(os.stat(folder))
    assert "is writable by other users without the sticky bit" in shared_folder_problem(folder)
    os.chmod(folder, 0o1775)
    assert shared_folder_problem(folder) is None


@as_root
def test_a_folder_of_another_user_is_shared_whatever_its_mode(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    os.chown(folder, NOBODY, NOBODY)
    assert shared_folder_problem(folder / "out") == f"{folder} belongs to nobody (mode 0755), not to you"


def _me() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name
