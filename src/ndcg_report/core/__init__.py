"""The core: ranking runs, every measure per query and overall, and eval's output formats.

Matching a run to its qrels (matching.py), trec_eval's order (ranking.py), the one evaluation pass
(evaluation_pass.py) and its result (evaluation.py), the measures (measures/), their output
formats, tie bounds, top lists and pools, and the evaluation of a run in parts (streaming.py,
partitions.py).
"""
