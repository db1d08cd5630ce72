#!/usr/bin/env bash
# Every command's output on the data shipped for the tests and in the package, of this checkout
# against another's, byte for byte (stdout, stderr, exit code): eval in every format and the option
# combinations the tests use, judges, pool and table, and their usage errors.
#
#   bash benchmarks/compare_commands.sh OTHER_CHECKOUT
#
# OTHER_CHECKOUT has its own .venv. Paths are the same for both (this checkout's data).
set -u
OTHER=$(cd "$1" && pwd); HERE=$(cd "$(dirname "$0")/.." && pwd)
S=$HERE/tests/data/small; P=$HERE/src/ndcg_report/data/dl19-passage
Q=$P/qrels.dl19-passage.txt; B=$P/run.msmarco-v1-passage.bm25-default.dl19.txt.gz; M=$P/monot5.dl19.run.gz
fail=0; n=0; out=$(mktemp -d); cd "$out" || exit 1
check() {
  "$OTHER/.venv/bin/ndcg-report" "$@" > a.out 2> a.err; ra=$?; [ -f o.tsv ] && mv o.tsv a.tsv
  "$HERE/.venv/bin/ndcg-report" "$@" > b.out 2> b.err; rb=$?; [ -f o.tsv ] && mv o.tsv b.tsv
  n=$((n + 1))
  if ! cmp -s a.out b.out || [ $ra != $rb ] || ! cmp -s a.err b.err || { [ -f a.tsv ] && ! cmp -s a.tsv b.tsv; }; then
    echo "differs (exit $ra / $rb): $*"; fail=$((fail + 1))
  fi
  rm -f a.tsv b.tsv
}
for fmt in trec csv json; do
  for q in "" "-q"; do
    check eval $q --format $fmt "$S/qrels.txt" "$S/monot5.txt"
    check eval $q --format $fmt -m all_trec "$S/qrels.txt" "$S/bm25.txt"
    check eval $q --format $fmt -m all_trec -l 2 "$Q" "$B"
    check eval $q --format $fmt --preset trec-dl "$Q" "$M"
    check eval $q --format $fmt --preset beir "$Q" "$M"
    check eval $q --format $fmt --preset msmarco --digits 6 "$Q" "$B"
    check eval $q --format $fmt -m "gm_map gm_bpref num_rel num_q" -l 3 --no-relevant skip "$Q" "$B"
    check eval $q --format $fmt -k 5,10,all --gain exponential --missing skip "$Q" "$M"
    check eval $q --format $fmt --judged-only -m nDCG@10 "$Q" "$B"
    check eval $q --format $fmt -M 100 -m "map P.10 recall.1000" "$Q" "$M"
    check eval $q --format $fmt "$Q" monoT5="$M" BM25="$B"
  done
done
check eval --identical-ids drop "$S/qrels.txt" "$S/monot5.txt"
check eval -m nDCG@x "$S/qrels.txt" "$S/monot5.txt"
check eval -k 0 "$S/qrels.txt" "$S/monot5.txt"
check eval --missing nope "$S/qrels.txt" "$S/monot5.txt"
check eval --no-relevant nope "$S/qrels.txt" "$S/monot5.txt"
check eval --preset nope "$S/qrels.txt" "$S/monot5.txt"
check eval -l -1 "$S/qrels.txt" "$S/monot5.txt"
check eval "$S/monot5.txt" "$S/qrels.txt"
check eval "$S/qrels.txt" "$S/missing.txt"
for fmt in text json csv; do
  check judges --format $fmt "$S/qrels.txt" "$Q"
  check judges --format $fmt "$Q" "$P/qrels.dl19-simulated-judge.txt" monoT5="$M" BM25="$B" --baseline BM25
done
check pool "$Q" "$M" "$B" -k 10 --out o.tsv
check pool "$S/qrels.txt" A="$S/monot5.txt" B="$S/bm25.txt" --out o.tsv
rm -rf "$out"
echo "$n compared, $fail differ"
[ $fail = 0 ]
