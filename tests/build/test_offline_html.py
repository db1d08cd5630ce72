"""The offline exporter's page equals nbconvert's HTMLExporter page, which it builds without nbconvert's
last BeautifulSoup pass: the same alt text and tabindex attributes, added to the page as written."""

from __future__ import annotations

import base64

import nbformat
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter

from ndcg_report.build.steps.offline_html import NO_ALT, OfflineHTMLExporter, strip_style_comments

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode("ascii")


def pages(notebook: nbformat.NotebookNode) -> tuple[str, str]:
    """(ours, nbconvert's HTMLExporter's with the offline template) for notebook."""
    resources = {"metadata": {"name": "report"}}
    ours, _ = OfflineHTMLExporter().from_notebook_node(notebook, resources=dict(resources))
    theirs, _ = HTMLExporter.from_notebook_node(OfflineHTMLExporter(), notebook, resources=dict(resources))
    return ours, strip_style_comments(theirs)


def test_the_page_is_nbconvert_s_with_the_same_attributes():
    cell = nbformat.v4.new_code_cell("x = 1", execution_count=1, outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
        nbformat.v4.new_output("display_data", data={"text/html": (
            f'<p>a <img src="data:image/png;base64,{PNG}" alt="given"> and <img src="data:image/png;base64,{PNG}"/>'
            '</p><div class="jp-OutputArea-output mine">nested</div><table><tr><td>&lt;div class="jp-Cell'
            '-inputWrapper"&gt;</td></tr></table>')}),
        nbformat.v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=1),
        nbformat.v4.new_output("stream", name="stdout", text="printed\n"),
    ])
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title\n\ntext"), cell,
                                               nbformat.v4.new_markdown_cell("more")])
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    ours, theirs = pages(notebook)
    assert str(BeautifulSoup(ours, features="html.parser")) == theirs
    assert ours.count(f'alt="{NO_ALT}"') == 2 and 'alt="given"' in ours
    assert ours.count('tabindex="0"') == theirs.count('tabindex="0"') >= 5
