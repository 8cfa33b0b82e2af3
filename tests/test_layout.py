"""The layout's one rule: imports run one way (DESIGN.md), from the programs people run down to the
models and metrics. In full: benchmarks (which measure the Space) → space → training → hub_cards (which
training's ``--push-to-hub`` exports through) → variants → models, metrics, store (the committed models
and their formats). Checked on the source, so a
lazy import inside a function counts too."""

import ast
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
