"""`ndcg-report batch`: every report of a YAML config built (batch.runner), with index.html and history."""

from __future__ import annotations

import argparse

NAME = "batch"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """batch's arguments: the config, how many reports at once, and what to rebuild."""
    batch = subparsers.add_parser(
        NAME, help="build every report of a YAML config, with index.html and history (exit 3: root busy)")
    batch.add_argument("config", help="YAML config listing the reports (see docs/scheduled-builds.md)")
    batch.add_argument("-j", "--jobs", type=int, default=None,
                       help="reports built at once, each in its own process (default 1, at most the CPU count); "
                            "with --dask, default: the cluster's worker threads")
    batch.add_argument("--force", action="store_true", help="rebuild reports whose inputs did not change")
    batch.add_argument("--index", action="store_true", dest="index_only",
                       help="build nothing: rewrite index.html from the history (a killed batch's reports show as "
                            "interrupted); exit 3 while a batch runs")
    batch.add_argument("--dask", default="", metavar="ADDRESS",
                       help="build each report as a task on the Dask cluster at ADDRESS (tcp://HOST:8786), whose "
                            "workers share the output root and the inputs' paths; this process keeps the lock, "
                            "history and index")


def run(args: argparse.Namespace) -> int:
    """Build the config's reports (batch.runner.main); its exit code, 3 if another batch holds the output root."""
    from ndcg_report.batch.runner import main

    return main(args.config, jobs=args.jobs, force=args.force, index_only=args.index_only, dask=args.dask)
