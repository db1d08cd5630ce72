"""The readers of runs, qrels and topics, one module per accepted format; importing the package registers them.

In this order (inputs.formats.registry lists and sniffs formats in the order they were registered).
"""

import ndcg_report.inputs.formats.trec  # noqa: F401  TREC text
import ndcg_report.inputs.formats.beir_tsv  # noqa: F401  BEIR TSV qrels
import ndcg_report.inputs.formats.json_documents  # noqa: F401  JSON
import ndcg_report.inputs.formats.json_lines  # noqa: F401  JSON lines
import ndcg_report.inputs.formats.parquet  # noqa: F401  Parquet
import ndcg_report.inputs.formats.topics  # noqa: F401  TSV, BEIR queries and TREC topic files
