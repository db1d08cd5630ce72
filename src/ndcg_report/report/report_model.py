"""The Report: everything a report shows, computed once from validated parameters (report.content
makes it; report.checks, report.results and report.outputs read it)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ndcg_report.inputs.trec import Qrels
from ndcg_report.report.experiment import Experiment
from ndcg_report.report.parameters import ReportParameters, build_command, default_title


@dataclass(frozen=True)
class Report:
    """Everything the report shows, computed once from validated parameters."""

    params: ReportParameters
    experiment: Experiment
    qrels: Qrels
    files: pd.DataFrame
    warnings: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return self.params.title or default_title(self.experiment.names, self.experiment.baseline_name)

    @property
    def command(self) -> str:
        return self.params.command or build_command(self.params)

    @property
    def topics(self) -> pd.Series | None:
        return self.experiment.topics
