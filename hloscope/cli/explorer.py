"""`hloscope explorer`: node data overlays (and the graphs) for Google's Model Explorer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hloscope.cli.common import AutoChipOpt, FileArg, ModuleOpt, NoCacheOpt, analyse, chip, fail, settle


def explorer(
    file: FileArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory for the JSON files.")] = Path("explorer"),
    chip_name: AutoChipOpt = None,
    trace: Annotated[Path | None, typer.Option("--trace", help="A profile: adds a measured-time overlay.")] = None,
    no_cache: NoCacheOpt = False,
    module: ModuleOpt = None,
) -> None:
    """Write Model Explorer node data overlays for an HLO module: finding severity,
    static (roofline) time, padding waste, bytes live at the static memory peak, and
    measured time with --trace; plus the module's graphs as Model Explorer JSON.

    Needs the explorer extra: pip install 'hloscope[explorer]'.

    Examples:

      hloscope explorer fixtures/tpu/transformer_v5p.hlo.txt -o me/

      model-explorer fixtures/tpu/transformer_v5p.hlo.txt --extensions=hloscope.explorer \\
          --node_data_paths=me/jit_model.static_time_us.json
    """
    try:
        import model_explorer  # noqa: F401
    except ImportError:
        fail("error: Model Explorer is not installed: pip install 'hloscope[explorer]' "
             "(ai-edge-model-explorer 0.1.34)")
    if chip_name:
        chip(chip_name)
    from hloscope.parser.load import digest_structures

    digest_structures()  # (its cost model then costs an unrolled model's repeated fusions once)

    def run(modules: list) -> None:
        import json

        from model_explorer.utils import convert_adapter_response

        from hloscope.explorer.graphs import built
        from hloscope.explorer.overlays import overlays
        from hloscope.lint import LintError, LintOptions, lint_files, lint_modules

        try:
            files = [Path(p) for p in dict.fromkeys(m.path for m in modules)]
            report = (lint_files(files, LintOptions(chip=chip_name, trace=trace))
                      if all(f.is_file() for f in files)
                      else lint_modules(modules, LintOptions(chip=chip_name, trace=trace)))
        except LintError as e:
            fail(f"error: {e}")
        index = None
        if trace is not None:
            from hloscope.trace import join, load_profile

            index = join(load_profile(trace), modules)
        settle()  # (nothing is written for a file its checks refuse)
        try:
            output.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            fail(f"error: cannot create {output}: {e.strerror}")
        written = []
        for m in modules:
            graphs, where = built(m)  # one walk for the graphs and the overlays' nodes
            path = output / f"{m.name}.graphs.json"
            path.write_text(json.dumps(convert_adapter_response({"graphs": graphs})))
            written.append(path)
            for o in overlays(m, chip_name, report.findings, index, where):
                path = output / f"{m.name}.{o.name}.json"
                o.node_data().save_to_file(str(path))
                written.append(path)
        for p in written:
            typer.echo(str(p))
        typer.echo(f"open: model-explorer {file} --extensions=hloscope.explorer "
                   f"--node_data_paths={written[1] if len(written) > 1 else ''}", err=True)

    analyse(file, no_cache, run, module=module)
