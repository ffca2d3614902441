"""The dependency rules of docs/ARCHITECTURE.md, read from the source with `ast`.

    cli → run → {agent, git, state, config, sandbox, views} → shared modules (errors, events, …)
    agent knows nothing of run/, git/, cli/; events imports nothing else of openbot; sandbox knows nothing
    of agent.models; config knows nothing of run/; the shared top-level modules know no wing.

Every import counts for the rules: at module level, inside functions and under `if TYPE_CHECKING:`.
For cycles every import that runs counts, at module level or inside a function (openbot imports heavy
libraries, and the modules that use them, inside the functions that need them: that hides a cycle from
Python, not from a reader). Imports under `if TYPE_CHECKING:` never run and name types only, so they
do not count. The one cycle allowed is typer's command registration: `cli.app.get_app` imports
`cli.commands`, which imports every `cli/*_cmd.py`, which registers its command on `cli.app.app`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import openbot

ROOT = Path(openbot.__file__).parent
WINGS = ("cli", "run", "agent", "git", "state", "config", "sandbox", "views", "testing")
# The layers below `run`: each may use the others where its job needs it, never run/ or cli/.
MIDDLE = ("agent", "git", "state", "config", "sandbox", "views")
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


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The openbot module an imported name is (a module, or a name defined in its package)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, source: str) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative: from the importing module's package
            package = source if MODULES[source].name == "__init__.py" else source.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}".rstrip(".")
        names = [f"{base}.{a.name}" for a in node.names]
    found = [_resolve(n) for n in names if n == "openbot" or n.startswith("openbot.")]
    return [t for t in found if t is not None]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, source: str, when: str, out: list[Import]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            out += [Import(source, t, child.lineno, when) for t in _targets(child, source)]
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            _walk(child, source, "typing" if when == "typing" else "call", out)
        elif isinstance(child, ast.If) and _is_type_checking(child):
            for stmt in child.body:
                _walk(ast.Module(body=[stmt], type_ignores=[]), source, "typing", out)
            for stmt in child.orelse:
                _walk(ast.Module(body=[stmt], type_ignores=[]), source, when, out)
        else:
            _walk(child, source, when, out)


def _imports() -> list[Import]:
    found: list[Import] = []
    for name, path in MODULES.items():
        _walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), name, "import", found)
    return [i for i in found if i.target != i.source]


IMPORTS = _imports()


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
    assert ("openbot.cli.app", "openbot.cli.commands", "call") in seen
    assert ("openbot.run.workspace", "openbot.run.plan", "typing") in seen


@pytest.mark.parametrize("area", sorted(FORBIDDEN))
def test_wings_import_only_what_the_layers_allow(area: str) -> None:
    broken = [
        f"{i.source}:{i.line} imports {i.target}"
        for i in IMPORTS
        if wing(i.source) == area and any(_within(i.target, f) for f in FORBIDDEN[area])
    ]
    assert broken == []


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


REGISTRATION = ("openbot.cli.app", "openbot.cli.commands")
KNOWN_CYCLES: list[list[str]] = []


def test_no_import_cycles_but_typers_command_registration() -> None:
    edges: dict[str, set[str]] = {}
    for i in IMPORTS:
        if i.when != "typing" and (i.source, i.target) != REGISTRATION:
            edges.setdefault(i.source, set()).add(i.target)
    assert [c for c in _cycles(edges) if c not in KNOWN_CYCLES] == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
