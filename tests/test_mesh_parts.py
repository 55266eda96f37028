"""hloscope.sharding.mesh's parts, each against a hand-derived answer (the mutation run of the
sharding package found them untested): how many devices a module runs on, the devices its
shardings tile over, a row-major mesh from collective strides, and a mesh found beside the
module. Modules are HAND-WRITTEN minimal ones where a header attribute is the point."""

from __future__ import annotations

import json

from conftest import FIXTURES

from hloscope.parser import parse
from hloscope.sharding.mesh import MeshAxis, device_count, infer_mesh, mesh_beside, sharded_devices


def _module(header: str = "", body: str = "  ROOT p = f32[8]{0} parameter(0)", path: str = "m.hlo.txt"):
    (m,) = parse(f"// HAND-WRITTEN minimal module\nHloModule m{header}\n\nENTRY e {{\n{body}\n}}\n", path)
    return m


def test_device_count_from_the_header_the_groups_and_the_shardings():
    assert device_count(_module(), []) == 1
    assert device_count(_module(", num_partitions=4"), []) == 4
    assert device_count(_module(", num_partitions=4, replica_count=2"), []) == 8
    assert device_count(_module(", replica_count=3"), []) == 3
    assert device_count(_module(", num_partitions=x"), []) == 1  # unreadable: one
    assert device_count(_module(), [(0, 1), (2, 5)]) == 6  # device 5 exists: six
    assert device_count(_module(", num_partitions=8"), [(0, 1)]) == 8
    tiled = _module(body="  ROOT p = f32[8,4]{1,0} parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}")
    assert sharded_devices(tiled) == 8 and device_count(tiled, []) == 8
    assert device_count(_module(", num_partitions=2"), [(0,)]) == 2


def test_sharded_devices_takes_the_largest_tiling():
    body = ("  p = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1]0,1}\n"
            "  q = f32[8,4]{1,0} parameter(1), sharding={devices=[2,3]<=[6]}\n"
            "  ROOT a = f32[8,4]{1,0} add(p, q), sharding={devices=[2,1]0,1}")
    assert sharded_devices(_module(body=body)) == 6
    assert sharded_devices(_module()) == 0  # nothing tiled
    # a repeated attribute text, then a repeated sharding in new attributes, then the largest
    repeated = ("  p = f32[8,4]{1,0} parameter(0), sharding={devices=[2,1]0,1}\n"
                "  a = f32[8,4]{1,0} negate(p), sharding={devices=[2,1]0,1}\n"
                "  b = f32[8,4]{1,0} negate(a), sharding={devices=[2,1]0,1}\n"
                "  c = f32[8,4]{1,0} negate(b), sharding={devices=[2,1]0,1}, metadata={op_name=\"c\"}\n"
                "  ROOT d = f32[8,4]{1,0} negate(c), sharding={devices=[4,1]<=[4]}")
    assert sharded_devices(_module(body=repeated)) == 4
    tuple_sharding = ("  ROOT p = (f32[8]{0}, f32[8]{0}) parameter(0), "
                      "sharding={{devices=[4]<=[4]}, {devices=[2,2]<=[4] last_tile_dim_replicate}}")
    assert sharded_devices(_module(body=tuple_sharding)) == 4


def test_a_row_major_mesh_from_collective_strides():
    # 8 devices; groups of 2 at stride 4 and of 4 at stride 1: a (2, 4) mesh
    assert infer_mesh(8, [(4, 2), (1, 4)]) == [MeshAxis("stride4", 2, 4), MeshAxis("stride1", 4, 1)]
    # only the minor factor seen: the rest of the devices make a major axis
    assert infer_mesh(8, [(1, 2)]) == [MeshAxis("stride2", 4, 2), MeshAxis("stride1", 2, 1)]
    # a major factor alone: the minor devices make the last axis
    assert infer_mesh(8, [(2, 4)]) == [MeshAxis("stride2", 4, 2), MeshAxis("stride1", 2, 1)]
    # the first factor seen for a stride wins; one that does not tile is left out
    assert infer_mesh(8, [(1, 8), (1, 2)]) == [MeshAxis("stride1", 8, 1)]
    # a factor whose span (3 x 2 = 6) does not divide the devices tiles nothing: left out
    assert infer_mesh(8, [(3, 2)]) == [MeshAxis("stride1", 8, 1)]
    assert infer_mesh(6, [(4, 2)]) == [MeshAxis("stride1", 6, 1)]
    assert infer_mesh(1, []) == []
    # a factor that does not tile is passed over, and the next one is still read
    assert infer_mesh(16, [(8, 4), (2, 2)]) == [MeshAxis("stride4", 4, 4), MeshAxis("stride2", 2, 2),
                                                MeshAxis("stride1", 2, 1)]
    # groups of 3 over 6 devices: a (2, 3) mesh, sizes whole numbers
    axes = infer_mesh(6, [(1, 3)])
    assert axes == [MeshAxis("stride3", 2, 3), MeshAxis("stride1", 3, 1)]
    assert all(type(a.size) is int and type(a.stride) is int for a in axes)


def test_a_mesh_recorded_beside_the_module(tmp_path):
    folder = tmp_path / "dump"
    folder.mkdir()
    path = folder / "module_0000.jit_f.after_optimizations.txt"
    m = _module(path=str(path))
    assert mesh_beside(m) is None  # nothing beside it
    (folder / "module_0000.jit_f.before_optimizations.txt").write_text(
        'HloModule jit_f, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["data"=2, "model"=4]>}}\n')
    axes, source = mesh_beside(m)
    assert [(a.name, a.size) for a in axes] == [("data", 2), ("model", 4)]
    assert source == "the before-optimizations dump's Shardy mesh"
    (folder / "hloscope.json").write_text(json.dumps({"mesh": {"fsdp": 8}}))
    axes, source = mesh_beside(m)
    assert [(a.name, a.size) for a in axes] == [("fsdp", 8)] and source == "recorded by hloscope compile"
    (folder / "hloscope.json").write_text(json.dumps({"mesh": {"fsdp": "many"}}))
    assert mesh_beside(m)[1] == "the before-optimizations dump's Shardy mesh"  # unreadable: the next
    other = _module(path=str(folder / "jit_f.hlo.txt"))  # not a dump's file name: no before-
    assert mesh_beside(other) is None  # optimizations dump to look in, and no readable record
    (folder / "hloscope.json").write_text(json.dumps({"mesh": {"data": 2, "model": 2}}))
    assert mesh_beside(other)[1] == "recorded by hloscope compile"
    assert mesh_beside(_module(path="")) is None


def test_the_mesh_beside_is_read_from_the_header_line_of_a_readable_dump(tmp_path):
    """Only the before-optimizations module's header line names its Shardy mesh (a line below
    is a computation's text); an unreadable candidate is passed over for the next; bytes that
    are not UTF-8 later in the file do not stop the read; an empty recorded mesh is no mesh."""
    folder = tmp_path / "dump"
    folder.mkdir()
    m = _module(path=str(folder / "module_0003.jit_f.after_optimizations.txt"))
    mesh = b'frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["data"=4]>}}'
    (folder / "module_0003.a.before_optimizations.txt").write_bytes(
        b"HloModule jit_f\n" + b"// " + mesh + b"\n")
    assert mesh_beside(m) is None  # (not on the header line)
    (folder / "module_0003.b.before_optimizations.txt").mkdir()  # (a folder: open() fails)
    (folder / "module_0003.c.before_optimizations.txt").write_bytes(
        b"HloModule jit_f, " + mesh + b"\nENTRY e {\n  // \xff\xfe not UTF-8\n}\n")
    axes, source = mesh_beside(m)
    assert [(a.name, a.size) for a in axes] == [("data", 4)] and "before-optimizations" in source
    (folder / "hloscope.json").write_text(json.dumps({"mesh": {}}))
    assert mesh_beside(m)[1] == "the before-optimizations dump's Shardy mesh"


def test_the_fsdp_dump_names_its_axis():
    """A real dump folder (fixtures/dumps/fsdp_async_fusion_v5p): its before-optimizations
    module's Shardy mesh names the axis the optimized module has lost."""
    from hloscope.parser import load

    dump = FIXTURES / "dumps" / "fsdp_async_fusion_v5p"
    (m,) = load(next(dump.glob("*.after_optimizations.txt")))
    axes, source = mesh_beside(m)
    assert [(a.name, a.size) for a in axes] == [("fsdp", 8)] and "before-optimizations" in source


def test_named_axes_take_the_product_of_the_minor_axes_as_their_stride():
    from hloscope.sharding.mesh import named_axes

    assert named_axes([("data", 4), ("model", 2)]) == [MeshAxis("data", 4, 2), MeshAxis("model", 2, 1)]
    assert named_axes([("pp", 2), ("data", 4), ("model", 2)]) == [
        MeshAxis("pp", 2, 8), MeshAxis("data", 4, 2), MeshAxis("model", 2, 1)]
