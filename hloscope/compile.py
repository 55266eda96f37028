"""`hloscope compile`: a TPU program compiled here without a TPU (jax's deviceless AOT: a
topology description, a mesh on its devices, `jit(f).lower(*args).compile()`), written as an
--xla_dump_to folder (XLA's own dump, taken in a child process whose XLA_FLAGS ask for it)
plus `cost_analysis.json` and `memory_analysis.json` from the compiled executable, ready for
`lint`, `memory`, `report`. Needs libtpu (`pip install 'hloscope[tpu]'`).

Targets are named like pytest node ids or `python -m`: `path/to/model.py:train_step` or
`package.module:train_step`. Arguments: `--args 'bf16[8,128]' ...`, each optionally sharded
over mesh axes (`'f32[1024,1024]@data,model'`: dim 0 over `data`, dim 1 over `model`; `_`
for a dim not sharded), or `--args-from model.py:example_args`, a function returning
jax.ShapeDtypeStructs (or taking the mesh and returning them).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
from pathlib import Path

DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f64": "float64", "s32": "int32",
          "s64": "int64", "s16": "int16", "s8": "int8", "u8": "uint8", "u32": "uint32", "pred": "bool",
          "s4": "int4", "u4": "uint4", "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2"}
_ARG = re.compile(r"^\s*(\w+)\[([\d,\s]*)\]\s*(?:@\s*([\w,\s]+))?\s*$")
_MESH = re.compile(r"^\s*(\w+)\s*:\s*(\d+)\s*$")


class CompileError(ValueError):
    """A usage or input problem (exit code 2), said plainly."""

    is_input_error = True


def parse_arg(text: str) -> tuple[str, tuple[int, ...], tuple[str | None, ...] | None]:
    """'bf16[8,128]@data,_' -> ('bfloat16', (8, 128), ('data', None))."""
    m = _ARG.match(text)
    if not m or m.group(1) not in DTYPES:
        raise CompileError(f"bad --args {text!r}: use TYPE[d0,d1,...] with TYPE one of "
                           f"{', '.join(DTYPES)}, optionally @axis,axis to shard its dims")
    dims = tuple(int(d) for d in m.group(2).replace(" ", "").split(",") if d)
    spec = None
    if m.group(3):
        spec = tuple(None if a.strip() in ("_", "None", "") else a.strip() for a in m.group(3).split(","))
        if len(spec) > len(dims):
            raise CompileError(f"bad --args {text!r}: {len(spec)} sharded dims for a rank-{len(dims)} array")
    return DTYPES[m.group(1)], dims, spec


def parse_mesh(text: str | None, devices: int) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """'data:2,model:2' -> ((2, 2), ('data', 'model')); default: one axis 'x' over every device."""
    if not text:
        return (devices,), ("x",)
    axes = [_MESH.match(part) for part in text.split(",")]
    if not all(axes):
        raise CompileError(f"bad --mesh {text!r}: use NAME:SIZE,NAME:SIZE (e.g. data:2,model:2)")
    shape = tuple(int(a.group(2)) for a in axes)
    total = 1
    for n in shape:
        total *= n
    if total > devices:
        raise CompileError(f"--mesh {text} needs {total} devices; the topology has {devices}")
    return shape, tuple(a.group(1) for a in axes)


def resolve(target: str):
    """The function a `file.py:name` or `package.module:name` target names."""
    where, sep, name = target.rpartition(":")
    if not sep or not where or not name:
        raise CompileError(f"bad target {target!r}: use path/to/model.py:function or package.module:function")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise CompileError(f"{where}: no such file")
        spec = importlib.util.spec_from_file_location(f"_hloscope_target_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(path.resolve().parent))
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.pop(0)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as e:
            raise CompileError(f"cannot import {where}: {e}") from None
    fn = getattr(module, name, None)
    if fn is None:
        raise CompileError(f"{where} has no {name!r}")
    return fn


def explain(e: BaseException, request: dict) -> str:
    """One line saying why the compile failed, and the user's own frames under it (never
    jax's, libtpu's or ours): what the parent prints."""
    import traceback

    if isinstance(e, CompileError):
        return str(e)
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if "topology" in text.lower() or "TPU external name" in text:
        return (f"bad --topology {request.get('topology')!r}: {text.split(': ', 1)[-1]} (a TPU "
                "generation and a whole number of hosts, e.g. v5e:2x2, v5p:2x2x1, v4:2x2x1, v6e:2x2)")
    target = str(request.get("target", "")).rpartition(":")[0]
    own = [f for f in traceback.extract_tb(e.__traceback__)
           if "site-packages" not in f.filename and "/hloscope/" not in f.filename
           and not f.filename.startswith("<")]
    frames = "".join(f"\\n  {f.filename}:{f.lineno} in {f.name}: {(f.line or '').strip()}" for f in own[-6:])
    return (f"compiling {request.get('target')} failed: {type(e).__name__}: {text}"
            + (frames or (f" (in {target})" if target else "")))


def have_libtpu() -> bool:
    try:
        return importlib.util.find_spec("libtpu") is not None and importlib.util.find_spec("jax") is not None
    except (ImportError, ValueError):
        return False


def compile_here(request: dict) -> dict:
    """Run in the child: compile and write the JSON analyses; returns what was written."""
    import jax
    from jax.experimental import topologies
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    out = Path(request["out"])
    topo = topologies.get_topology_desc(topology_name=request["topology"], platform="tpu")
    shape, axes = parse_mesh(request.get("mesh"), len(topo.devices))
    mesh = mesh_of(topo, shape, axes)
    count = mesh.devices.size
    fn = resolve(request["target"])
    if request.get("args_from"):
        maker = resolve(request["args_from"])
        try:
            args = maker(mesh)
        except TypeError:
            args = maker()
        args = on_mesh(tuple(args) if isinstance(args, (list, tuple)) else (args,), mesh)
    else:
        args = []
        for text in request.get("args", []):
            dtype, dims, spec = parse_arg(text)
            unknown = [a for a in (spec or ()) if a is not None and a not in axes]
            if unknown:
                raise CompileError(f"--args {text}: no mesh axis {unknown[0]!r} (mesh axes: {', '.join(axes)})")
            sharding = NamedSharding(mesh, P(*(spec or ())))
            args.append(jax.ShapeDtypeStruct(dims, getattr(jax.numpy, dtype), sharding=sharding))
    compiled = jax.jit(fn).lower(*args).compile()
    check_platform(compiled, request["topology"])
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) and cost else cost
    mem = compiled.memory_analysis()
    fields = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
              "temp_size_in_bytes", "generated_code_size_in_bytes", "peak_memory_in_bytes")
    (out / "cost_analysis.json").write_text(json.dumps({k: float(v) for k, v in (cost or {}).items()}, indent=1))
    (out / "memory_analysis.json").write_text(json.dumps(
        {f: int(getattr(mem, f)) for f in fields if hasattr(mem, f)}, indent=1))
    done = {"module": compiled.as_text().split(None, 2)[1].rstrip(","), "devices": count,
            "mesh": dict(zip(axes, shape, strict=True))}
    # what every command reads back to cost the dump on this chip (hloscope.cost.resolve)
    (out / "hloscope.json").write_text(json.dumps(
        {"topology": request["topology"], "chip": chip_of_topology(request["topology"]),
         "device_kind": getattr(topo.devices[0], "device_kind", None), **done}, indent=1))
    return done


def mesh_of(topo, shape: tuple[int, ...], axes: tuple[str, ...]):
    """A jax Mesh of `shape` (axes named `axes`) over a topology's first devices."""
    import numpy as np
    from jax.sharding import Mesh

    count = int(np.prod(shape))
    return Mesh(np.array(topo.devices[:count]).reshape(shape), axes)


def check_platform(compiled, topology: str) -> None:
    """Refuse a compile that went to another backend than the topology's TPUs (arguments
    placed on no device of the mesh compile for the CPU)."""
    import jax

    shardings = jax.tree.leaves((compiled.input_shardings, compiled.output_shardings))
    platforms = {d.platform for s in shardings for d in getattr(s, "device_set", ())}
    if platforms and platforms != {"tpu"}:
        raise CompileError(f"the program compiled for {', '.join(sorted(platforms))}, not for the "
                           f"{topology} TPUs: place its arguments on the mesh (ShapeDtypeStructs "
                           "with a NamedSharding of the mesh hloscope passes to the args function)")


def on_mesh(args, mesh):
    """The arguments with every ShapeDtypeStruct that has no sharding placed on the mesh,
    replicated: an unplaced one would compile for the default backend (the CPU here), not
    for the topology's devices."""
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    def place(x):
        if isinstance(x, jax.ShapeDtypeStruct) and getattr(x, "sharding", None) is None:
            return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=NamedSharding(mesh, P()))
        return x

    return jax.tree.map(place, args)


def chip_of_topology(topology: str) -> str | None:
    """The chip table's key of a topology name: v5p:2x2x1 -> tpu-v5p (None: not in it)."""
    from hloscope.cost.chips import get_chip

    try:
        return get_chip(topology.split(":", 1)[0]).key
    except KeyError:
        return None


def run_child(request: dict, timeout: float = 1800) -> dict:
    """Compile in a child process whose XLA_FLAGS dump into the output folder (the flags
    must be set before jax starts); raises CompileError with the child's last words."""
    import os
    import subprocess

    out = Path(request["out"])
    out.mkdir(parents=True, exist_ok=True)
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_dump_to={out.resolve()}".strip()
    env = {**os.environ, "XLA_FLAGS": flags, "ALLOW_MULTIPLE_LIBTPU_LOAD": "1",
           "TPU_SKIP_MDS_QUERY": "1", "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu")}
    code = ("import json, sys\nfrom hloscope.compile import compile_here, explain\n"
            "try:\n    print(json.dumps(compile_here(json.loads(sys.argv[1]))))\n"
            "except BaseException as e:\n"
            "    print('hloscope-compile-error: ' + explain(e, json.loads(sys.argv[1])), file=sys.stderr)\n"
            "    sys.exit(3)\n")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(request)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.startswith("hloscope-compile-error: ")]
        if said:
            raise CompileError(said[-1].split(": ", 1)[1].replace("\\n", "\n"))
        tail = "\n".join(done.stderr.strip().splitlines()[-12:])
        raise CompileError(f"the compile failed:\n{tail}")
    return json.loads(done.stdout.strip().splitlines()[-1])
