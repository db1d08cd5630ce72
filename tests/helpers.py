"""What tests in several folders share: the command line run as a process, its one-line errors, builds of
the small DL 2019 set (in-process with stubbed steps, or from a folder), batch configs and stand-ins."""

from __future__ import annotations

import hashlib
import json
import os
import string
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

SMALL = Path(__file__).resolve().parent / "data" / "small"
RUN, BASELINE, QRELS, TOPICS = SMALL / "monot5.txt", SMALL / "bm25.txt", SMALL / "qrels.txt", SMALL / "topics.txt"
QID = QRELS.read_text().split()[0]
MAX_LINE = 16 << 20  # inputs.access.text_files.MAX_LINE, as documented (written out: a test of the value)
CLI = [sys.executable, "-m", "ndcg_report.cli"]
CONSOLE = Path(sys.executable).parent / "ndcg-report"  # the installed command: its own folder first on sys.path
BUILD = ["build", "--run", str(RUN), "--baseline", str(BASELINE), "--qrels", str(QRELS)]
NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to give files to another user (chown)")


# --- the command line as a process ------------------------------------------------------------------------


def cli(*args, timeout: float | None = None, **kwargs) -> subprocess.CompletedProcess:
    """`python -m ndcg_report.cli ARGS`, its output as text."""
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, check=False, timeout=timeout,
                          **kwargs)


def one_line(result: subprocess.CompletedProcess, code: int, message: str) -> None:
    """result exited with code, saying message in one line of stderr."""
    assert result.returncode == code, (result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert message in result.stderr, result.stderr


def one_stderr_line(stderr: str, *parts: str) -> None:
    """stderr is one line holding each part."""
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    for part in parts:
        assert part in stderr, stderr


def installed(*args: str | bytes | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The installed command (bytes arguments passed as they are: names that are not UTF-8), output as bytes."""
    return subprocess.run([str(CONSOLE), *[arg if isinstance(arg, bytes) else str(arg) for arg in args]],
                          capture_output=True, cwd=cwd, check=False)


def refused(result: subprocess.CompletedProcess, *parts: str) -> str:
    """The one stderr line of an exit-2 refusal that printed nothing on stdout; each part in it."""
    err = result.stderr.decode("utf-8", "backslashreplace")
    assert result.returncode == 2, err
    assert result.stdout == b"", result.stdout
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in err, err
    return err


def wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# --- builds and batches -------------------------------------------------------------------------------------


def build_args(out: Path, *extra, run: Path = RUN) -> list[str]:
    """`build` of run against the small set's baseline and qrels at k 5 and 10, into out."""
    return ["build", "--run", str(run), "--baseline", str(BASELINE), "--qrels", str(QRELS), "-k", "5,10",
            *map(str, extra), "--out", str(out)]


def build_from(folder: Path, out: Path, **env: str) -> subprocess.CompletedProcess:
    """`ndcg-report build` of the small DL 2019 set, started in `folder`, into `out`."""
    return subprocess.run([str(CONSOLE), "build", "--run", f"monoT5={SMALL / 'monot5.txt'}", "--baseline",
                           str(SMALL / "bm25.txt"), "--qrels", str(SMALL / "qrels.txt"), "--out", str(out)],
                          cwd=folder, capture_output=True, text=True, env={**os.environ, **env}, check=False)


def figures(report: Path) -> list[str]:
    """The PNG figures of a report's executed notebook, in order."""
    notebook = json.loads((report / "report.ipynb").read_text())
    return [output["data"]["image/png"] for cell in notebook["cells"] for output in cell.get("outputs", [])
            if "image/png" in output.get("data", {})]


def working_folders(parent: Path) -> list[str]:
    """The build's working folders (staging, an old report being retired) in parent."""
    entries = parent.iterdir() if parent.is_dir() else ()
    return sorted(entry.name for entry in entries if ".staging-" in entry.name or ".old-" in entry.name)


def fake_summary(run_mean: float) -> dict:
    """A report's summary.json with one comparison whose run mean is run_mean."""
    row = {"n": 8, "run_mean": run_mean, "baseline_mean": 0.4, "delta": run_mean - 0.4, "ci_low": -0.1, "ci_high": 0.2,
           "randomization_pvalue": 0.5, "holm_randomization_pvalue": 0.5, "t_pvalue": 0.5, "holm_t_pvalue": 0.5,
           "wilcoxon_pvalue": 0.5, "holm_wilcoxon_pvalue": 0.5}
    return {"schema_version": 3, "ndcg_report_version": "test", "parameters": {"headline": "nDCG@10", "alpha": 0.05},
            "comparisons": {"monot5": {"nDCG@10": row}}, "baseline": "bm25", "warnings": []}


class PassedNbval:
    """Stands in for the nbval process of a build: it passed."""

    def wait(self):
        from ndcg_report.build.steps.processes import Finished

        return Finished(0, "", "")

    def send(self, line):
        pass

    def stop(self, line):
        pass

    def kill(self):
        pass


def build_in_process(out: Path, run: Path = RUN, progress: bool = False, **given):
    """build_report of run against the small set, in this process (so that stubbed steps apply)."""
    from ndcg_report.build.parameters import validate_parameters
    from ndcg_report.build.pipeline import build_report

    values = {"runs": [str(run)], "qrels": str(QRELS), "baseline": str(BASELINE), "ks": "5,10", **given}
    return build_report(validate_parameters(**values), out, progress=progress)


class InProcessBuilds:
    """batch Builds running each build command through cli.main in this process (so the stubs apply)."""

    stopping = 0
    description = ""

    def run(self, job):
        from ndcg_report.commands import build_report as cli_module
        from ndcg_report.cli import build_parser
        from ndcg_report.batch.builds import BuildRun
        from ndcg_report.errors import BuildError, InputError, ParameterError

        argv = job.command[3:]
        try:
            cli_module.run_build(build_parser().parse_args(argv), argv, time.monotonic())
        except (InputError, ParameterError) as exc:
            return BuildRun(2, "", f"ndcg-report: error: {exc}\n")
        except (BuildError, OSError) as exc:
            return BuildRun(1, "", f"ndcg-report: error: {exc}\n")
        return BuildRun(0, "", "")

    def stop(self, signum):
        self.stopping = signum


def small_config(folder: Path, names: tuple[str, ...] = ("r1",), **extra) -> Path:
    """folder/c.yml: a batch of the small set's reports named names, into folder/out."""
    reports = [{"name": name, "run": str(RUN), "baseline": str(BASELINE), "qrels": str(QRELS), "k": "5,10", **extra}
               for name in names]
    path = folder / "c.yml"
    path.write_text(yaml.safe_dump({"output": "out", "reports": reports}))
    return path


def plant_staging(parent: Path, name: str, uid: int) -> Path:
    """What another local user plants in a shared parent: a dead build's staging folder of `name`, its
    marker claiming none of its entries, a page, an open folder and a link to a secret."""
    planted = parent / f".{name}.staging-99999999-deadbeef"
    planted.mkdir()
    (planted / ".ndcg-report-owned").write_text("made by ndcg-report, process 99999999\nowns only: nothing\n")
    (planted / "index.html").write_text("<p>planted</p>")
    (planted / "assets").mkdir(mode=0o777)
    (planted / "passwd.txt").symlink_to("/etc/passwd")
    for path in (planted, *planted.iterdir()):
        os.lchown(path, uid, uid)
    return planted


# --- inputs -------------------------------------------------------------------------------------------------


def identical_rows(path: Path, rows: int, per_group: int = 1 << 20) -> Path:
    """A Parquet run of `rows` identical dictionary-encoded rows (a few KB per million)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    codes = pa.array(np.zeros(min(rows, per_group), dtype=np.int32))
    table = pa.table({"qid": pa.DictionaryArray.from_arrays(codes, pa.array([QID])),
                      "docid": pa.DictionaryArray.from_arrays(codes, pa.array(["d1"])),
                      "score": pa.array(np.ones(len(codes)))})
    with pq.ParquetWriter(path, table.schema) as writer:
        for start in range(0, rows, per_group):
            writer.write_table(table.slice(0, min(per_group, rows - start)))
    return path


LONGEST_ID = 256  # every id length from 1 to this is tried (ids have no length limit: a few longer ones too)


def ids_of_every_length() -> list[str]:
    """Hex ids (a sha256's prefix, and the same after `0x`), and ids that are not hex, of every length
    1..LONGEST_ID and a few far longer."""
    lengths = [*range(1, LONGEST_ID + 1), 1000, 4096]
    hex_digits = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(4096 // 64 + 1))
    other = (string.ascii_letters + string.digits + "_-:.") * 60
    ids = []
    for length in lengths:
        ids += [hex_digits[:length], other[:length], "q" * (length - 1) + "7", hex_digits[:length].upper()]
        if length > 2:
            ids.append("0x" + hex_digits[: length - 2])
    return list(dict.fromkeys(ids))  # once each (short ones coincide)


def run_on_queries(source: Path, qids: "tuple[str, ...]", path: Path) -> Path:
    """path: the lines of the run `source` whose qid is one of qids (a run that lacks the other queries)."""
    lines = source.read_text().splitlines()
    path.write_text("".join(line + "\n" for line in lines if line.split()[0] in qids))
    return path
