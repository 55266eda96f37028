"""hloscope: static analysis of XLA HLO text (and the Mosaic kernels inside it)."""

from __future__ import annotations

__version__ = "0.1.0"

# Whether strict mode may parse a large module's second half in a spawned worker, which
# re-imports the caller's main module: the CLI allows it; a library caller may set this to
# True when its main module runs only under `if __name__ == "__main__":`.
spawn_workers = False
