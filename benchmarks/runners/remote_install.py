"""The shell script that installs a gpuplan wheel on a remote machine, with a fitting torch.

`install_script(...)` is one POSIX sh script (dash and bash both run it), every value in
it quoted with shlex.quote. What it does, in order:

1. Creates the venv (`python3 -m venv --system-site-packages`, so that a deep-learning
   image's CUDA torch is reused), or reuses it when it exists. Two targets on one host
   take turns through `flock` on VENV.lock (util-linux; skipped where it is missing).
2. Returns at once when this wheel (version and content digest) was installed there
   before: a marker file VENV/.gpuplan-<version>-<digest> says so.
3. Keeps a torch the venv already sees; else installs one that fits the machine: from the
   user's `torch_index_url` when given; else it picks the build, CUDA for the newest CUDA
   the driver supports (`nvidia-smi` prints "CUDA Version: X.Y"; the builds PyTorch
   publishes are listed in CUDA_BUILDS, from pytorch.org/get-started), or CPU (no
   nvidia-smi, or a driver older than every build), and tries, in order:
   - CPU: the index pip is configured for (pip.conf, PIP_* variables; PyPI by default)
     when what pip would pick there is a CPU build (`pip install --dry-run --report`);
     PyTorch's CPU index; then pip's index whatever its build (PyPI's Linux torch is a
     CUDA build: larger, and it runs on CPU);
   - CUDA: PyTorch's index for that build, then pip's configured index.
   PyTorch's index is asked with one retry and a 30 s timeout, so a host that cannot
   reach it moves on quickly. When every try fails, the error names each index tried.
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


# Prints pip's configured sources (index-url, extra-index-url, find-links; PyPI when no
# index is set), as `pip config list` reports them (files and PIP_* variables).
PIP_SOURCES = """
import subprocess, sys
out = subprocess.run([sys.executable, '-m', 'pip', 'config', 'list'],
                     capture_output=True, text=True).stdout
found = {}
for line in out.splitlines():
    key, _, value = line.partition('=')
    name = key.rsplit('.', 1)[-1]
    if name in ('index-url', 'extra-index-url', 'find-links', 'no-index'):
        found.setdefault(name, []).extend(value.strip().strip(chr(39) + chr(34)).split())
index = found.get('index-url') or ([] if found.get('no-index') else ['https://pypi.org/simple'])
print(', '.join(dict.fromkeys(index + found.get('extra-index-url', [])
                              + found.get('find-links', []))) or 'none')
"""
# Prints "cpu" or "cuda": the build of the torch in a `pip install --report` file.
REPORTED_BUILD = """
import json, sys
meta = json.load(open(sys.argv[1]))['install'][0]['metadata']
reqs = meta.get('requires_dist') or []
try:
    from pip._vendor.packaging.requirements import Requirement
    deps = [Requirement(r) for r in reqs]
    cuda = any(d.name.startswith(('nvidia-', 'cuda-'))
               and (d.marker is None or d.marker.evaluate({'extra': ''})) for d in deps)
except Exception:
    cuda = any(r.startswith('nvidia-') for r in reqs)
print('cuda' if cuda or '+cu' in meta['version'] else 'cpu')
"""
PYTORCH_TRY = "--retries 1 --timeout 30"  # a host that cannot reach PyTorch's index moves on


def torch_choice_script(index_url: str | None) -> str:
    """sh lines that set $build (cpu, cuXYZ, or "given") and $index, PyTorch's wheel index
    for that build or the user's (see module doc)."""
    if index_url:
        return f"build=given\nindex={shlex.quote(index_url)}\n"
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


def torch_install_script(index_url: str | None, constraint: str) -> str:
    """sh lines that install torch into "$py" (see the module docstring, step 3); they end
    the script with an error naming every index tried when none gives a torch."""
    q = shlex.quote
    pip = f'"$py" -m pip install -q --disable-pip-version-check --no-input {constraint}'
    if index_url:
        return (
            torch_choice_script(index_url)
            + 'echo "torch: installing from $index"\n'
            + f'if ! {pip}--index-url "$index" torch; then\n'
            + '  echo "torch could not be installed from $index (torch_index_url)" >&2; exit 1\n'
            + "fi\n"
        )
    return (
        torch_choice_script(None)
        + f'sources=$("$py" -c {q(PIP_SOURCES)} 2>/dev/null || echo "pip\'s default")\n'
        + 'configured="pip\'s configured index ($sources)"\n'
        + 'tried=""\nok=""\n'
        + 'report="$venv/.torch-choice.json"\n'
        + 'if [ "$build" = cpu ]; then\n'
        + f'  if {pip}--dry-run --no-deps --report "$report" torch >/dev/null 2>&1 &&\n'
        + f'     [ "$("$py" -c {q(REPORTED_BUILD)} "$report" 2>/dev/null)" = cpu ]; then\n'
        + '    echo "torch: installing the CPU build from $configured"\n'
        + f"    if {pip}torch; then ok=1; fi\n"
        + "  fi\n"
        + '  tried="$configured (for a CPU build)"\n'
        + "fi\n"
        + 'if [ -z "$ok" ]; then\n'
        + '  echo "torch: installing the $build build from $index"\n'
        + f'  if {pip}{PYTORCH_TRY} --index-url "$index" torch; then ok=1; fi\n'
        + '  tried="${tried:+$tried; }$index"\n'
        + "fi\n"
        + 'if [ -z "$ok" ]; then\n'
        + '  echo "torch: installing from $configured"\n'
        + f"  if {pip}torch; then ok=1; fi\n"
        + '  tried="$tried; $configured"\n'
        + "fi\n"
        + 'rm -f "$report"\n'
        + 'if [ -z "$ok" ]; then\n'
        + '  echo "torch could not be installed; tried: $tried" >&2; exit 1\n'
        + "fi\n"
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
        "else\n" + torch_install_script(torch_index_url, constraint) + "fi\n"
        '"$py" -m pip uninstall -q -y gpuplan >/dev/null 2>&1 || true\n'
        f'echo "installing gpuplan {version} with the bench extra"\n'
        f'"$py" -m pip install -q --disable-pip-version-check --no-input {constraint}'
        '"$wheel[bench]"\n'
        'touch "$marker"\n'
    )
