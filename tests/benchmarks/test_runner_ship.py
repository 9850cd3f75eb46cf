"""The wheel a sweep ships: built from a checkout, cached by version and content, and a
failed build reported with the build's own last lines."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from benchmarks.runners import ship


@pytest.mark.parametrize(
    ("version", "ok"), [("65.5.0", False), ("76.1", False), ("77.0.3", True), ("84.2.1", True)]
)
def test_the_build_backend_is_used_as_is_only_when_it_is_recent_enough(
    monkeypatch: pytest.MonkeyPatch, version: str, ok: bool
) -> None:
    monkeypatch.setattr(ship.importlib.metadata, "version", lambda name: version)
    assert ship.backend_ok() is ok


def test_the_content_digest_follows_every_byte_and_name(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    first = ship._digest({"pkg/a.py": a, "pkg/b.py": b})
    assert first == ship._digest({"pkg/b.py": b, "pkg/a.py": a})  # order does not matter
    a.write_text("x = 2\n")
    assert ship._digest({"pkg/a.py": a, "pkg/b.py": b}) != first
    assert ship._digest({"pkg/c.py": a, "pkg/b.py": b}) != ship._digest(
        {"pkg/a.py": a, "pkg/b.py": b}
    )


def test_a_checkout_builds_once_and_the_cached_wheel_is_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = ship.source_root()
    assert root is not None
    files = list(ship._checkout_files(root))  # the same content for both calls
    monkeypatch.setattr(ship, "_checkout_files", lambda _root: iter(files))
    built = ship.local_wheel(tmp_path)
    names = zipfile.ZipFile(built.path).namelist()
    assert built.path.name == f"gpuplan-{built.version}-py3-none-any.whl"
    assert built.path.parent == tmp_path / f"{built.version}-{built.digest}"
    assert "benchmarks/runners/ship.py" in names and not any("__pycache__" in n for n in names)

    def no_build(*args: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(ship, "_build_from_checkout", no_build)
    assert ship.local_wheel(tmp_path) == built


def test_a_failed_build_shows_the_backends_own_words(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=77"]\n'
        'build-backend = "setuptools.build_meta"\n'
        '[project]\nname = "gpuplan"\nversion = "0.0.1"\nlicense = "Not A (License"\n'
    )
    with pytest.raises(ship.ShipError) as info:
        ship._build_from_checkout(root, tmp_path / "cache", "0.0.1", "abcd")
    text = str(info.value)
    first, *tail = text.splitlines()
    assert first.startswith("building the gpuplan wheel failed (pip wheel exited 1")
    assert tail and "See above" not in text and "originates from a subprocess" not in text
    assert any("license" in line.lower() for line in tail), text
    assert not (tmp_path / "cache").exists()  # nothing half-written
