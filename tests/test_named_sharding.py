"""Named shardings (`{mesh['a'=2,'b'=4], [{'a'}, {}], replicated={'b'}}`, what Shardy
exports), read as the tiled sharding XLA converts them to. The oracle is XLA's own
conversion: jaxlib's HloSharding.from_string(...).v3_to_v2_sharding(), on hand-picked cases
and on seeded random ones of the forms it takes without aborting (no size-1 axes, no identity
device_ids, no adjacent sub-axes it would merge)."""

from __future__ import annotations

import random

import pytest

from hloscope.parser import ParseError, parse

CASES = [
    "{mesh['a'=2,'b'=4], [{'a'}, {'b'}]}",
    "{mesh['a'=2,'b'=4], [{'b'}, {'a'}]}",
    "{mesh['a'=2,'b'=4], [{'a'}, {}], replicated={'b'}}",
    "{mesh['a'=2,'b'=4], [{'a'}, {}]}",
    "{mesh['a'=2,'b'=4], [{'a', 'b'}, {}]}",
    "{mesh['a'=2,'b'=4], [{'b', 'a'}, {}]}",
    "{mesh['a'=2,'b'=4], [{'a'}, {}], manual={'b'}}",
    "{mesh['a'=2,'b'=4], [{'a'}, {}], unreduced={'b'}}",
    "{mesh['a'=2,'b'=2,'c'=2], [{'c'}, {}], manual={'a'}}",
    "{mesh['a'=4,'b'=4], [{'a':(1)2}, {'b'}]}",
    "{mesh['a'=4,'b'=4], [{'a':(2)2}, {'b'}]}",
    "{mesh['a'=8], [{'a':(2)2}, {}]}",
    "{mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0), [{'a'}, {}]}",
    "{mesh['a'=2,'b'=4], device_ids=(1,0,3,2,5,4,7,6), [{'b'}, {'a'}]}",
    "{mesh['a'=2,'b'=4], [{'0'}, {'1'}]}",
    "{mesh[\"a\"=2,\"b\"=4], [{\"a\"}, {}]}",
    "{mesh['a'=2,'b'=4], [{'a', ?}, {?}]}",
    "{mesh['a'=2,'b'=4], [{}, {}]}",
    "{mesh['a'=2,'b'=4], [{}, {}], manual={'a', 'b'}}",
]


def _xla(text: str) -> tuple[str, list[int], list[int], list[str]]:
    """XLA's tiled form: (kind, tile dimensions, devices, subgroup kinds)."""
    from jax._src.lib import xla_client as xc

    v = xc.HloSharding.from_string(text).v3_to_v2_sharding()
    if not list(v.tile_assignment_devices()) or v.is_replicated():
        return str(v).strip("{}"), [], [], []
    kinds = ["replicated"] if v.replicate_on_last_tile_dim() else [
        str(t).rsplit(".", 1)[-1].lower() for t in v.subgroup_types()]
    return "tiled", list(v.tile_assignment_dimensions()), list(v.tile_assignment_devices()), kinds


def _ours(text: str, rank: int, strict: bool = True):
    shape = "f32[" + ",".join(["8"] * rank) + "]"
    (m,) = parse(f"HloModule m\nENTRY e {{\n  ROOT p = {shape} parameter(0), sharding={text}\n}}\n",
                 "named", strict=strict)
    s = m.entry.root.attr("sharding")
    if s.kind != "tiled":
        return s.kind, [], [], []
    kinds = ["replicated"] if s.last_tile_dim_replicate else list(s.last_tile_dims)
    return "tiled", list(s.tile_shape), list(s.devices), kinds


def _random_cases(seed: int, count: int) -> list[tuple[str, int]]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        names = ["a", "b", "c"][: rng.randint(1, 3)]
        sizes = [rng.choice([2, 4]) for _ in names]
        rank = rng.randint(1, 3)
        pool = []
        for name, size in zip(names, sizes):
            pool += [f"'{name}':(1)2", f"'{name}':(2)2"] if size == 4 and rng.random() < 0.4 else [f"'{name}'"]
        rng.shuffle(pool)
        dims: list[list[str]] = [[] for _ in range(rank)]
        groups: dict[str, list[str]] = {"manual": [], "unreduced": [], "replicated": []}
        for ref in pool:
            r = rng.random()
            if r < 0.6:
                dims[rng.randrange(rank)].append(ref)
            elif r < 0.7:
                groups["manual"].append(ref)
            elif r < 0.77:
                groups["unreduced"].append(ref)
            elif r < 0.9:
                groups["replicated"].append(ref)
        where = {ref: k for k, d in enumerate(dims) for ref in d}
        if any(x.endswith("(1)2") and not where.get(x, 99) < where.get(x.replace("(1)2", "(2)2"), -1)
               for x in pool):
            continue  # a split axis: both parts on dimensions, the major one first
        for refs in groups.values():
            refs.sort()  # (XLA aborts on a group out of the mesh's order)
        devices = ""
        if rng.random() < 0.3:
            ids = list(range(2 ** sum(s.bit_length() - 1 for s in sizes)))
            while ids == sorted(ids):
                rng.shuffle(ids)
            devices = ", device_ids=(" + ",".join(map(str, ids)) + ")"
        text = ("{mesh[" + ",".join(f"'{n}'={s}" for n, s in zip(names, sizes)) + "]" + devices + ", ["
                + ", ".join("{" + ", ".join(d) + "}" for d in dims) + "]"
                + "".join(f", {g}={{" + ", ".join(r) + "}" for g, r in groups.items() if r) + "}")
        out.append((text, rank))
    return out


@pytest.mark.parametrize("text", CASES)
def test_a_named_sharding_is_the_tiled_one_xla_makes(text):
    rank = text.split("], [", 1)[1].count("{") if "], [" in text else 2
    rank = max(rank - sum(g in text for g in ("manual=", "unreduced=", "replicated=")), 1)
    for strict in (False, True):
        assert _ours(text, rank, strict) == _xla(text), text


def test_random_named_shardings_agree_with_xlas_conversion():
    cases = _random_cases(seed=11, count=150)
    differ = [text for text, rank in cases if _ours(text, rank) != _xla(text)]
    assert differ == []


@pytest.mark.parametrize("text, message", [
    ("{mesh['a'=2,'b'=4], [{?, 'a'}, {}]}", "malformed sharding"),         # the ? comes last
    ("{mesh['a'=2,'b'=4], [{'a'}, {}], foo={'b'}}", "not foo="),
    ("{mesh['a'=2,'b'=4], replicated={'b'}}", "malformed sharding"),       # no dimension list
    ("{mesh[a=2,b=4], [{a}, {}]}", "malformed sharding"),                  # axis names are strings
    ("{mesh['a'=2,'b'=4], [{'c'}, {}]}", "axis 'c' is not a valid axis"),
    ("{mesh['a'=2,'b'=4], [{'a'}, {'a'}]}", "overlap"),
    ("{mesh['a'=2,'a'=4], []}", "duplicate axis names"),
    ("{mesh['a'=4], [{'a':(1)2, 'a':(2)2}]}", "can be merged"),
])
def test_what_xla_refuses_or_aborts_on_is_a_located_error(text, message):
    with pytest.raises(ParseError, match=message):
        _ours(text, 2)
