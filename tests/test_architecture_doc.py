"""docs/architecture.md stays true: every folder it names exists, every folder of planner/
is named in it, and the README's Layout section points to it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("edge", "planner", "pricing", "benchmarks")


def named_folders(text: str) -> set[str]:
    """Every `folder/` written in backticks."""
    return {name.rstrip("/") for name in re.findall(r"`([\w./-]+/)`", text)}


def test_every_folder_the_doc_names_exists() -> None:
    missing = sorted(name for name in named_folders(DOC.read_text()) if not (ROOT / name).is_dir())
    assert missing == []


def test_every_package_folder_is_named_in_the_doc() -> None:
    named = named_folders(DOC.read_text())
    folders = {
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in [ROOT / package, *(ROOT / package).rglob("*")]
        if path.is_dir() and "__pycache__" not in path.parts
    }
    assert sorted(folders - named) == []


def test_the_check_would_see_a_missing_folder() -> None:
    assert named_folders("see `planner/nowhere/` and `edge/`") == {"planner/nowhere", "edge"}


def test_readme_layout_points_to_the_doc_in_under_15_lines() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Layout", 1)[1].split("\n## ", 1)[0].strip("\n")
    assert "docs/architecture.md" in section
    assert len(section.splitlines()) < 15
