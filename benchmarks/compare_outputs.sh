#!/usr/bin/env bash
# Every eval output of this checkout against another's, byte for byte (stdout, stderr, exit code).
#
#   bash benchmarks/compare_outputs.sh OTHER_CHECKOUT DATA_DIR
#
# OTHER_CHECKOUT has its own .venv; DATA_DIR holds make_eval_data.py's run.txt and qrels.txt. The
# first 700,000 lines of the run are also written, into DATA_DIR/variants/, as gzip, shuffled and
# with tabs and runs of spaces, for the in-memory, streamed, fallback and normalising paths.
set -u
OTHER=$1; D=$2; S=$D/variants
HERE=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$S"
if [ ! -f "$S/tabs.txt" ]; then
  head -n 700000 "$D/run.txt" > "$S/run.txt"; cp "$D/qrels.txt" "$S/qrels.txt"; gzip -kf "$S/run.txt"
  shuf -n 700000 --random-source=<(yes) "$S/run.txt" > "$S/shuffled.txt"
  awk '{print $1"\t"$2"  "$3" "$4" "$5" "$6}' "$S/run.txt" | head -200000 > "$S/tabs.txt"
fi
fail=0; n=0; out=$(mktemp -d)
check() {
  "$OTHER/.venv/bin/ndcg-report" "$@" > "$out/a.out" 2> "$out/a.err"; ra=$?
  "$HERE/.venv/bin/ndcg-report" "$@" > "$out/b.out" 2> "$out/b.err"; rb=$?
  n=$((n + 1))
  if ! cmp -s "$out/a.out" "$out/b.out" || [ $ra != $rb ] || ! cmp -s "$out/a.err" "$out/b.err"; then
    echo "differs (exit $ra / $rb): $*"; fail=$((fail + 1))
  fi
}
for fmt in trec csv json; do
  for q in "" "-q"; do
    check eval $q --format $fmt -k 1,3,5,10,20,100,1000 "$D/qrels.txt" "$D/run.txt"
    check eval $q --format $fmt "$S/qrels.txt" "$S/run.txt.gz"
    check eval $q --format $fmt --stream "$S/qrels.txt" "$S/run.txt"
    check eval $q --format $fmt --in-memory "$S/qrels.txt" "$S/run.txt"
    check eval $q --format $fmt "$S/qrels.txt" "$S/shuffled.txt"
    check eval $q --format $fmt --stream "$S/qrels.txt" "$S/tabs.txt"
  done
done
check eval -q -m all_trec --stream "$S/qrels.txt" "$S/run.txt"
check eval -q -m all_trec --in-memory "$S/qrels.txt" "$S/run.txt"
check eval -q --preset trec-dl --stream "$S/qrels.txt" "$S/run.txt"
check eval -q --preset msmarco --stream --digits 6 "$S/qrels.txt" "$S/run.txt"
check eval -q --preset beir --stream -M 100 "$S/qrels.txt" "$S/run.txt"
check eval -q --stream -l 2 --gain exponential "$S/qrels.txt" "$S/run.txt"
check eval --stream --format csv "$S/qrels.txt" A="$S/run.txt" B="$S/tabs.txt"
check eval --stream --format json -q "$S/qrels.txt" A="$S/run.txt" B="$S/run.txt.gz"
check eval --stream "$S/qrels.txt" "$S/shuffled.txt"
check eval --stream "$S/run.txt" "$S/qrels.txt"
rm -rf "$out"
echo "$n compared, $fail differ"
[ $fail = 0 ]
