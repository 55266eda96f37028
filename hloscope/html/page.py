"""One self-contained HTML page from the collected module pages: a Jinja2 template with
autoescaping on (every string from the input is escaped; only the SVG drawn by hloscope
and Graphviz is inserted as markup), the CSS and one small script inline, and a
Content-Security-Policy that lets only that script run (by its hash), so the page works
offline, fetches nothing, and a string that escaped escaping still could not execute."""

from __future__ import annotations

import base64
import hashlib
from importlib import resources

from hloscope.units import human_bytes, human_seconds


def _si(v: float) -> str:
    for p, name in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= p:
            return f"{v / p:.2f} {name}"
    return f"{v:g}"


def _metric(value: float, name: str) -> str:
    """A diff total as its kind reads: seconds, bytes, a share, a count."""
    if name in ("step_time", "exposed"):
        return human_seconds(value or 0.0)
    if name in ("bytes", "hbm_peak"):
        return human_bytes(value or 0)
    if name == "mfu":
        return f"{value:.1%}"
    return _si(value) if name == "flops" else f"{value:g}"


def _text(name: str) -> str:
    return resources.files("hloscope.html").joinpath(name).read_text(encoding="utf-8")


def render_page(pages: list, title: str, errors: list[str] | None = None,
                trace: str | None = None) -> str:
    import jinja2

    from hloscope._version import __version__

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters.update(bytes=lambda n: human_bytes(n or 0), seconds=lambda t: human_seconds(t or 0.0),
                       si=_si, metric=_metric)
    script = _text("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    template = env.from_string(_text("report.html.j2"))
    return template.render(pages=pages, title=title, errors=errors or [], trace=trace,
                           version=__version__, script=script, script_hash=f"sha256-{digest}")
