"""One self-contained HTML page from the collected module pages: a Jinja2 template with
autoescaping on (every string from the input is escaped; only the SVG drawn by hloscope
and Graphviz is inserted as markup), the CSS and one small script inline, and a
Content-Security-Policy that lets only that script run (by its hash), so the page works
offline, fetches nothing, and a string that escaped escaping still could not execute."""

from __future__ import annotations

import base64
import hashlib
from importlib import resources

from hloscope.report.diff import METRIC_FORMAT
from hloscope.units import human_bytes, human_seconds, human_si


def _text(name: str) -> str:
    return resources.files("hloscope.html").joinpath(name).read_text(encoding="utf-8")


def render_page(pages: list, title: str, errors: list[str] | None = None,
                trace: str | None = None) -> str:
    import jinja2

    from hloscope._version import __version__

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters.update(bytes=lambda n: human_bytes(n or 0), seconds=lambda t: human_seconds(t or 0.0),
                       si=lambda v: human_si(v, decimals=2),
                       metric=lambda value, name: METRIC_FORMAT[name](value))
    script = _text("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    template = env.from_string(_text("report.html.j2"))
    return template.render(pages=pages, title=title, errors=errors or [], trace=trace,
                           version=__version__, script=script, script_hash=f"sha256-{digest}")
