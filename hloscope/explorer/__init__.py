"""Model Explorer: an adapter that opens HLO text as graphs and node data overlays of
hloscope's numbers. Needs the `explorer` extra (ai-edge-model-explorer); Model Explorer
loads the extensions from `hloscope.explorer.main`."""

from __future__ import annotations
