"""The shell script that installs a gpuplan wheel on a remote machine, with a fitting torch.

`install_script(...)` is one POSIX sh script (dash and bash both run it), every value in
it quoted with shlex.quote. What it does, in order:

1. Creates the venv (`python3 -m venv --system-site-packages`, so that a deep-learning
   image's CUDA torch is reused), or reuses it when it exists. Two targets on one host
   take turns through `flock` on VENV.lock (util-linux; skipped where it is missing).
2. Returns at once when this wheel (version and content digest) was installed there
   before: a marker file VENV/.gpuplan-<version>-<digest> says so.
3. Keeps a torch the venv already sees; else installs one that fits the machine: from the
   user's `torch_index_url` when given; else the CUDA build of PyTorch's wheel index for
   the newest CUDA the driver supports (`nvidia-smi` prints "CUDA Version: X.Y"; the
   builds PyTorch publishes are listed in CUDA_BUILDS, from pytorch.org/get-started);
   else (no nvidia-smi, or a driver older than every build) the CPU build.
4. Installs 'WHEEL[bench]' (the benchmark extra), after removing any gpuplan of the
   same version that pip would otherwise keep, then writes the marker.

A user constraints file (`pip_constraints`) is passed to both pip installs with `-c`.
"""

from __future__ import annotations

import shlex

TORCH_INDEX = "https://download.pytorch.org/whl"
CUDA_BUILDS = (130, 129, 128, 126, 124, 121, 118)  # cuXYZ indexes, newest first
FIND_TORCH = "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"


def marker_name(version: str, digest: str) -> str:
    """The file in the venv that says this wheel is installed there."""
    return f".gpuplan-{version}-{digest}"


def torch_choice_script(index_url: str | None) -> str:
    """sh lines that set $index to the torch wheel index for this machine (see module doc)."""
    if index_url:
        return f"index={shlex.quote(index_url)}\n"
    builds = " ".join(str(b) for b in CUDA_BUILDS)
    return (
        'cuda=""\n'
        "if command -v nvidia-smi >/dev/null 2>&1; then\n"
        "  cuda=$(nvidia-smi 2>/dev/null | sed -n "
        "'s/.*CUDA Version: *\\([0-9][0-9]*\\)\\.\\([0-9]\\).*/\\1\\2/p' | head -n 1)\n"
        "fi\n"
        "build=cpu\n"
        'if [ -n "$cuda" ]; then\n'
        f"  for cu in {builds}; do\n"
        '    if [ "$cuda" -ge "$cu" ]; then build="cu$cu"; break; fi\n'
        "  done\n"
        "fi\n"
        f'index="{TORCH_INDEX}/$build"\n'
    )


def sh_path(path: str) -> str:
    """`path` as one shell word: quoted, except that a leading `~/` still means $HOME."""
    if path == "~":
        return '"$HOME"'
    if path.startswith("~/"):
        return '"$HOME"/' + shlex.quote(path[2:])
    return shlex.quote(path)


def install_script(
    venv: str, wheel_path: str, version: str, digest: str, torch_index_url: str | None = None,
    constraints_path: str | None = None,
) -> str:  # fmt: skip
    """The install script (see the module docstring); paths as the remote shell reads them."""
    q = shlex.quote
    constraint = f"-c {sh_path(constraints_path)} " if constraints_path else ""
    marker = marker_name(version, digest)
    return (
        "set -e\n"
        f"venv={sh_path(venv)}\n"
        f"wheel={sh_path(wheel_path)}\n"
        f'marker="$venv/{marker}"\n'
        'mkdir -p "$(dirname "$venv")"\n'
        'if command -v flock >/dev/null 2>&1; then exec 9>"$venv.lock"; flock 9; fi\n'
        'if [ -f "$marker" ] && [ -x "$venv/bin/python" ]; then\n'
        f'  echo "gpuplan {version} is installed in $venv already (reused)"; exit 0\n'
        "fi\n"
        'if [ -x "$venv/bin/python" ]; then\n'
        '  echo "reusing the venv $venv"\n'
        "else\n"
        '  echo "creating the venv $venv"\n'
        '  python3 -m venv --system-site-packages "$venv"\n'
        "fi\n"
        'py="$venv/bin/python"\n'
        f'if "$py" -c {q(FIND_TORCH)}; then\n'
        '  echo "torch: the venv has one; kept"\n'
        "else\n"
        + "".join("  " + line + "\n" for line in torch_choice_script(torch_index_url).splitlines())
        + '  echo "torch: installing from $index"\n'
        f'  "$py" -m pip install -q --disable-pip-version-check --no-input {constraint}'
        '--index-url "$index" torch\n'
        "fi\n"
        '"$py" -m pip uninstall -q -y gpuplan >/dev/null 2>&1 || true\n'
        f'echo "installing gpuplan {version} with the bench extra"\n'
        f'"$py" -m pip install -q --disable-pip-version-check --no-input {constraint}'
        '"$wheel[bench]"\n'
        'touch "$marker"\n'
    )
