"""The dependency rules of docs/ARCHITECTURE.md, read from the source with `ast`.

    cli > run > agent > config > state > git > forge > sandbox > views > shared modules (errors, events, …)
    a wing imports only the wings after it in that order (and itself); nothing in the package imports
    testing/; agent knows nothing of git/ either; events imports nothing else of openbot; sandbox knows
    nothing of agent.models; config knows nothing of run/; the shared top-level modules know no wing.

Every import counts for the rules: at module level, inside functions and under `if TYPE_CHECKING:`
(openbot imports heavy libraries, and the modules that use them, inside the functions that need them:
that hides an import from Python, not from a reader; a type-only import back up is still a module that
knows what it should not). The one cycle allowed is typer's command registration:
`cli.typer_app.get_app` imports `cli.commands`, which imports every `cli/*_cmd.py`, which registers its
command on `cli.typer_app.app`.
"""

from __future__ import annotations

import ast
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

import openbot

ROOT = Path(openbot.__file__).parent
WINGS = ("cli", "run", "agent", "git", "state", "config", "forge", "sandbox", "views", "testing")
# The layer order, top to bottom: each layer may import only itself and the layers below it.
LAYERS = ("cli", "run", "agent", "config", "state", "git", "forge", "sandbox", "views", "shared")
# The layers below `run`: each may use the others where its job needs it, never run/ or cli/.
MIDDLE = ("agent", "git", "state", "config", "forge", "sandbox", "views")
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "run": ("cli",),
    **{wing: ("cli", "run", "testing") for wing in MIDDLE},
    "agent": ("cli", "run", "git", "testing"),
    "sandbox": ("cli", "run", "agent.models", "testing"),
    "shared": (*WINGS,),
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, e.g. "openbot.run.runner"
    target: str  # the imported openbot module, e.g. "openbot.agent.turn"
    line: int
    when: str  # "import" (module level), "call" (inside a function), "typing" (under TYPE_CHECKING)


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(root: Path) -> dict[str, Path]:
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


MODULES = _modules(ROOT)


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The openbot module an imported name is (a module, or a name defined in its package)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, source: str, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative: from the importing module's package
            package = source if modules[source].name == "__init__.py" else source.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}".rstrip(".")
        names = [f"{base}.{a.name}" for a in node.names]
    found = [_resolve(n, modules) for n in names if n == "openbot" or n.startswith("openbot.")]
    return [t for t in found if t is not None]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, source: str, when: str, out: list[Import], modules: dict[str, Path]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            out += [Import(source, t, child.lineno, when) for t in _targets(child, source, modules)]
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            _walk(child, source, "typing" if when == "typing" else "call", out, modules)
        elif isinstance(child, ast.If) and _is_type_checking(child):
            for stmt in child.body:
                _walk(ast.Module(body=[stmt], type_ignores=[]), source, "typing", out, modules)
            for stmt in child.orelse:
                _walk(ast.Module(body=[stmt], type_ignores=[]), source, when, out, modules)
        else:
            _walk(child, source, when, out, modules)


def imports_of(root: Path) -> list[Import]:
    """Every import between the modules of the package at `root`."""
    modules = _modules(root)
    found: list[Import] = []
    for name, path in modules.items():
        _walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), name, "import", found, modules)
    return [i for i in found if i.target != i.source]


IMPORTS = imports_of(ROOT)


def wing(module: str) -> str:
    """`cli`, `run`, … for a module in a wing; `shared` for the top-level modules; `openbot` for the
    package itself and `python -m openbot` (entry points, like cli)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "openbot"
    return parts[1] if parts[1] in WINGS else "shared"


def _within(module: str, area: str) -> bool:
    """Whether `module` is in `area`: a wing (`run`) or a package inside one (`agent.models`)."""
    return module == f"openbot.{area}" or module.startswith(f"openbot.{area}.")


def test_the_scan_sees_the_package() -> None:
    assert {"openbot.run.runner", "openbot.agent.turn", "openbot.events"} <= MODULES.keys()
    seen = {(i.source, i.target, i.when) for i in IMPORTS}
    assert ("openbot.run.runner", "openbot.run.session", "import") in seen
    assert ("openbot.cli.typer_app", "openbot.cli.commands", "call") in seen
    assert ("openbot.run.workspace", "openbot.run.plan", "typing") in seen


@pytest.mark.parametrize("area", sorted(FORBIDDEN))
def test_wings_import_only_what_the_layers_allow(area: str) -> None:
    broken = [
        f"{i.source}:{i.line} imports {i.target}"
        for i in IMPORTS
        if wing(i.source) == area and any(_within(i.target, f) for f in FORBIDDEN[area])
    ]
    assert broken == []


def back_imports(imports: list[Import]) -> list[str]:
    """The imports that run up the layer order, or into testing/ (a test aid the package never uses)."""
    broken = []
    for i in imports:
        source, target = wing(i.source), wing(i.target)
        if source in ("openbot", "testing") or target == "openbot":
            continue  # the entry points stand above cli; testing/ may use what it stands in for
        if target == "testing" or LAYERS.index(target) < LAYERS.index(source):
            broken.append(f"{i.source}:{i.line} imports {i.target} ({source} is below {target})")
    return broken


def test_the_layer_order_holds() -> None:
    assert back_imports(IMPORTS) == []


def test_a_planted_back_import_is_caught(tmp_path: Path) -> None:
    """The scan of a copy of the package with one import running back up finds exactly that import,
    wherever it hides: inside a function, or under `if TYPE_CHECKING:`."""
    copy = tmp_path / "openbot"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert back_imports(imports_of(copy)) == []
    memory = copy / "state" / "memory.py"
    memory.write_text(memory.read_text() + "\n\ndef planted() -> None:\n    from openbot.agent import turn\n")
    errors = copy / "errors.py"
    text = errors.read_text()
    errors.write_text(text + "\nif TYPE_CHECKING:\n    from openbot.views.live import LiveView\n")
    found = back_imports(imports_of(copy))
    assert len(found) == 2
    assert found[0].startswith("openbot.errors:") and found[0].endswith("(shared is below views)")
    assert found[1].startswith("openbot.state.memory:") and "imports openbot.agent.turn" in found[1]


def test_events_imports_nothing_else_of_openbot() -> None:
    assert [i for i in IMPORTS if i.source == "openbot.events"] == []


def test_config_knows_nothing_of_the_runner() -> None:
    assert [i for i in IMPORTS if wing(i.source) == "config" and wing(i.target) in ("run", "cli")] == []


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted({*edges, *(w for ws in edges.values() for w in ws)}):
        if v not in index:
            visit(v)
    return found


REGISTRATION = ("openbot.cli.typer_app", "openbot.cli.commands")
KNOWN_CYCLES: list[list[str]] = []


def test_no_import_cycles_but_typers_command_registration() -> None:
    edges: dict[str, set[str]] = {}
    for i in IMPORTS:
        if (i.source, i.target) != REGISTRATION:
            edges.setdefault(i.source, set()).add(i.target)
    assert [c for c in _cycles(edges) if c not in KNOWN_CYCLES] == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


DOC = ROOT.parent / "docs" / "ARCHITECTURE.md"


def _unnamed_modules(root: Path, doc: str) -> list[str]:
    """Modules of the package that the architecture document does not name by their file name."""
    named = set(re.findall(r"\b(\w+)(?:\.py)?\b", doc))
    return sorted(
        str(path.relative_to(root.parent))
        for path in root.rglob("*.py")
        if path.name != "__init__.py" and path.stem not in named
    )


def test_the_document_names_every_module() -> None:
    # docs/ARCHITECTURE.md is the map a newcomer reads first: a module it does not name is a place nobody
    # was told about; add the module's name (and its job, in a few words) to its wing in the document.
    assert _unnamed_modules(ROOT, DOC.read_text()) == []


def test_the_document_names_only_files_that_exist() -> None:
    files = {p.name for area in ("openbot", "tests", "scripts") for p in ROOT.parent.glob(f"{area}/**/*.py")}
    stale = sorted(set(re.findall(r"\b([a-z]\w*\.py)\b", DOC.read_text())) - files)
    assert stale == []


def test_an_unnamed_module_is_found(tmp_path: Path) -> None:
    copy = tmp_path / "openbot"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "run" / "planted_module.py").write_text('"""Not in the document."""\n')
    assert _unnamed_modules(copy, DOC.read_text()) == ["openbot/run/planted_module.py"]
