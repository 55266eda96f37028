"""Model Explorer extensions (Model Explorer imports `<extension>.main`):

    pip install 'hloscope[explorer]'
    model-explorer module.hlo.txt --extensions=hloscope.explorer

HloAdapter opens any HLO text dump as graphs (hloscope.explorer.graphs); HloOverlays is a
node data provider that computes hloscope's overlays (finding severity, static time,
padding waste, bytes live at the memory peak) inside the UI. `hloscope explorer FILE -o DIR`
writes the same overlays as node data files for `--node_data_paths`.
"""

from __future__ import annotations

from model_explorer import (
    Adapter,
    AdapterMetadata,
    GetConfigEditorsResult,
    ModelExplorerGraphs,
    NodeDataProvider,
    NodeDataProviderFilter,
    NodeDataProviderMetadata,
    NodeDataProviderResult,
)

FILE_EXTS = ["hlo", "txt"]  # module.hlo, module.hlo.txt, *.after_optimizations.txt
OVERLAYS = {
    "hloscope_severity": ("severity", "hloscope: finding severity"),
    "hloscope_static_time": ("static_time_us", "hloscope: static (roofline) time, us"),
    "hloscope_padding": ("padding_waste_pct", "hloscope: padding waste, %"),
    "hloscope_peak_live": ("bytes_live_at_peak", "hloscope: bytes live at the memory peak"),
}


def _modules(model_path: str) -> list:
    from hloscope.parser import load

    return load(model_path)


class HloAdapter(Adapter):
    """XLA HLO text (as dumped by --xla_dump_to or compiled.as_text()) as graphs."""

    metadata = AdapterMetadata(
        id="hloscope_hlo", name="HLO adapter (hloscope)",
        description="XLA HLO text: computations as graphs, fusions as collapsible groups.",
        source_repo="", fileExts=FILE_EXTS)

    def __init__(self):
        super().__init__()

    def convert(self, model_path: str, settings: dict) -> ModelExplorerGraphs:
        from hloscope.explorer.graphs import explorer_graphs

        return explorer_graphs(_modules(model_path))


class HloOverlays(NodeDataProvider):
    """hloscope's per-node numbers, computed in the UI for the open HLO graph."""

    metadata = [NodeDataProviderMetadata(
        id=key, name=name, description=f"{name} ({stem})", icon="insights",
        filter=NodeDataProviderFilter(adapterIds=["hloscope_hlo"]))
        for key, (stem, name) in OVERLAYS.items()]

    def __init__(self):
        super().__init__()

    def get_config_editors(self, provider_id: str) -> GetConfigEditorsResult:
        return GetConfigEditorsResult(configEditors=[])

    def run(self, provider_id: str, model_path: str, graph_id: str, config_values: dict,
            graph=None) -> NodeDataProviderResult:
        from hloscope.explorer.overlays import overlays
        from hloscope.lint import LintOptions, lint_files

        stem = OVERLAYS.get(provider_id, ("", ""))[0]
        try:
            modules = _modules(model_path)
            findings = lint_files([model_path], LintOptions()).findings if stem == "severity" else []
            for m in modules:
                for o in overlays(m, None, findings):
                    if o.name == stem and graph_id in o.values:
                        return NodeDataProviderResult(result=o.node_data().graphsData[graph_id])
        except Exception as e:  # noqa: BLE001 - shown in the UI instead of a dead request
            return NodeDataProviderResult(error=f"hloscope: {type(e).__name__}: {e}")
        return NodeDataProviderResult(error=f"hloscope: no {stem} values for graph {graph_id}")
