rm -rf /tmp/bench/out-j1000-new; exec /work/main/.venv/bin/ndcg-report  --out /tmp/bench/out-j1000-new
