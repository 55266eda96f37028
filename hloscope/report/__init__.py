"""Output formats for lint results: one module per format, FORMATS maps names to writers."""

from __future__ import annotations

from hloscope.report import github, json_format, sarif, text

FORMATS = {
    "text": text.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}
