"""The package's layering (ARCHITECTURE.md): every import, lazy and type-only ones included, points
down the layers, and no module imports itself in a circle."""

from __future__ import annotations

import ast
from pathlib import Path

PKG_DIR = Path(__file__).resolve().parents[2] / "py_trees_manipulation"
PKG = "py_trees_manipulation"

#: bottom to top; a package may import its own layer's packages (pure, front) or any layer below,
#: except where SIDE_BY_SIDE says otherwise
LAYERS: list[tuple[str, set[str]]] = [
    ("pure", {"msgs", "geometry", "control", "planning", "motion", "robots", "conventions", "keydocs", "located",
              "__init__"}),
    ("scene", {"scene"}),
    ("bullet", {"bullet"}),
    ("world", {"collision"}),
    ("seam", {"backend"}),
    ("behaviors", {"behaviors"}),
    ("backends", {"sim", "hardware", "testing"}),
    ("trees", {"trees", "observers"}),
    ("front", {"cli", "__main__", "viewer", "scenarios", "interop", "commands"}),
]
#: packages of one layer that must not import each other (the backends stand side by side)
SIDE_BY_SIDE = {"backends"}


def _rank(top: str) -> tuple[int, str]:
    for i, (name, members) in enumerate(LAYERS):
        if top in members:
            return i, name
    raise AssertionError(f"package {top!r} is in no layer of LAYERS: add it where it belongs")


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG_DIR.rglob("*.py"):
        parts = [PKG] + list(p.relative_to(PKG_DIR).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _imports(mod: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported module of this package, line) for every import statement of the file."""
    is_pkg = path.name == "__init__.py"
    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[:len(pkg) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            else:
                base = (node.module or "").split(".")
            if base[:1] != [PKG]:
                continue
            target = ".".join(base)
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub if sub in modules else target, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == PKG]
    return out


def _top(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_import_points_down_the_layers():
    modules = _modules()
    wrong = []
    for mod, path in sorted(modules.items()):
        src = _top(mod)
        rs, ls = _rank(src)
        for target, line in _imports(mod, path, modules):
            dst = _top(target)
            if dst == src:
                continue
            rd, ld = _rank(dst)
            if rd > rs or (rd == rs and ls in SIDE_BY_SIDE):
                wrong.append(f"{path.relative_to(PKG_DIR.parent)}:{line}: {src} ({ls}) imports {dst} ({ld})")
    assert not wrong, "imports against the layering of ARCHITECTURE.md:\n" + "\n".join(wrong)


def test_no_import_circles():
    modules = _modules()
    graph = {m: sorted({t for t, _ in _imports(m, p, modules) if t in modules and t != m}) for m, p in modules.items()}
    # Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    import sys
    sys.setrecursionlimit(10000)
    for m in sorted(graph):
        if m not in index:
            visit(m)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_layers_name_every_package():
    tops = {_top(m) for m in _modules()}
    for t in tops:
        _rank(t)
