"""The HTML report (`hloscope report`): one offline page per run, built from the same
analyses as the other commands (collect.py) and rendered by a Jinja2 template (page.py)."""

from __future__ import annotations

from hloscope.html.build import build_report

__all__ = ["build_report"]
