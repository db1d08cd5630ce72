"""What a report shows, computed and drawn from evaluated runs: the experiment, its verdicts, tables, drill-downs and figures (nothing of Jupyter, papermill or nbval)."""
