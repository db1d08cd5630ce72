"""File plumbing (files.py): an --out through a looping link or too long for the file system is one line
before any work, and an --out that is a pipe or a device is written into, not replaced."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from tests.helpers import BUILD, SMALL, cli, installed, refused

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"


def _drained(fifo: Path) -> tuple[list[bytes], threading.Thread]:
    """A thread reading fifo to its end into the returned list (a reader must be there for a writer)."""
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    return received, reader


@pytest.mark.parametrize("command", ["pool", "bm25"])
def test_an_out_that_is_a_pipe_or_a_device_is_written_into_not_replaced(tmp_path, command):
    # found: `pool --out /dev/full` replaced the device node with a regular file (rename over it)
    corpus_args = ["--corpus", CORPUS / "tiny.jsonl", "--topics", CORPUS / "tiny_topics.tsv"]
    args = {"pool": ["pool", SMALL / "qrels.txt", SMALL / "monot5.txt"], "bm25": ["bm25", *corpus_args]}[command]
    env = {**os.environ, "NDCG_REPORT_CACHE": str(tmp_path / "cache")}
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received, reader = _drained(fifo)
    result = cli(*args, "--out", fifo, env=env)
    reader.join(30)
    assert result.returncode == 0, result.stderr
    assert received and received[0].startswith(b"qid\tdocid" if command == "pool" else b"q1 Q0 ")
    assert fifo.is_fifo()
    real, link = tmp_path / "real.out", tmp_path / "link.out"  # through a link (as /dev/stdout is): its file
    real.write_text("old\n")
    link.symlink_to(real)
    assert cli(*args, "--out", link, env=env).returncode == 0
    assert link.is_symlink() and real.read_bytes() == received[0]
    if os.geteuid() != 0:
        return
    full, null = tmp_path / "full", tmp_path / "null"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # what /dev/full is
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null
    failed = cli(*args, "--out", full, env=env)  # bm25 says first which cached run it reuses
    assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr
    assert failed.stderr.splitlines()[-1].startswith("ndcg-report: error: cannot write the output (No space left")
    assert cli(*args, "--out", null, env=env).returncode == 0
    assert full.is_char_device() and null.is_char_device()
    assert not list(tmp_path.glob(".full*")) and not list(tmp_path.glob(".null*"))  # no temp file left


@pytest.mark.parametrize("where", ["link", "inside the link"])
def test_a_build_out_through_a_looping_link_is_one_line(tmp_path, where):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    out = tmp_path / "a" if where == "link" else tmp_path / "a" / "report"
    refused(installed(*BUILD, "--out", out), f"--out {out} leads through a link that loops")
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]
    assert os.readlink(tmp_path / "a") == str(tmp_path / "b")


@pytest.mark.parametrize("length", ["name", "path"])
def test_a_build_out_too_long_for_the_file_system_is_one_line_before_any_work(tmp_path, length):
    if length == "name":
        out = tmp_path / ("r" * 250)
        expected = "the file system takes 255 at most"
    else:
        out = tmp_path.joinpath(*["p" * 150] * 28)
        expected = "the file system takes paths of 4,096 bytes at most"
    refused(installed(*BUILD, "--out", out), f"--out {str(out)[:80]}", expected)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", ["pool", "bm25"])
def test_pool_and_bm25_out_onto_a_looping_link_leave_the_link(tmp_path, command):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    args = (["pool", SMALL / "qrels.txt", SMALL / "monot5.txt"] if command == "pool" else
            ["bm25", "--corpus", CORPUS / "tiny.jsonl", "--topics", CORPUS / "tiny_topics.tsv",
             "--cache-dir", tmp_path / "cache"])
    refused(installed(*args, "--out", tmp_path / "a"), f"--out {tmp_path / 'a'} leads through a link that loops")
    assert os.readlink(tmp_path / "a") == str(tmp_path / "b") and os.readlink(tmp_path / "b") == str(tmp_path / "a")
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]
