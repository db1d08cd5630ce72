"""A build's staging folder: made private beside --out, removed unless published, published only as the folder it made.

The folder is made 0700 (working_folders.new_private_folder) and known by its identity, not its name: at
publish it must still be that folder and hold only what the build made (publish.check_staging).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ndcg_report.build.publish import check_staging, publish
from ndcg_report.build.steps.processes import Steps
from ndcg_report.build.steps.step_failures import disk_full
from ndcg_report.build.supervisor import check_supervisor
from ndcg_report.errors import BuildError, ParameterError
from ndcg_report.inputs.access.stamps import InputWatch
from ndcg_report.interrupts import whole
from ndcg_report.working_folders import (FolderIdentity, missing_folders, new_private_folder, open_up, owned_folder_home,
                                         remove_owned_folder, same_folder, stale_owned_folders)


@dataclass
class Staging:
    """A build's staging folder, the folders made to hold it, the inputs it still reads where they are (its
    watch), and whether it is published (out_dir's now)."""

    folder: Path
    identity: FolderIdentity  # what the folder is: at publish, and before it is removed, it must still be that one
    created: list[Path]
    inputs: InputWatch
    published: bool = False

    def is_ours(self) -> bool:
        """Whether the folder at its name is still the one the build made (not moved aside and replaced)."""
        return same_folder(self.folder, self.identity)


@contextmanager
def staging_folder(out_dir: Path, inputs: InputWatch, steps: Steps) -> Iterator[Staging]:
    """A new staging folder beside out_dir (a killed build's removed first), removed unless published, whatever
    stop arrives; a step's failure on an input changed meanwhile, or on a full disk, said so (BuildError)."""
    created = missing_folders(out_dir.parent)
    staging: Staging | None = None
    try:
        try:
            out_dir.parent.mkdir(parents=True, exist_ok=True)
            for stale in stale_owned_folders(out_dir.parent, out_dir.name):  # left by a killed build of this report
                remove_owned_folder(stale, home=owned_folder_home(stale))
            with whole():  # made and in the clean-up's charge at once: no stop signal falls in between
                staging = Staging(*new_private_folder(out_dir.parent, f".{out_dir.name}.staging"), created, inputs)
        except OSError as exc:
            raise ParameterError(f"--out {out_dir}: cannot be created there ({exc.strerror or exc}); "
                                 "give a folder you can write to") from None
        yield staging
    except BuildError:
        (staging.inputs if staging is not None else inputs).check()  # a step that failed on an input changed
        raise  # meanwhile failed on the user's input
    except OSError as exc:
        full = disk_full(str(exc), out_dir.parent)
        if full:
            raise BuildError(f"step write failed: {full}") from None
        raise
    finally:
        with whole():  # no second stop (a batch's SIGTERM after the terminal's SIGINT) cuts the clean-up short
            steps.clear()
            if staging is not None and not staging.published and staging.is_ours():
                remove_owned_folder(staging.folder)


def publish_staging(staging: Staging, out_dir: Path) -> list[str]:
    """The staging folder published as out_dir, once the inputs read where they are (a corpus) are unchanged
    and the batch alive: publish's notes."""
    staging.inputs.check()  # the kernels read a corpus too: the report is of the version read first
    check_supervisor()  # never publish for a batch that died meanwhile
    check_staging(staging.folder, staging.is_ours())  # the folder the build made, holding only what it made
    open_up(staging.folder, staging.identity)  # 0700 while it was built: now a report folder, with the umask's mode
    notes = publish(staging.folder, out_dir)  # from here on the report is published: nothing fails the build
    staging.published = True
    return notes
