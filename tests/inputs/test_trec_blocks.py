"""The streamed TREC reader's pieces (inputs.formats.trec_blocks): read from one reused buffer and cut
where a query's lines begin, they hold exactly read_run's rows, a piece said to end a query does, and
bad text is the same one error, at the same line, as the whole-file reader gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_report.errors import InputError
from ndcg_report.inputs.formats.trec_blocks import query_cut, trec_run_pieces
from ndcg_report.inputs.reading import read_run, run_pieces


def pieces_as_rows(path: Path, size: int) -> tuple[list[tuple[str, str, float]], list[tuple[int, int, bool]]]:
    """Every row of every piece (read to the end first: a later read must not change an earlier
    piece), and each piece's (rows before it, rows, whether it ends a query)."""
    pieces = list(trec_run_pieces(path, size))
    rows, shapes = [], []
    for table, before, whole in pieces:
        assert table["qid"].num_chunks == 1 and table["docid"].num_chunks == 1
        qids = table["qid"].chunk(0)
        assert qids.dictionary.to_pylist() == list(dict.fromkeys(qids.to_pylist()))  # only its qids, in order met
        rows += list(zip(table["qid"].to_pylist(), table["docid"].to_pylist(), table["score"].to_pylist()))
        shapes.append((before, table.num_rows, whole))
    return rows, shapes


def whole_rows(path: Path) -> list[tuple[str, str, float]]:
    table = read_run(path).table
    return list(zip(table["qid"].to_pylist(), table["docid"].to_pylist(), table["score"].to_pylist()))


@st.composite
def run_texts(draw) -> str:
    """A run grouped by query, with the odd line a real file holds: comments, blank lines, tabs,
    runs of spaces, CRLF, a query much longer than the others, qids that are prefixes of others."""
    n_queries = draw(st.integers(1, 6))
    qids = draw(st.lists(st.sampled_from(["1", "10", "100", "q1", "q10", "Ä", "2"]), min_size=n_queries,
                         max_size=n_queries, unique=True))
    odd = draw(st.sampled_from(["clean", "clean", "comments", "blank", "tabs", "spaces", "crlf"]))
    lines = []
    for qid in qids:
        for rank in range(draw(st.integers(1, 40))):
            line = f"{qid} Q0 d{draw(st.integers(0, 10**6))}-{rank} {rank + 1} {draw(st.integers(-50, 50)) / 4} tag"
            if odd == "tabs" and draw(st.booleans()):
                line = line.replace(" ", "\t", 2)
            if odd == "spaces" and draw(st.booleans()):
                line = "  " + line.replace(" ", "   ")
            lines.append(line)
            if odd == "comments" and draw(st.integers(0, 9)) == 0:
                lines.append("# a comment")
            if odd == "blank" and draw(st.integers(0, 9)) == 0:
                lines.append("")
    end = "\r\n" if odd == "crlf" else "\n"
    return end.join(lines) + (end if draw(st.booleans()) else "")


@settings(max_examples=150, deadline=None)
@given(run_texts(), st.sampled_from([64, 150, 512, 4096, 1 << 20]))
def test_pieces_hold_exactly_read_runs_rows_and_a_whole_piece_ends_its_query(tmp_path_factory, text, size):
    path = tmp_path_factory.mktemp("pieces") / "run.txt"
    path.write_bytes(text.encode())
    expected = whole_rows(path)
    rows, shapes = pieces_as_rows(path, size)
    assert rows == expected
    assert [before for before, _, _ in shapes] == list(np.cumsum([0] + [n for _, n, _ in shapes])[:-1])
    for before, n, whole in shapes:
        if whole and before + n < len(expected):  # the next row starts another query
            assert expected[before + n - 1][0] != expected[before + n][0]
    assert len(shapes) == 1 or any(whole for _, _, whole in shapes[:-1]) or "\t" in text or "#" in text \
        or "\n\n" in text or "  " in text or size < 600 or len({qid for qid, _, _ in expected}) == 1


def test_a_clean_run_comes_in_pieces_of_whole_queries_parsed_in_place(tmp_path):
    lines = [f"{q} Q0 D{q:03d}{r:04d} {r + 1} {100 - r / 8:.4f} run" for q in range(30) for r in range(200)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    rows, shapes = pieces_as_rows(path, 16 << 10)
    assert rows == whole_rows(path)
    assert len(shapes) > 5 and all(whole for _, _, whole in shapes)
    assert all(n % 200 == 0 for _, n, _ in shapes)  # whole queries of 200 lines each


def test_a_query_longer_than_the_buffer_is_left_to_the_caller_to_join(tmp_path):
    lines = [f"7 Q0 d{r} {r + 1} {-r} run" for r in range(5000)] + [f"8 Q0 d{r} {r + 1} {-r} run" for r in range(10)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    rows, shapes = pieces_as_rows(path, 8 << 10)
    assert rows == whole_rows(path)
    assert not any(whole for _, _, whole in shapes[:-1]) and shapes[-1][2]


def test_query_cut_finds_where_the_last_query_begins_or_says_it_cannot():
    text = b"1 Q0 a 1 3 t\n10 Q0 b 1 3 t\n10 Q0 c 2 2 t\n"
    assert query_cut(text, len(text)) == (13, True)  # "1" is not "10": a prefix is another qid
    for text in (b"5 Q0 a 1 3 t\n5 Q0 b 2 2 t\n",  # one query: no cut known
                 b"4 Q0 a 1 3 t\n# note\n5 Q0 b 2 2 t\n",  # a comment: not plain
                 b"4 Q0 a 1 3 t\n 5 Q0 b 2 2 t\n",  # a leading blank: not plain
                 b"4 Q0 a 1 3 t\n4\tQ0 b 2 2 t\n"):  # a tab: "4" is the qid, not "4<tab>Q0"
        assert query_cut(text, len(text)) == (len(text), False)


@pytest.mark.parametrize("bad, problem", [
    (b"5 Q0 d9 1 nan run\n", "NaN or infinite"),
    (b"5 Q0 d9 1 x run\n", ""),
    (b"5 Q0 d9 1\n", ""),
    (b"5 Q0 d\x009 1 2 run\n", "NUL byte"),
    (b"5 Q0 d\xff9 1 2 run\n", ""),  # not UTF-8
    (b"5\tQ0 d9 1 2 run extra\n", ""),  # normalised, then a field too many
])
@pytest.mark.parametrize("size", [256, 4096, 1 << 20])
def test_a_bad_line_deep_in_the_run_is_the_whole_readers_error_at_its_line(tmp_path, bad, problem, size):
    good = b"".join(b"%d Q0 d%d %d %d run\n" % (q, r, r + 1, 50 - r) for q in range(40) for r in range(20))
    path = tmp_path / "run.txt"
    path.write_bytes(good + bad + good.replace(b"Q0", b"Q0 ", 0))
    with pytest.raises(InputError) as whole:
        read_run(path)
    with pytest.raises(InputError) as streamed:
        for _ in run_pieces(path, size, size):
            pass
    assert (streamed.value.path, streamed.value.line, streamed.value.problem) == \
        (whole.value.path, whole.value.line, whole.value.problem)
    assert streamed.value.line == 801 and problem in streamed.value.problem


def test_a_gzip_run_and_one_without_newlines_read_as_before(tmp_path):
    import gzip

    text = "".join(f"{q} Q0 d{r} {r + 1} {9 - r} run\n" for q in range(3) for r in range(9))
    (tmp_path / "run.txt.gz").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "cr.txt").write_bytes(text.replace("\n", "\r").encode())
    for name in ("run.txt.gz", "cr.txt"):
        rows, shapes = pieces_as_rows(tmp_path / name, 64)
        assert rows == whole_rows(tmp_path / name)
        assert not any(whole for _, _, whole in shapes)


def test_pieces_are_not_views_of_the_buffer(tmp_path):
    """pyarrow copies the values it parses: a piece read before is unchanged when the buffer is reused."""
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q} Q0 doc-{q}-{r} {r + 1} {9 - r} run\n" for q in range(50) for r in range(30)))
    pieces = list(trec_run_pieces(path, 2048))
    first = pieces[0][0]
    assert pa.concat_tables([table for table, _, _ in pieces]).column("docid").to_pylist() == \
        [f"doc-{q}-{r}" for q in range(50) for r in range(30)]
    assert first["docid"][0].as_py() == "doc-0-0"


@settings(max_examples=25, deadline=None)
@given(run_texts(), st.sampled_from([64, 300, 4096]))
def test_every_output_of_a_streamed_run_is_the_in_memory_runs_byte_for_byte(tmp_path_factory, text, size):
    from ndcg_report.core.evaluation_pass import evaluate
    from ndcg_report.core.output_formats import csv_chunks, json_chunks, trec_chunks
    from ndcg_report.core.streaming import evaluate_streaming

    folder = tmp_path_factory.mktemp("outputs")
    (folder / "run.txt").write_bytes(text.encode())
    pairs = [line.split()[::2] for line in text.splitlines() if line.strip() and not line.startswith("#")]
    judged = {(qid, docid): n % 4 for n, (qid, docid, *_) in enumerate(pairs) if n % 3 == 0}  # a third, 0-3
    (folder / "qrels.txt").write_text("".join(f"{qid} 0 {docid} {label}\n" for (qid, docid), label in judged.items())
                                      + "unretrieved 0 x 2\n")
    options = dict(measures="ndcg_cut.1,5,10 map recip_rank P.5 recall.10 num_rel_ret", missing="zero",
                   no_relevant="zero")
    streamed = evaluate_streaming(folder / "run.txt", folder / "qrels.txt", block_bytes=size, **options)
    whole = evaluate(folder / "run.txt", folder / "qrels.txt", **options)
    for chunks in (lambda e: trec_chunks(e, True, 4), lambda e: csv_chunks(e, True, 4), lambda e: json_chunks(e, True, None)):
        assert b"".join(map(bytes, chunks(streamed))) == b"".join(map(bytes, chunks(whole)))
