"""`ndcg-report batch`: every report of a YAML config built (batch.runner), with index.html, history and its gates."""

from __future__ import annotations

import argparse

NAME = "batch"
GATE_FILES = {"junit": "JUnit XML: one testsuite per report, one testcase per system and measure",
              "markdown": "a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when it names a file)"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """batch's arguments: the config, how many reports at once, and what to rebuild."""
    batch = subparsers.add_parser(
        NAME, help="build every report of a YAML config, with index.html and history (exit 3: root busy; 4: a gate "
                   "failed)")
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
    batch.add_argument("--pin", default="", metavar="NAME",
                       help="build nothing: keep the report NAME's current build as the one its `gate: {against: "
                            "pinned}` gates against (exit 2 if NAME has no build)")
    for name, what in GATE_FILES.items():
        batch.add_argument(f"--{name}", default="", metavar="FILE",
                           help=f"the gates of every gated report as {what} (see docs/gating.md)")


def run(args: argparse.Namespace) -> int:
    """Build the config's reports (batch.runner.main), or pin one's build; its exit code, 3 if another batch holds
    the output root, 4 if a gate failed."""
    from pathlib import Path

    from ndcg_report.batch.runner import main

    outputs = {name: Path(getattr(args, name)) for name in GATE_FILES if getattr(args, name)}
    return main(args.config, jobs=args.jobs, force=args.force, index_only=args.index_only, dask=args.dask,
                pin_name=args.pin, gate_outputs=outputs)
