"""The offline HTML of an executed report notebook, as `build` writes it, also as an nbconvert
exporter: `jupyter nbconvert --to ndcg_offline report.ipynb` (registered under nbconvert.exporters)."""

from __future__ import annotations

import os
import re
from importlib import resources
from typing import Any

from nbconvert.exporters import HTMLExporter
from traitlets import Bool, default

TEMPLATE = "ndcg_offline"


def template_folder() -> str:
    """The folder holding the ndcg_offline template (shipped in ndcg_report.report)."""
    return str(resources.files("ndcg_report.report") / "templates")


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
        body, resources = super().from_notebook_node(nb, resources, **kw)
        return strip_style_comments(body), resources


def strip_style_comments(page: str) -> str:
    """Drop /* comments */ inside <style> blocks (the inlined CSS cites web pages in them)."""
    return re.sub(
        r"(<style[^>]*>)(.*?)(</style>)",
        lambda m: m.group(1) + re.sub(r"/\*.*?\*/", "", m.group(2), flags=re.S) + m.group(3),
        page, flags=re.S,
    )
