"""planner's folders import each other in one direction (docs/architecture.md): each folder
only from folders before it in LAYERS; the composers at planner's top (plan, cpu_baseline,
sweep_preview) sit between `choose` and `render`, so only render, ui and cli import them;
the base modules at the top (request, settings, ...) import only folders that import no base
module (no cycle through them)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PLANNER = ROOT / "planner"
LAYERS = (
    "machines", "io", "workloads", "onprem", "llm", "throughput", "costs", "choose",
    "render", "ui", "cli",
)  # fmt: skip
BASE = ("request", "settings", "codes", "notes", "dropped", "defaults")
# The stack table and the fp8 recipe names settings validates against (both import no
# planner module).
BASE_MAY_IMPORT = ("planner.llm.frameworks", "planner.llm.fp8_recipes")
COMPOSERS = ("plan", "cpu_baseline", "sweep_preview")
FIRST_ABOVE_COMPOSERS = "render"


def planner_imports(source: str) -> set[str]:
    """Every planner module a file imports, at run time (imports under TYPE_CHECKING are
    annotations only and left out)."""
    tree = ast.parse(source)
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m.startswith("planner.")}


def folder_of(module: str) -> str:
    """The planner folder of a module name ("" for planner's top-level modules)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (PLANNER / parts[1]).is_dir() else ""


def violations(files: dict[str, str]) -> list[str]:
    """Imports against the rule, for {path relative to planner: source}."""
    imports = {path: planner_imports(source) for path, source in files.items()}
    own = {path: Path(path).parts[0] if len(Path(path).parts) > 1 else "" for path in files}
    uses_base = {
        own[path]
        for path, modules in imports.items()
        if own[path] and any(not folder_of(m) and m.split(".")[1] in BASE for m in modules)
    }
    out = []
    for path, modules in imports.items():
        folder = own[path]
        for module in sorted(modules):
            target, name = folder_of(module), module.split(".")[1]
            layered = folder in LAYERS and target in LAYERS and target != folder
            if layered and LAYERS.index(target) > LAYERS.index(folder):
                out.append(f"{path} imports {module}: {target} comes after {folder}")
            below = folder in LAYERS and LAYERS.index(folder) < LAYERS.index(FIRST_ABOVE_COMPOSERS)
            if below and not target and name in COMPOSERS:
                out.append(f"{path} imports the composer {module}")
            is_base = not folder and Path(path).stem in BASE
            if is_base and target in uses_base and module not in BASE_MAY_IMPORT:
                out.append(f"{path} (a base module) imports {module}, whose folder imports it")
    return out


def test_planner_folders_import_in_one_direction() -> None:
    files = {
        str(f.relative_to(PLANNER)): f.read_text(encoding="utf-8") for f in PLANNER.rglob("*.py")
    }
    assert violations(files) == []


def test_every_planner_folder_has_a_layer() -> None:
    folders = {p.name for p in PLANNER.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS)


def test_the_check_sees_an_import_backwards_and_a_composer_below() -> None:
    files = {
        "io/reader.py": "from planner.throughput.offers import SAMPLE_COLUMN\n",
        "costs/x.py": "from planner.cpu_baseline import with_cpu_baseline\n",
        "request.py": "from planner.choose.options import options_for\n",
        "choose/options.py": "from planner.request import PlanRequest\n",
        "settings.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from planner.llm.stack_profiles import StackParams\n",
        "throughput/ok.py": "from planner.io.validate import read_csv_table\n",
    }
    found = violations(files)
    assert len(found) == 3
    assert any("io/reader.py" in v for v in found)
    assert any("composer" in v for v in found)
    assert any("base module" in v for v in found)


def test_planner_tests_mirror_its_folders() -> None:
    """tests/planner/<folder>/ holds the tests of planner/<folder>/; tests of planner's
    top-level modules (the request, the composers) sit in tests/planner/ itself."""
    tests = ROOT / "tests" / "planner"
    subfolders = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert subfolders <= set(LAYERS)
    assert all((tests / name / "__init__.py").exists() for name in subfolders)
