rm -rf /tmp/bench/out-j1000-old; exec /work/wt-start/.venv/bin/ndcg-report  --out /tmp/bench/out-j1000-old
