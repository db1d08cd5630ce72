#!/usr/bin/env bash
# The reports of this checkout against another's, byte for byte: the demo's summary.json and
# per_query.csv, every report of a batch of examples/nightly.yml, and the batch's index.html
# rendered by each checkout from the same history under one frozen clock (faketime).
#
#   bash benchmarks/compare_reports.sh OTHER_CHECKOUT [WORK_DIR]
#
# OTHER_CHECKOUT has its own .venv. Each checkout builds into the same paths in turn (a report's
# command line names its --out). summary.json is compared whole and without its `command`, which
# records the build's own options in the order the checkout writes them; every other file whole.
set -u
OTHER=$(cd "$1" && pwd); W=${2:-$(mktemp -d)}; HERE=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$W"
build() {  # CHECKOUT NAME
  rm -rf "$W/run"; mkdir -p "$W/run"
  "$1/.venv/bin/ndcg-report" demo --out "$W/run/demo" > "$W/run/demo.log" 2>&1 || echo "$2: demo failed"
  sed "s#^output: .*#output: $W/run/nightly#" "$HERE/examples/nightly.yml" > "$W/run/nightly.yml"
  NDCG_REPORT_CACHE="$W/cache" "$1/.venv/bin/ndcg-report" batch "$W/run/nightly.yml" > "$W/run/batch.log" 2>&1 \
    || echo "$2: batch failed"
  rm -rf "${W:?}/$2"; mv "$W/run" "$W/$2"
}
without_command() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("command",None); print(json.dumps(d,sort_keys=True))' "$1"; }
build "$OTHER" before
build "$HERE" after
fail=0; n=0
for file in $(cd "$W/after" && find demo nightly -name summary.json -o -name per_query.csv | sort); do
  n=$((n + 1))
  if ! cmp -s "$W/before/$file" "$W/after/$file"; then
    if [ "${file##*/}" = summary.json ] && [ "$(without_command "$W/before/$file")" = "$(without_command "$W/after/$file")" ]; then
      echo "same but its command: $file"
    else
      echo "differs: $file"; fail=$((fail + 1))
    fi
  fi
done
for who in before after; do  # the index of one history (after's), rendered by each checkout at one instant
  rm -rf "$W/index-$who"; cp -a "$W/after/nightly" "$W/index-$who"
  mkdir -p "$W/config-$who"  # the same file name for both: the index's title is the config's
  sed "s#^output: .*#output: $W/index-$who#" "$HERE/examples/nightly.yml" > "$W/config-$who/nightly.yml"
  checkout=$([ $who = before ] && echo "$OTHER" || echo "$HERE")
  faketime -f '2026-01-01 00:00:00' "$checkout/.venv/bin/ndcg-report" batch --index "$W/config-$who/nightly.yml" > /dev/null 2>&1
done
n=$((n + 1))
sed "s#$W/index-before#ROOT#g" "$W/index-before/index.html" > "$W/index-before.html"
sed "s#$W/index-after#ROOT#g" "$W/index-after/index.html" > "$W/index-after.html"
cmp -s "$W/index-before.html" "$W/index-after.html" || { echo "differs: index.html"; fail=$((fail + 1)); }
echo "$n compared, $fail differ (in $W)"
[ $fail = 0 ]
