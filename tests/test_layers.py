"""The code base in layers (docs/ARCHITECTURE.md): engine/ (rules) <- protocol/ (sans-IO) <- lanplay/ (I/O, screens,
command line), and inside lanplay/ the layers of `LANPLAY_LAYERS`. A module imports only its own layer and the layers
below it, and no two modules import each other, directly or through others: every import counts, a function-level
one and one only for the type checker too.

Read from the source with `ast`, so nothing is imported to check it."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "protocol", "lanplay")

# Lowest first. A module belongs to the longest prefix that names it (a package or a module).
LANPLAY_LAYERS: tuple[tuple[str, ...], ...] = (
    ("lanplay", "lanplay.base"),  # the disk, safe text, asyncio helpers
    ("lanplay.net",),  # interface, discovery, lobby, mesh
    ("lanplay.bots",),  # players that are programs
    # the words and screen pieces every game is told and drawn with (below the games, in ui/)
    ("lanplay.ui.i18n", "lanplay.ui.names", "lanplay.ui.values", "lanplay.ui.lines", "lanplay.ui.describe"),
    ("lanplay.games",),  # one bundle a game, and the registry
    ("lanplay.table",),  # one table as it runs: runner, hosting and joining
    ("lanplay.ui",),  # the screens and their models
    ("lanplay.cli",),  # the `lanplay` command
)
LAYERS: tuple[tuple[str, ...], ...] = (("engine",), ("protocol",), *LANPLAY_LAYERS)


def module_sources(root: Path = ROOT) -> dict[str, tuple[str, bool]]:
    """Every module of the three packages: name -> (source, whether it is a package's __init__)."""
    out: dict[str, tuple[str, bool]] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            out[".".join(parts)] = (path.read_text(encoding="utf-8"), is_package)
    return out


def _known(name: str, modules: Iterable[str]) -> str | None:
    """The module `name` is, or the deepest known package or module above it."""
    known = set(modules)
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _import_nodes(tree: ast.AST) -> Iterable[ast.Import | ast.ImportFrom]:
    return (node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom))


def import_graph(sources: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """module -> the modules of `sources` it imports, anywhere in its body."""
    graph: dict[str, set[str]] = {}
    for name, (source, is_package) in sources.items():
        targets: set[str] = set()
        for node in _import_nodes(ast.parse(source)):
            if isinstance(node, ast.Import):
                wanted = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                wanted = [f"{module}.{alias.name}" for alias in node.names]  # a submodule, or a name in `module`
            for target in wanted:
                found = _known(target, sources)
                if found is not None and found != name:
                    targets.add(found)
        graph[name] = targets
    return graph


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def upward_imports(graph: Mapping[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    found = []
    for module, targets in sorted(graph.items()):
        own = layer_of(module, layers)
        for target in sorted(targets):
            theirs = layer_of(target, layers)
            if own is None or theirs is None or theirs > own:
                found.append(f"{module} (layer {own}) imports {target} (layer {theirs})")
    return found


def import_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


GRAPH = import_graph(module_sources())


def test_every_module_is_in_a_layer() -> None:
    assert [module for module in GRAPH if layer_of(module) is None] == []


def test_the_engine_imports_nothing_above_it() -> None:
    assert [f"{m} imports {t}" for m, ts in GRAPH.items() if m.startswith("engine") for t in ts
            if not t.startswith("engine")] == []


def test_protocol_never_imports_lanplay() -> None:
    assert [f"{m} imports {t}" for m, ts in GRAPH.items() if m.startswith("protocol") for t in ts
            if t.startswith("lanplay")] == []


def test_imports_go_only_down_the_layers() -> None:
    assert upward_imports(GRAPH) == []


def test_no_import_cycle() -> None:
    assert import_cycles(GRAPH) == []


def test_the_checks_find_an_upward_import_and_a_cycle_hidden_in_a_function() -> None:
    sources = {
        "engine": ("", True),
        "engine.rules": ("from lanplay.ui import screen\n", False),  # the engine reaching up
        "lanplay": ("", True),
        "lanplay.net": ("", True),
        "lanplay.net.mesh": ("from . import lobby\n", False),
        "lanplay.net.lobby": ("def f():\n    from lanplay.net.mesh import Mesh\n", False),  # a hidden circle
        "lanplay.ui": ("", True),
        "lanplay.ui.screen": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from lanplay.cli import x\n",
                              False),  # only for the type checker, and still upward
        "lanplay.cli": ("", True),
    }
    graph = import_graph(sources)
    assert graph["engine.rules"] == {"lanplay.ui.screen"}
    assert upward_imports(graph) == [
        "engine.rules (layer 0) imports lanplay.ui.screen (layer 8)",
        "lanplay.ui.screen (layer 8) imports lanplay.cli (layer 9)",
    ]
    assert import_cycles(graph) == [["lanplay.net.lobby", "lanplay.net.mesh"]]
