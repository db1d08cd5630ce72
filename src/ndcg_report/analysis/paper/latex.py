"""A Grid as a LaTeX table: booktabs rules, every text escaped, marks and letters as superscripts.

The table needs only `\\usepackage{booktabs}`: marks are `$\\uparrow$`/`$\\downarrow$`/`$\\dagger$`, the caption
states what they, the bold and the letters mean, and numbers are plain text (no siunitx `\\num`).
"""

from __future__ import annotations

import re
import unicodedata

from ndcg_report.analysis.html import DEEPER
from ndcg_report.analysis.paper.grid import ABOVE, BELOW, Cell, Grid, Row, column_groups

SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
            "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
            ">": r"\textgreater{}", "|": r"\textbar{}", "`": r"\textasciigrave{}", "\t": " ", "\n": " ", "\r": " "}
LIGATURES = "-'"  # doubled, TeX would set them as one dash or quote
_GREEK = {"alpha": "alpha", "beta": "beta", "gamma": "gamma", "delta": "delta", "epsilon": "epsilon", "zeta": "zeta",
          "eta": "eta", "theta": "theta", "iota": "iota", "kappa": "kappa", "lambda": "lamda", "mu": "mu", "nu": "nu",
          "xi": "xi", "pi": "pi", "rho": "rho", "sigma": "sigma", "tau": "tau", "upsilon": "upsilon", "phi": "phi",
          "chi": "chi", "psi": "psi", "omega": "omega"}  # LaTeX's name: Unicode's
# what pdflatex cannot set from UTF-8 text, in notes and names alike: the Greek letters LaTeX has (math), dashes
SYMBOLS = {"≥": r"$\geq$", "≤": r"$\leq$", "–": "--", "—": "---", "−": "$-$", "×": r"$\times$", "…": r"\ldots{}",
           DEEPER: r"$\dagger$",
           **{unicodedata.lookup(f"GREEK SMALL LETTER {u}"): f"$\\{latex}$" for latex, u in _GREEK.items()},
           **{unicodedata.lookup(f"GREEK CAPITAL LETTER {_GREEK[latex]}"): f"$\\{latex.capitalize()}$" for latex in
              ("gamma", "delta", "theta", "lambda", "xi", "pi", "sigma", "upsilon", "phi", "psi", "omega")}}
MARKS = {1: r"\uparrow", -1: r"\downarrow"}
SHALLOW = r"\dagger"  # a cell's DEEPER
NOTE_MARKS = {ABOVE: r"$\uparrow$", BELOW: r"$\downarrow$", DEEPER: rf"$^{{{SHALLOW}}}$"}  # the notes' ▲/▼/†
MISSING = "--"
THIN_SPACE = r"\,"
PREAMBLE = r"\usepackage{booktabs}"


def latex_escape(text: object) -> str:
    """Text safe in LaTeX's text mode, shown as written: its special characters (_ & % # $ { } ~ ^ \\ < > | `)
    as commands, no ligature of a doubled - or ' (`--` stays two hyphens), line breaks as spaces, and a
    few symbols pdflatex cannot set from UTF-8 (Greek letters, ≥ – −) as LaTeX's own."""
    text = str(text)
    return "".join((SPECIALS.get(char) or SYMBOLS.get(char) or char)
                   + ("{}" if char in LIGATURES and text[i + 1:i + 2] == char else "") for i, char in enumerate(text))


def note_latex(text: str) -> str:
    """A note: latex_escape, and its ▲/▼/† as the table's marks."""
    return "".join(NOTE_MARKS.get(part) or latex_escape(part) for part in re.split(f"([{''.join(NOTE_MARKS)}])", text))


def latex_grid(grid: Grid, *, label: str = "tab:leaderboard") -> str:
    """The grid as a `table` float with a booktabs `tabular`: the caption (its first sentence, then the
    notes), the label, a header of one row (or of groups over cut-offs), the names left-aligned and the
    numbers right-aligned, a rule above the baseline."""
    lead = 2 if grid.letters else 1
    spec = "l" * lead + "r" * len(grid.columns)
    caption = latex_escape(grid.caption)
    full = " ".join([caption, *(note_latex(note) for note in grid.notes)])
    lines = [f"% needs {PREAMBLE} in the preamble",
             r"\begin{table}[t]", r"  \centering", rf"  \caption[{_bracketed(caption)}]{{{full}}}"]
    if label:
        lines.append(rf"  \label{{{latex_escape(label)}}}")
    lines += [rf"  \begin{{tabular}}{{{spec}}}", r"    \toprule", *_header(grid, lead), r"    \midrule"]
    for position, row in enumerate(grid.rows):
        if row.baseline and position and not grid.rows[position - 1].baseline:
            lines.append(r"    \midrule")
        lines.append("    " + _row(row, grid))
    lines += [r"    \bottomrule", r"  \end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def _bracketed(text: str) -> str:
    """text as an optional argument: in braces if it holds a ], which would end the argument there."""
    return f"{{{text}}}" if "]" in text else text


def _header(grid: Grid, lead: int) -> list[str]:
    stub = ([r"\#"] if grid.letters else []) + [latex_escape(grid.stub)]
    if not grid.grouped:
        return ["    " + " & ".join(stub + [latex_escape(c.label) for c in grid.columns]) + r" \\"]
    top, rules, bottom = [""] * lead, [], list(stub)
    for group, positions in column_groups(grid.columns):
        columns = [grid.columns[p] for p in positions]
        if not group:
            top.append("")
            bottom.append(latex_escape(columns[0].label))
            continue
        first, last = positions[0] + lead + 1, positions[-1] + lead + 1
        top.append(rf"\multicolumn{{{len(positions)}}}{{c}}{{{latex_escape(group)}}}")
        rules.append(rf"\cmidrule(lr){{{first}-{last}}}")
        bottom += [latex_escape(c.sub) for c in columns]
    return ["    " + " & ".join(top) + r" \\", "    " + " ".join(rules), "    " + " & ".join(bottom) + r" \\"]


def _row(row: Row, grid: Grid) -> str:
    name = latex_escape(row.name) + (f" ({row.role})" if row.role else " (baseline)" if row.baseline else "")
    cells = ([latex_escape(row.letter)] if grid.letters else []) + [name] + [_cell(cell, grid.numbered) for cell in row.cells]
    return " & ".join(cells) + r" \\"


def _cell(cell: Cell, numbered: bool = False) -> str:
    if not cell.text:
        return MISSING
    text = latex_escape(cell.text)
    text = rf"\textbf{{{text}}}" if cell.bold else text
    signs = [MARKS[sign] + (f"_{{{number}}}" if numbered else "") for sign, number in Grid.marks(cell)]
    marks = (signs + ([SHALLOW] if cell.shallow else [])
             + ([rf"\mathrm{{{cell.letters}}}"] if cell.letters else []))
    return text + ("$^{" + THIN_SPACE.join(marks) + "}$" if marks else "")
