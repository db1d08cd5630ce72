"""Evaluate a run: every measure in one vectorised pass, exactly as trec_eval 10 computes it.

`trec_eval -c -q -l N`: the run's judged lines are ranked once in trec_eval's order
(core/ranking.py), the arrays every family shares are made once from them
(measures/pass_arrays.py: per-query sums below every cut-off asked for, the ideal DCG), and each
measure's family (measures/registry.py) turns them into its column. NDCG takes the graded labels
as gains whatever the relevance level; the binary measures (P, R, AP, RR, Rprec, Success) count a
document relevant when its label >= the relevance level. Only the run lines that have a judgement
are ranked and summed. Which queries enter each mean is set by the missing and no_relevant policies.
"""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Integral

import numpy as np

from ndcg_report.core.conventions import without_identical_ids
from ndcg_report.core.evaluation import Evaluation, QueryCounts, averaged_mask
from ndcg_report.core.matching import judged_run_lines, qid_codes, qrels_queries, run_to_qrels
from ndcg_report.core.measures.graded.judged import judged_share
from ndcg_report.core.measures.names import GAINS, Measure, resolve_measures
from ndcg_report.core.measures.pass_arrays import PassArrays
from ndcg_report.core.measures.registry import COMPUTATIONS
from ndcg_report.core.presets import averaging, measure_set
from ndcg_report.core.ranking import rank_within_query
from ndcg_report.core.relevance_level import warn_relevance_level
from ndcg_report.errors import ParameterError
from ndcg_report.inputs.columns import column_numpy, one_array
from ndcg_report.inputs.tables import QrelsLike, RunLike, load_qrels, load_run



def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """Return value if it is one of choices, else raise ParameterError naming them."""
    if value not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def evaluate(
    run: RunLike,
    qrels: QrelsLike,
    cutoffs: str | list | tuple | None = None,
    gain: str = "linear",
    missing: str | None = None,
    no_relevant: str | None = None,
    *,
    measures: "str | Measure | list | tuple | None" = None,
    rel_level: object = None,
    preset: str = "",
    identical_ids: str | None = None,
    max_retrieved: int | None = None,
) -> Evaluation:
    """Every measure of `run` (qid, docid, score) against `qrels` (qid, docid, rel).

    Parameters
    ----------
    run
        The run: a path (read and checked as `read_run` does), what `read_run` returns, a pyarrow
        Table or pandas DataFrame with `qid`, `docid` (or PyTerrier's `docno`) and `score`, a
        pytrec_eval/ranx dict `{qid: {docid: score}}`, a ranked `{qid: [docid, ...]}`, a ranx `Run`
        or a list of ir_measures `ScoredDoc`.
    qrels
        The judgements, in the same forms: `rel` (or PyTerrier's `label`) as the label column,
        `{qid: {docid: label}}`, a ranx `Qrels` or a list of ir_measures `Qrel`.
    cutoffs
        Without `measures`: the cut-offs of nDCG, `"1,10,all"` or a list (default
        1,3,5,10,20,100,1000; `all` is no cut-off). With `measures`: the cut-offs of a trec_eval
        family named without one (`P`, `recall`).
    gain
        `"linear"` (trec_eval's, the label) or `"exponential"` (`2**rel - 1`).
    missing
        A query in the qrels with something relevant that the run lacks scores 0 (`"zero"`,
        trec_eval's `-c`) or is left out (`"skip"`). None: the preset's, else `"zero"`.
    no_relevant
        A query with nothing relevant (IDCG = 0 for nDCG; no label >= `rel_level` for the binary
        measures) scores 0 (`"zero"`, trec_eval's) or is left out (`"skip"`). None: the preset's,
        else `"zero"`. The counts are always averaged.
    measures
        trec_eval or ir_measures names (`"nDCG@10 AP R@1000"`, `["ndcg_cut.10", "map"]`), `Measure`
        objects or ir_measures measure objects; None: nDCG at `cutoffs`.
    rel_level
        A label at or above it is relevant to the binary measures (default 1, trec_eval's `-l`;
        any number >= 0).
    preset
        A community's convention (`trec-dl`, `msmarco`, `beir`, `rag`): its measures (`measures`
        adds to them), relevance level and averaging, each overridden by the argument given.
    identical_ids
        `"drop"` leaves out a run line whose docid equals its qid (BEIR's `ignore_identical_ids`),
        `"keep"` counts every line (trec_eval's). None: the preset's, else `"keep"`.
    max_retrieved
        Only the first N lines of each query count, in trec_eval's order (score descending, then
        docid descending), as `trec_eval -M N` (None: every line).

    Returns
    -------
    Evaluation
        Every measure of every qrels query, with its `summary` and `per_query` tables.

    Raises
    ------
    InputError
        A file that is not a valid run or qrels (naming the file and line).
    ParameterError
        A bad option value, or a bad value in a table or dict (naming the query and document).

    Warns
    -----
    RelevanceLevelWarning
        A `UserWarning`, once per call: some judged queries have labels above 0 but none at
        `rel_level` (float grades with the default level 1), so the binary measures (R, P, RR,
        AP, ...) find nothing relevant there and average over fewer queries than nDCG (with
        `no_relevant="zero"`: score them 0). The report's data checks say the same.

    Examples
    --------
    In `tests/data/small/` of the checkout:

    >>> result = evaluate("monot5.txt", "qrels.txt", measures="nDCG@10 AP", rel_level=2)
    >>> round(result.mean("nDCG@10"), 4), round(result.mean("AP"), 4)
    (0.6003, 0.2006)
    >>> result.counts.averaged
    8
    """
    evaluation = evaluate_pass(run, qrels, cutoffs, gain, missing, no_relevant, measures=measures, rel_level=rel_level,
                               preset=preset, identical_ids=identical_ids, max_retrieved=max_retrieved)
    warn_relevance_level(evaluation, "evaluate")
    return evaluation


def evaluate_pass(
    run: RunLike, qrels: QrelsLike, cutoffs: str | list | tuple | None = None, gain: str = "linear",
    missing: str | None = None, no_relevant: str | None = None, *,
    measures: "str | Measure | list | tuple | None" = None, rel_level: object = None, preset: str = "",
    identical_ids: str | None = None, max_retrieved: int | None = None,
) -> Evaluation:
    """evaluate() without its warning (core.relevance_level): for a part of a run (streaming,
    partitions, ties) and for compare_runs, which warns once for all its runs."""
    asked = measure_set(preset, measures, cutoffs, rel_level) if preset else resolve_measures(measures, cutoffs, rel_level)
    check_choice("gain", gain, GAINS)
    policies = averaging(preset, missing, no_relevant, identical_ids)
    missing, no_relevant = policies.missing, policies.no_relevant
    check_max_retrieved(max_retrieved)
    qrels_input = load_qrels(qrels)
    run_input, dropped = load_run(run), 0
    if policies.identical_ids == "drop":
        run_input, dropped = without_identical_ids(run_input)
    run, run_pairs = run_input.table, run_input.pairs
    qrels, qrels_pairs = qrels_input.table, qrels_input.pairs

    qrels_qids, qrels_codes = qrels_queries(qrels)
    run_qids, run_codes_local = qid_codes(run)
    n_queries = len(qrels_qids)
    run_to_code, run_only = run_to_qrels(run_qids, qrels_qids)

    judged_rows, judged_labels = judged_run_lines(run_to_code, run_codes_local, run, run_pairs,
                                                  qrels_codes, qrels, qrels_pairs)
    ranks = rank_within_query(run_codes_local, column_numpy(run, "score"), one_array(run["docid"]),
                              judged_rows, n_queries=len(run_qids))
    num_ret = np.zeros(n_queries, dtype=np.int64)
    num_ret[run_to_code[~run_only]] = ranks.lines_per_query[: len(run_qids)][~run_only]
    judged_q, judged_rank = run_to_code[run_codes_local[judged_rows]], ranks.rank
    if max_retrieved is not None:  # trec_eval -M: the lines past the first N of a query are not retrieved
        np.minimum(num_ret, max_retrieved, out=num_ret)
        kept = judged_rank < max_retrieved
        judged_q, judged_labels, judged_rank = judged_q[kept], judged_labels[kept], judged_rank[kept]
    # Summed in rank order, as trec_eval does: equal gain vectors give bit-identical sums whatever the file order.
    in_rank_order = np.argsort(judged_q * (int(judged_rank.max(initial=0)) + 1) + judged_rank)
    labels = column_numpy(qrels, "rel")
    num_rel, num_rel_graded = _relevant_counts(labels, qrels_codes, n_queries, asked.rel_level)

    depths = tuple(sorted({m.depth for m in asked.measures if m.depth is not None})) + (None,)
    arrays = PassArrays(judged_q[in_rank_order], judged_labels[in_rank_order], judged_rank[in_rank_order], num_ret,
                        num_rel, labels, qrels_codes, gain, asked.rel_level, _requested_sums(asked.measures, depths))
    in_run = num_ret > 0
    values = np.empty((n_queries, len(asked.measures)))
    averaged = np.empty((n_queries, len(asked.measures)), dtype=bool)
    for j, measure in enumerate(asked.measures):
        values[:, j] = COMPUTATIONS[measure.measure].value(arrays, measure.k)
        averaged[:, j] = averaged_mask(in_run, measure.family.has_relevant(num_rel, num_rel_graded), missing,
                                       no_relevant)
    dcg, idcg = _gain_sums(arrays, [m for m in asked.measures if m.kind == "graded"])

    has_graded = num_rel_graded > 0
    counts = QueryCounts(
        in_run=len(run_qids), in_qrels=n_queries, in_both=int(in_run.sum()),
        missing=int((~in_run & has_graded).sum()), no_relevant=int((~has_graded).sum()),
        run_only=int(run_only.sum()), averaged=int(averaged.any(axis=1).sum()),
        below_level=int((num_rel == 0).sum()),
    )
    return Evaluation(
        qids=np.asarray(qrels_qids.to_pylist(), dtype=object), num_ret=num_ret, num_rel=num_rel,
        num_rel_graded=num_rel_graded, in_run=in_run, measures=asked.measures, values=values, averaged=averaged,
        dcg=dcg, idcg=idcg, depths=depths, judged=judged_share(arrays, depths), counts=counts, gain=gain,
        missing=missing, no_relevant=no_relevant, rel_level=asked.rel_level, tied_lines=ranks.tied_lines,
        identical_ids=policies.identical_ids, identical_dropped=dropped, max_retrieved=max_retrieved,
    )


def check_max_retrieved(max_retrieved: object) -> None:
    """ParameterError unless max_retrieved is None or a whole number >= 1 (trec_eval's -M)."""
    if max_retrieved is None:
        return
    if isinstance(max_retrieved, bool) or not isinstance(max_retrieved, Integral) or max_retrieved < 1:
        raise ParameterError(f"max_retrieved (-M) must be a whole number >= 1, the lines of a query that count; "
                             f"got {max_retrieved!r}")


def _requested_sums(measures: Iterable[Measure], depths: tuple[int | None, ...]) -> dict[str, set[int | None]]:
    """The sums below cut-offs the pass makes (pass_arrays.SUMS): what each measure's family reads at its
    cut-off, and the judged lines at every depth (judged@k, reported beside every measure)."""
    requested: dict[str, set[int | None]] = {"judged_count": set(depths)}
    for measure in measures:
        for name in COMPUTATIONS[measure.measure].sums:
            requested.setdefault(name, set()).add(measure.k)
    return requested


def _gain_sums(arrays: PassArrays, graded: list[Measure]) -> tuple[np.ndarray, np.ndarray]:
    """DCG@k and IDCG@k per query (rows) and graded measure (columns), back from the per-query scale."""
    dcg = np.zeros((arrays.n_queries, len(graded)))
    idcg = np.zeros((arrays.n_queries, len(graded)))
    for j, measure in enumerate(graded):
        dcg[:, j] = arrays.unscaled(COMPUTATIONS[measure.measure].dcg(arrays, measure.k))
        idcg[:, j] = arrays.unscaled(arrays.below("ideal_dcg", measure.k))
    return dcg, idcg


def averaged_queries(run: RunLike, qrels: QrelsLike, measure: "Measure | str", missing: str = "zero",
                     no_relevant: str = "zero", rel_level: object = None) -> np.ndarray:
    """Per qrels query (the rows of evaluate's Evaluation), whether the run's value of `measure` enters
    its mean: `evaluate(run, qrels, measures=[measure], ...).averaged[:, 0]`, from which queries the
    run has and the qrels' labels alone, without ranking anything (only the run's qid column is read)."""
    asked = resolve_measures([measure], None, rel_level)
    policies = averaging("", missing, no_relevant)
    qrels_table, run_table = load_qrels(qrels).table, load_run(run).table
    qrels_qids, qrels_codes = qrels_queries(qrels_table)
    run_qids, run_codes_local = qid_codes(run_table)
    n_queries = len(qrels_qids)
    run_to_code, run_only = run_to_qrels(run_qids, qrels_qids)
    in_run = np.zeros(n_queries, dtype=bool)
    has_lines = np.bincount(run_codes_local, minlength=len(run_qids)) > 0
    in_run[run_to_code[~run_only & has_lines]] = True
    num_rel, num_rel_graded = _relevant_counts(column_numpy(qrels_table, "rel"), qrels_codes, n_queries,
                                              asked.rel_level)
    return averaged_mask(in_run, asked.measures[0].family.has_relevant(num_rel, num_rel_graded), policies.missing,
                         policies.no_relevant)


def _relevant_counts(labels: np.ndarray, qrels_codes: np.ndarray, n_queries: int,
                    rel_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per query: (num_rel, judgements with label >= rel_level; num_rel_graded, with label > 0)."""
    num_rel = np.bincount(qrels_codes, weights=labels >= rel_level, minlength=n_queries).astype(np.int64)
    num_rel_graded = np.bincount(qrels_codes, weights=labels > 0, minlength=n_queries).astype(np.int64)
    return num_rel, num_rel_graded
