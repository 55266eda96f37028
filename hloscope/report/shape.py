"""`hloscope shape` as text: logical vs padded size under a tiled layout."""

from __future__ import annotations


def shape_text(result: dict) -> str:
    return "\n".join([
        f"shape        {result['shape']}",
        f"physical     {result['logical_dims']} (major to minor)",
        f"tiles        {' then '.join(str(tuple(t)) for t in result['tile_levels']) or 'none'}",
        f"padded dims  {result['padded_dims']}",
        f"bytes        {result['logical_bytes']} logical, {result['padded_bytes']} padded "
        f"({result['ratio']:.2f}x)",
        f"memory space {result['memory_space']} ({result['memory_space_name']})",
    ])
