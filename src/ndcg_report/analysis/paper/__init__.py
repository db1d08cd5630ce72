"""Tables for a paper: LaTeX, Markdown and CSV of a report's leaderboard, read from summary.json's plain data.

`leaderboard.read_leaderboard` takes the dict a report's `summary.json` holds (or
`record.experiment_record(experiment)`, the same keys made from an Experiment); `grid` lays a table
out as text cells; `latex` and `markdown` write any grid; `judgments` and `suite` make the grids of a
judgment-set comparison and of a suite; `report_files` the files and the section a report can carry.
"""
