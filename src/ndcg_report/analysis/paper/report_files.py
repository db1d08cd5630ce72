"""What a report can carry of its paper tables: leaderboard.tex and leaderboard.md, and a section to copy them from.

Both are made from the report's summary.json record, so they hold its numbers; with more than one
system under test the tables carry the letters of the pairwise test (on the headline measure).
"""

from __future__ import annotations

from collections.abc import Mapping

from ndcg_report.analysis.html import details_html, escape, text_html
from ndcg_report.analysis.paper.leaderboard import leaderboard_latex, leaderboard_markdown

LATEX_FILE, MARKDOWN_FILE = "leaderboard.tex", "leaderboard.md"
SECTION_TITLE = "Tables for a paper"


def leaderboard_files(summary: Mapping) -> dict[str, str]:
    """{"leaderboard.tex": the LaTeX table, "leaderboard.md": the Markdown table} of a summary.json record."""
    letters = _letters(summary)
    return {LATEX_FILE: leaderboard_latex(summary, letters=letters),
            MARKDOWN_FILE: leaderboard_markdown(summary, letters=letters)}


def paper_section_html(summary: Mapping) -> str:
    """A collapsed <details> "Tables for a paper": the LaTeX and the Markdown of the leaderboard, each in
    an escaped <pre> ready to copy, and the files and command that give them."""
    files = leaderboard_files(summary)
    note = (f"The leaderboard as LaTeX (booktabs: add \\usepackage{{booktabs}} to the preamble) and as GitHub "
            f"Markdown, with the marks and the letters explained in the caption and the legend. The same texts are "
            f"{LATEX_FILE} and {MARKDOWN_FILE} beside this report; the command ndcg-report table makes them from its "
            "summary.json with other measures, systems or digits.")
    body = (text_html(note, "p", "note")
            + text_html("LaTeX", "h4") + f'<pre class="paper-table">{escape(files[LATEX_FILE])}</pre>'
            + text_html("Markdown", "h4") + f'<pre class="paper-table">{escape(files[MARKDOWN_FILE])}</pre>')
    return details_html(SECTION_TITLE, body)


def _letters(summary: Mapping) -> bool:
    """Letters where they say something: with more than one system under test."""
    return sum(system.get("role") == "run" for system in summary.get("systems", [])) > 1
