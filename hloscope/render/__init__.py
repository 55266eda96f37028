"""Renderers: Graphviz fusion graphs."""
