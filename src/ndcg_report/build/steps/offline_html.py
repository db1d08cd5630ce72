"""The offline HTML of an executed report notebook, also as the nbconvert exporter `ndcg_offline`.

The HTML `build` writes; as the exporter: `jupyter nbconvert --to ndcg_offline report.ipynb` (registered
under nbconvert.exporters).
"""

from __future__ import annotations

import os
import re
from importlib import resources
from typing import Any

from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from traitlets import Bool, default

TEMPLATE = "ndcg_offline"
NO_ALT = "No description has been provided for this image"  # nbconvert's alt text for an image without one
_FOCUSABLE_DIV = re.compile(r'(<div class="[^"]*\b(?:jp-OutputArea-output|jp-Cell-inputWrapper)\b[^"]*"[^>]*?)(/?>)')
_IMG_WITHOUT_ALT = re.compile(r'(<img\b(?![^>]*\salt=)[^>]*?)(\s*/?>)')


def template_folder() -> str:
    """The folder holding the ndcg_offline template (shipped in ndcg_report.build)."""
    return str(resources.files("ndcg_report.build") / "templates")


class OfflineHTMLExporter(HTMLExporter):
    """HTML with code and prompts hidden, figures embedded and no script, style or font from the network."""

    export_from_notebook = "HTML, offline (ndcg-report)"
    exclude_input = Bool(True, help="Hide the code cells.").tag(config=True)
    exclude_input_prompt = Bool(True, help="Hide the input prompts.").tag(config=True)
    exclude_output_prompt = Bool(True, help="Hide the output prompts.").tag(config=True)

    @default("template_name")
    def _template_name_default(self) -> str:
        return TEMPLATE

    @default("extra_template_basedirs")
    def _default_extra_template_basedirs(self) -> list[str]:
        return [os.getcwd(), template_folder()]

    def from_notebook_node(self, nb: Any, resources: dict | None = None, **kw: Any) -> tuple[str, dict]:
        """HTMLExporter's page without its last pass, which parses the whole page with BeautifulSoup to
        add an image's missing alt text and make outputs focusable (0.4 s of the demo's 0.8 s): both are
        added to the page as written instead (the same attributes; tests/build/test_offline_html.py)."""
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name", None))
        resources = self._init_resources(resources)
        self.register_filter("highlight_code", self.filters.get("highlight_code",
                                                                Highlight2HTML(pygments_lexer=lexer, parent=self)))
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata,
                                                                       parent=self, resources=resources))
        body, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return strip_style_comments(accessible(body)), resources


def accessible(page: str) -> str:
    """What nbconvert's HTMLExporter adds with BeautifulSoup: alt text on an image without one, and
    tabindex="0" on every cell's input and output, so that a keyboard reaches them."""
    page = _IMG_WITHOUT_ALT.sub(lambda m: f'{m.group(1)} alt="{NO_ALT}"{m.group(2)}', page)
    return _FOCUSABLE_DIV.sub(lambda m: f'{m.group(1)} tabindex="0"{m.group(2)}', page)


def strip_style_comments(page: str) -> str:
    """Drop /* comments */ inside <style> blocks (the inlined CSS cites web pages in them)."""
    return re.sub(
        r"(<style[^>]*>)(.*?)(</style>)",
        lambda m: m.group(1) + re.sub(r"/\*.*?\*/", "", m.group(2), flags=re.S) + m.group(3),
        page, flags=re.S,
    )
