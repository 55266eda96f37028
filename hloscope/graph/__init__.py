"""IR -> networkx: a derived view of a module, never the source of truth."""

from __future__ import annotations

from hloscope.graph.build import build_graph, node_id
from hloscope.graph.queries import called_instructions, neighbourhood, users

__all__ = ["build_graph", "called_instructions", "neighbourhood", "node_id", "users"]
