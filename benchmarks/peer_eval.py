"""One peer's whole evaluation, as run_benchmark.py times it, runnable on its own (to time as a whole process).

    .venv/bin/python benchmarks/peer_eval.py {pytrec_eval,ranx,ir_measures} QRELS RUN [CUTOFFS]

Runs the same child program run_benchmark.py runs in its fresh process (NDCG at CUTOFFS, default
1,3,5,10,20,100,1000, for every query, then the means) and prints its one JSON line.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_benchmark  # noqa: E402

CHILDREN = {"pytrec_eval": run_benchmark.PYTREC_EVAL_CHILD, "ranx": run_benchmark.RANX_CHILD,
            "ir_measures": run_benchmark.IR_MEASURES_CHILD}

if __name__ == "__main__":
    if len(sys.argv) not in (4, 5) or sys.argv[1] not in CHILDREN:
        sys.exit(__doc__)
    tool, qrels, run = sys.argv[1:4]
    cutoffs = sys.argv[4] if len(sys.argv) == 5 else ",".join(map(str, run_benchmark.CUTOFFS))
    sys.argv = ["-c", qrels, run, cutoffs]
    exec(compile(CHILDREN[tool], f"<{tool} child>", "exec"), {"__name__": "__main__"})
