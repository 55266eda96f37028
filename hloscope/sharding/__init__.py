"""Collectives and the device mesh they run over, recovered from the HLO alone."""

from __future__ import annotations

from hloscope.sharding.collectives import Collective, analyze
from hloscope.sharding.mesh import Mesh, MeshAxis

__all__ = ["Collective", "Mesh", "MeshAxis", "analyze"]
