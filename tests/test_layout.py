"""The layout's one rule: imports run one way (docs/architecture.md), from the programs people run down to the
models and metrics. In full: benchmarks (which measure the Space) → space → training → hub_cards (which
training's ``--push-to-hub`` exports through) → variants → models, metrics, store (the committed models
and their formats). Checked on the source, so a
lazy import inside a function counts too."""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYER = {
    "models": 0,
    "metrics": 0,
    "store": 0,
    "variants": 1,
    "hub_cards": 2,
    "training": 3,
    "space": 4,
    "benchmarks": 5,
}


def project_imports(relative: Path, source: str):
    """(line, top-level project package) of every import in a module, relative ones resolved."""
    package = relative.parts[:-1]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            names = [".".join([*base, *([node.module] if node.module else [])])]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in LAYER:
                yield node.lineno, top


def modules():
    return sorted(p for name in LAYER for p in (ROOT / name).rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_from_a_layer_above_or_beside_it(path):
    relative = path.relative_to(ROOT)
    wrong = [
        f"{relative}:{line} imports {top}"
        for line, top in project_imports(relative, path.read_text(encoding="utf-8"))
        if top != relative.parts[0] and LAYER[top] >= LAYER[relative.parts[0]]
    ]
    assert not wrong, "; ".join(wrong)


def test_models_are_self_contained_for_remote_code():
    # An exported repo ships one models/<name>/ folder: it may import torch and transformers only.
    for path in (ROOT / "models").glob("*/*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                assert node.module.split(".")[0] not in LAYER, f"{path.relative_to(ROOT)}:{node.lineno}"


def test_the_checker_sees_upward_and_relative_imports():
    # The rule must be able to fail: a lazy upward import, and a relative one that climbs out of variants.
    source = (
        "def f():\n    from training.evaluate import evaluate\nfrom ...space import app\nfrom ..base import Variant\n"
    )
    found = sorted(project_imports(Path("variants/topic/__init__.py"), source))
    assert found == [(2, "training"), (3, "space"), (4, "variants")]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(path: Path, known: set[str]) -> set[str]:
    """The project modules a module imports when it is imported: statements at its top level (inside
    ``if``/``try`` too), not those inside functions, which run later and cannot close a circle at import
    time. ``from package import name`` counts the submodule ``package.name`` when there is one."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    body = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while body:
        node = body.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            body += node.orelse  # type hints only: not imported when the module runs
        elif isinstance(node, (ast.If, ast.Try)):
            body += (
                node.body
                + node.orelse
                + getattr(node, "finalbody", [])
                + [statement for handler in getattr(node, "handlers", []) for statement in handler.body]
            )
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1]) if node.level else ""
            source = ".".join(p for p in (base, node.module or "") if p)
            submodules = {f"{source}.{alias.name}" for alias in node.names} & known
            # "from package import submodule" needs the submodule; any other name needs the module itself
            found |= submodules
            if len(submodules) < len(node.names):
                found.add(source)
    # a module's import of itself or its own package's names is not a circle
    return {m for m in found if m in known and m != name}


def import_circles() -> list[list[str]]:
    """Every circle of module-level imports among the project's modules (a strongly connected
    component of more than one module, by Tarjan's algorithm)."""
    paths = {module_name(p): p for p in modules()}
    known = set(paths)
    graph = {name: sorted(top_level_imports(path, known)) for name, path in paths.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return circles


def test_no_import_circles_between_modules():
    # Two modules that need each other to be imported (as the leaderboard's tables and guidance once
    # did) can only be read together; imports inside functions run later and are not counted.
    circles = import_circles()
    assert circles == [], circles


def test_the_circle_checker_finds_a_circle(tmp_path, monkeypatch):
    # The check must be able to fail: two modules that import each other at their top level.
    package = tmp_path / "metrics"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from metrics.b import x\n")
    (package / "b.py").write_text("import metrics.a\nx = 1\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert import_circles() == [["metrics.a", "metrics.b"]]


MAX_LINES = 400  # a module a newcomer reads in one sitting; past it, a file holds more than one job


def test_no_module_outside_the_tests_is_over_400_lines():
    skipped = {".venv", "tests", "__pycache__"}
    sizes = {
        str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for p in ROOT.rglob("*.py")
        if not skipped & set(p.relative_to(ROOT).parts)
    }
    assert len(sizes) > 100  # the whole tree was read
    assert not {path: n for path, n in sizes.items() if n > MAX_LINES}, "split these by job"
