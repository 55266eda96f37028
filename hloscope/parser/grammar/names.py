"""Names XLA's parser refuses: bare words its lexer reads as a type or keyword, and
instructions named after a type (checked against jaxlib's parser, word by word)."""

from __future__ import annotations

from hloscope.ir.shape import ELEMENT_BITS

# Bare words XLA's lexer reads as something other than a name: the element types and its
# keywords; written with a `%` they are names (`tuple` and `buffer` are names either way).
RESERVED = frozenset(ELEMENT_BITS) | frozenset({
    "true", "false", "inf", "nan", "HloModule", "ENTRY", "ROOT", "maximal", "replicated",
    "manual", "unreduced", "unknown", "last_tile_dim_replicate", "shard_as", "shard_like"})


def refused(word: str, defines: bool = False) -> str | None:
    """Why XLA's parser refuses `word` (as written, with or without its `%`) where a name is
    expected; `defines`: the name an instruction is given, which may not be a type's even
    with its `%`. None when it is a name."""
    if word.startswith("%"):
        if defines and word[1:] in ELEMENT_BITS:
            return (f"illegal instruction name: {word[1:]} (a type to XLA's parser); rename it, "
                    f"e.g. {word[1:]}_")
        return None
    if word in RESERVED:
        return f"expects a name: {word!r} is a type or keyword to XLA's parser"
    return None
