"""Hostile sweep specs: names, labels, keys, hosts and numbers that would reach a file
name, a YAML export, instance metadata or a command line, and files or grids too big to
read. Each is refused with SpecError naming the key, before anything is written."""

from __future__ import annotations

import dataclasses
import json
import os
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from benchmarks.runners.ship import Wheel
from benchmarks.sweep import spec as spec_module
from benchmarks.sweep.skypilot import TASK_KEYS, task_yaml, write_tasks
from benchmarks.sweep.spec import (
    MAX_RUNS,
    MAX_SPEC_BYTES,
    MAX_TARGETS,
    SpecError,
    SweepSpec,
    load_spec,
    parse_spec,
    toml_depth,
)

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0fY0x7c2ZmXcT3oQ6mS1b8zN3d2Yk0mJ2kq3xL9tP me@laptop"
AWS = {"backend": "aws", "instance_type": "p4d.24xlarge", "region": "us-east-1"}
GCP = {"backend": "gcp", "instance_type": "a2-highgpu-1g", "zone": "us-central1-a"}
SSH = {"backend": "ssh", "host": "gpu-box-1"}
WHEEL = Wheel(Path("/built/gpuplan-0.2.0-py3-none-any.whl"), "0.2.0", "abcd")  # not read
RUN = {"workload": "resnet50", "steps": 20}


def data(
    target: dict[str, Any] | None = None,
    run: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    **top: Any,
) -> dict[str, Any]:
    """A decoded spec: one target, one [[runs]] entry; each part replaceable."""
    return {
        "name": "demo",
        "limits": {"max_usd": 10, "max_minutes_per_target": 30, **(limits or {})},
        "targets": [target if target is not None else dict(AWS)],
        "runs": [run if run is not None else dict(RUN)],
        **top,
    }


def refused(doc: dict[str, Any], key: str) -> SpecError:
    with pytest.raises(SpecError) as info:
        parse_spec(doc, "sweep.toml")
    assert info.value.key == key, str(info.value)
    assert str(info.value).startswith(f"sweep.toml: {key}: ")
    assert "\n" not in str(info.value)  # what is echoed back cannot add lines either
    return info.value


def refused_target(target: dict[str, Any], key: str, value: Any) -> str:
    """The words refusing `target` with `key` set to `value`; they must name targets[0].key."""
    return str(refused(data({**target, key: value}), f"targets[0].{key}"))


# ----------------------------------------------------------------- names and labels


@pytest.mark.parametrize("name", ["yx\n", "yx\r\n", "a/b", "../x", "x" * 31, "-x", "Yx"])
def test_a_name_that_would_be_a_strange_file_name_is_refused(name: str) -> None:
    error = refused(data(name=name), "name")
    assert "lower-case letters, digits and '-'" in str(error)


def test_a_trailing_newline_in_the_toml_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    text = 'name = "yx\\n"\n[limits]\nmax_usd = 1\nmax_minutes_per_target = 5\n'
    path.write_text(text + '[[targets]]\nbackend = "local"\n[[runs]]\nworkload = "resnet50"\n')
    with pytest.raises(SpecError, match=r"s\.toml: name: 'yx\\n': give 1-30 characters"):
        load_spec(path)


INJECTED = "a\nfile_mounts:\n  /root/.ssh/authorized_keys: x"


@pytest.mark.parametrize(
    "label", [INJECTED, "a\rb", "tab\there", "bell\x07", "nul\x00", "ls\u2028x", "x" * 81]
)
def test_a_label_with_control_characters_or_too_long_is_refused(label: str) -> None:
    error = refused_target(AWS, "label", label)
    assert "printable" in error or "at most 80" in error


def test_every_string_of_a_target_refuses_control_characters() -> None:
    for name, value in [*AWS.items(), ("key_name", "k"), ("identity_file", "~/.ssh/k")]:
        if name == "backend":
            continue
        refused_target(AWS, name, value + "\n")
    refused(data({**AWS, "remote_env": {"A": "x\ny"}}), "targets[0].remote_env.A")
    refused_target(SSH, "gpu_name", "H100\x1b[31m")
    refused_target(SSH, "remote_python", "x" * 1025)


def test_an_odd_but_printable_label_cannot_change_the_export(tmp_path: Path) -> None:
    label = 'a: b # {"file_mounts": 1} \'" ] } --- & *x'
    spec = parse_spec(data({**AWS, "label": label}), "s.toml")
    text = task_yaml(spec, 0, WHEEL)
    task = json.loads(text)
    assert tuple(task) == TASK_KEYS
    assert task["resources"] == {
        "cloud": "aws", "instance_type": "p4d.24xlarge", "region": "us-east-1", "use_spot": False,
    }  # fmt: skip
    assert task["run"].endswith(" --out results\n") and task["run"].count("\n") == 1
    assert label not in text
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(text) == task  # the same document for a YAML reader


def test_the_export_is_serialized_even_for_values_that_bypass_the_spec(tmp_path: Path) -> None:
    """The second defence: the export is built by a serializer, so even a value the spec
    check never saw stays one value."""
    spec = parse_spec(data(dict(GCP)), "s.toml")
    bad = dataclasses.replace(
        spec.targets[0],
        zone="us-central1-a\nfile_mounts:\n  /root/.ssh/authorized_keys: x",
        instance_type='a2"\n}, "file_mounts": {"/root/.ssh/authorized_keys": "x"}, "x": {"',
    )
    hostile = dataclasses.replace(spec, targets=(bad,))
    task = json.loads(task_yaml(hostile, 0, WHEEL))
    assert tuple(task) == TASK_KEYS
    assert set(task["resources"]) == {"cloud", "instance_type", "zone", "use_spot"}
    assert task["resources"]["zone"] == bad.zone
    assert task["resources"]["instance_type"] == bad.instance_type
    yaml = pytest.importorskip("yaml")
    assert set(yaml.safe_load(task_yaml(hostile, 0, WHEEL))) == set(TASK_KEYS)


def test_export_is_written_atomically_and_quotes_each_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = {"workload": "gpt", "size": "tiny", "batch": [2, 4], "steps": 2}
    spec = parse_spec(data(dict(GCP), runs), "s.toml")
    folder = tmp_path / "sky"
    built = tmp_path / WHEEL.name
    built.write_bytes(b"a wheel")
    [path] = write_tasks(spec, folder, Wheel(built, WHEEL.version, WHEEL.digest))
    assert sorted(p.name for p in folder.iterdir()) == ["demo-0.yaml", WHEEL.name]  # no .tmp
    task = json.loads(path.read_text())
    lines = task["run"].splitlines()
    assert "-m planner.cli.main bench run --workload gpt --world-size 1 --size tiny" in lines[0]
    assert [line.split("--batch ")[1].split()[0] for line in lines] == ["2", "4"]
    assert task["resources"]["zone"] == "us-central1-a" and task["name"] == "demo-0"

    def broken(spec: SweepSpec, index: int, wheel: Wheel | None) -> str:
        raise OSError("disk full")

    monkeypatch.setattr("benchmarks.sweep.skypilot.task_yaml", broken)
    with pytest.raises(OSError, match="disk full"):
        write_tasks(spec, folder, Wheel(built, WHEEL.version, WHEEL.digest))
    assert sorted(p.name for p in folder.iterdir()) == ["demo-0.yaml", WHEEL.name]
    assert json.loads(path.read_text()) == task  # the old file is untouched


# ----------------------------------------------------------------- keys, hosts, users


@pytest.mark.parametrize(
    ("key", "why"),
    [
        (KEY + "\nroot:ssh-ed25519 AAAAC3Nza attacker", "newline"),
        (KEY + "\rx", "newline"),
        ("ssh-dss AAAAB3NzaC1kc3M= me", "not an OpenSSH public key"),
        ("AAAAC3NzaC1lZDI1NTE5", "not an OpenSSH public key"),
        ('command="sh" ' + KEY, "not an OpenSSH public key"),
        ("ssh-ed25519 AAAA$(id) me", "not an OpenSSH public key"),
        ("ssh-rsa " + "A" * 17000, "characters"),
    ],
)
def test_ssh_public_key_must_be_one_key_line(key: str, why: str) -> None:
    assert why in refused_target(GCP, "ssh_public_key", key)


def test_real_public_key_lines_are_accepted() -> None:
    for key in (
        KEY,
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@host",
        "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTY=",
        "sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29t yubikey 5",
    ):
        spec = parse_spec(data({**GCP, "ssh_public_key": key}), "s.toml")
        assert spec.targets[0].ssh_public_key == key


@pytest.mark.parametrize(
    ("host", "hint"),
    [
        ("-oProxyCommand=touch /tmp/x", "not starting with '-'"),
        ("box;reboot", "letters, digits"),
        ("box name", "letters, digits"),
        ("me@box", "host = 'box', user = 'me'"),
        ("ssh://box:22/", "host = 'box', port = 22"),
        ("ssh://box", "host = 'box'"),
        ("[fe80::1]", "host = 'fe80::1'"),
        ("x" * 254, "at most 253"),
        ("Box ", "did you mean 'Box'"),
    ],
)
def test_a_host_that_is_not_a_name_or_address_is_refused(host: str, hint: str) -> None:
    assert hint in refused_target(SSH, "host", host)


@pytest.mark.parametrize(
    "host", ["gpu-box-1", "10.0.4.17", "::1", "fe80::1:2", "dgx.lab.example.com", "my_alias"]
)
def test_names_addresses_and_aliases_are_hosts(host: str) -> None:
    assert parse_spec(data({**SSH, "host": host}), "s.toml").targets[0].host == host


@pytest.mark.parametrize("user", ["-oProxyCommand=x", "root\n", "a b", "x;id", "9lives", "a" * 33])
def test_a_user_that_is_not_a_login_name_is_refused(user: str) -> None:
    for target, key in ((SSH, "user"), (AWS, "ssh_user"), (GCP, "ssh_user")):
        error = refused_target(target, key, user)
        assert "login name" in error or "printable characters only" in error or "at most" in error


def test_login_names_with_upper_case_dots_and_dashes_are_accepted() -> None:
    for user in ("ubuntu", "Bench", "_svc", "ec2-user", "first.last"):
        assert parse_spec(data({**SSH, "user": user}), "s.toml").targets[0].user == user


OPTION_LIKE, ESCAPES, ODD_CHARACTERS = (
    "starts with '-'",
    "no '..' part",
    "letters, digits and '._/~-'",
)


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("identity_file", "-oProxyCommand=x", OPTION_LIKE),
        ("remote_python", "-c", OPTION_LIKE),
        ("remote_dir", "-rf", OPTION_LIKE),
        ("remote_dir", "../elsewhere", ESCAPES),
        ("remote_dir", "work/../../etc", ESCAPES),
        ("remote_dir", "a b", ODD_CHARACTERS),
        ("remote_dir", "$(id)", ODD_CHARACTERS),
    ],
)
def test_paths_that_would_read_as_options_or_escape_are_refused(
    key: str, value: str, why: str
) -> None:
    assert why in refused_target(SSH, key, value)


def test_usual_paths_are_accepted() -> None:
    spec = parse_spec(
        data({**SSH, "identity_file": "~/.ssh/id ed25519", "remote_python": "/opt/py 3/python",
              "remote_dir": "~/bench/gpuplan_1.0"}),
        "s.toml",
    )  # fmt: skip
    assert spec.targets[0].remote_dir == "~/bench/gpuplan_1.0"


@pytest.mark.parametrize(
    ("target", "key", "value", "hint"),
    [
        (AWS, "instance_type", "p4d.24xlarge; id", "'p4d.24xlarge'"),
        (AWS, "region", "us east 1", "an AWS region"),
        (AWS, "image", "ami-../../x", "an AMI id"),
        (AWS, "key_name", "my key", "key pair name"),
        (AWS, "subnet_id", "subnet 1", "'subnet-'"),
        (GCP, "zone", "us-central1", "a zone of it is e.g. 'us-central1-a'"),
        (GCP, "instance_type", "n1-standard-8 + 1 x T4; id", "GCE machine"),
        (GCP, "image", "projects/x/global/images/a b", "'/._:-'"),
        (GCP, "region", "us-central1-a", "a GCP region"),
    ],
)
def test_cloud_names_follow_their_kind(
    target: dict[str, Any], key: str, value: str, hint: str
) -> None:
    assert hint in refused_target(target, key, value)


@pytest.mark.parametrize(
    ("target", "key", "value"),
    [
        (AWS, "instance_type", "P4D.24XLARGE"),
        (GCP, "zone", "US-CENTRAL1-A"),
        (GCP, "project", "My-Project"),
    ],
)
def test_a_cloud_name_in_upper_case_is_refused_suggesting_it_in_lower_case(
    target: dict[str, Any], key: str, value: str
) -> None:
    assert f"did you mean '{value.lower()}'" in refused_target(target, key, value)


def test_a_security_group_id_is_refused_naming_its_place_in_the_list() -> None:
    error = refused(
        data({**AWS, "security_group_ids": ["sg-0abc", "sg 1"]}), "targets[0].security_group_ids[1]"
    )
    assert "'sg-'" in str(error)


def test_cloud_names_in_their_usual_forms_are_accepted() -> None:
    aws = {**AWS, "image": "ami-0abcdef1234567890", "key_name": "gpuplan-sweep",
           "subnet_id": "subnet-0abc1234", "security_group_ids": ["sg-0abc1234"],
           "region": "us-gov-west-1"}  # fmt: skip
    gcp = {
        **GCP,
        "instance_type": "n1-standard-8 + 1 x T4",
        "project": "example.com:my-proj",
        "image": "https://www.googleapis.com/compute/v1/projects/p-1/global/images/family/f",
    }
    spec = parse_spec(data(aws) | {"targets": [aws, gcp]}, "s.toml")
    assert [t.region for t in spec.targets] == ["us-gov-west-1", "us-central1"]


# ----------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("part", "key", "value"),
    [
        ("limits", "max_minutes_per_target", 1e15),
        ("limits", "max_minutes_per_target", 1e308),
        ("limits", "max_minutes_per_target", 10_081),
        ("limits", "max_minutes_per_target", float("inf")),
        ("limits", "max_usd", float("nan")),
        ("limits", "max_usd", 1_000_001),
        ("limits", "max_usd", 10**400),
        ("limits", "max_parallel", 65),
        ("target", "gpu_count", 1025),
        ("target", "usd_per_hour", 10_001),
        ("target", "usd_per_hour", float("inf")),
        ("target", "port", 65_536),
        ("run", "steps", 1_000_001),
        ("run", "warmup", 100_001),
        ("run", "world_size", 1025),
        ("run", "batch", 1_048_577),
        ("run", "max_batch", 1_048_577),
        ("run", "seed", 2**32),
        ("run", "peak_tflops", 100_001),
        ("run", "peak_tflops", float("nan")),
        ("run", "memory_budget_gib", float("inf")),
        ("run", "memory_budget_gib", 100_001),
    ],
)
def test_numbers_are_finite_and_capped(part: str, key: str, value: float) -> None:
    if part == "limits":
        doc, where = data(limits={key: value}), f"limits.{key}"
    elif part == "target":
        doc, where = data({**SSH, key: value}), f"targets[0].{key}"
    else:
        doc, where = data(run={**RUN, key: value}), f"runs[0].{key}"
    error = refused(doc, where)
    assert "must be a" in str(error) and "<= " in str(error)
    assert len(str(error)) < 200  # a 400-digit number is not echoed back


def test_the_caps_themselves_are_allowed() -> None:
    spec = parse_spec(
        data(
            {**SSH, "gpu_count": 1024, "usd_per_hour": 10_000, "port": 65_535},
            {**RUN, "steps": 1_000_000, "warmup": 100_000, "world_size": 1024,
             "batch": 1_048_576, "seed": 2**32 - 1, "peak_tflops": 100_000},
            {"max_minutes_per_target": 10_080, "max_usd": 1_000_000, "max_parallel": 64},
        ),
        "s.toml",
    )  # fmt: skip
    assert spec.max_minutes_per_target == 10_080 and spec.max_parallel == 64


# ----------------------------------------------------------------- sizes


@pytest.mark.timeout(10)
def test_a_huge_grid_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    path = tmp_path / "grid.toml"
    batches = ", ".join(str(b) for b in range(1, 1001))
    sizes = ", ".join(f'"s{n}"' for n in range(1000))
    path.write_text(
        'name = "grid"\n[limits]\nmax_usd = 1\nmax_minutes_per_target = 5\n'
        '[[targets]]\nbackend = "local"\n'
        f'[[runs]]\nworkload = "resnet50"\nbatch = [{batches}]\nsize = [{sizes}]\n'
    )
    start = time.monotonic()
    with pytest.raises(SpecError, match=r"runs\[0\]\.batch: 1,000 values; a list holds at most 64"):
        load_spec(path)
    assert time.monotonic() - start < 1.0


def test_the_grid_is_counted_over_all_entries() -> None:
    wide = {"workload": "resnet50", "batch": list(range(1, 65)), "world_size": [1, 2, 4, 8]}
    assert len(parse_spec(data(run=wide), "s.toml").runs) == 256
    doc = data(run=wide)
    doc["runs"] = [wide, wide | {"steps": 10}, {"workload": "bert"}]
    error = refused(doc, "runs[2]")
    assert f"513 runs by this entry; a sweep has at most {MAX_RUNS}" in str(error)
    cube = {
        "workload": "resnet50",
        "batch": list(range(1, 10)),
        "world_size": list(range(1, 9)),
        "compile": [True, False],
        "warmup": 1,
        "precision": ["fp16", "bf16", "fp32", "tf32"],
    }
    assert "reaches 576 runs" in str(refused(data(run=cube), "runs[0]"))


def test_too_many_targets_are_refused() -> None:
    doc = data()
    doc["targets"] = [{**SSH, "label": f"t{n}"} for n in range(MAX_TARGETS + 1)]
    assert f"at most {MAX_TARGETS}" in str(refused(doc, "targets"))


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "text",
    [
        "x = " + "[" * 500 + "]" * 500,
        "x = " + "{a = " * 500 + "1" + "}" * 500,
        "name = 'demo'\n[runs]\n" + "a." * 3000 + "b = 1\n",
        "[" + "a." * 3000 + "b]\n",
    ],
    ids=["arrays", "inline-tables", "dotted-key", "dotted-table"],
)
def test_deep_nesting_is_refused_before_parsing(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(text)
    start = time.monotonic()
    with pytest.raises(SpecError, match=r"deep\.toml: <toml>: nested deeper than 16 levels"):
        load_spec(path)
    assert time.monotonic() - start < 1.0


def test_brackets_and_dots_in_strings_and_comments_do_not_count() -> None:
    assert toml_depth("a = '[[[[[[[[[[[[[[[[[[[[.......'  # [[[[[[[[[[[[[[[[[[[\n") == 0
    multi_line = 'a = """x\\\n[[[[[[[[[[[[[[[[[[[[ \\""" """\nb = [1.5, [2]]'
    assert tomllib.loads(multi_line)["b"] == [1.5, [2]]
    assert toml_depth(multi_line) == 2
    assert toml_depth('a = "\\"[[[[[[[[[[[[[[[[[[[[[["\nb.c = 1') == 1
    assert toml_depth("[[targets]]\nremote_env = { A = '1', B = \"[\" }\n") == 2


def test_dict_nesting_is_bounded_in_parse_spec_too() -> None:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(40):
        inner["a"] = {}
        inner = inner["a"]
    refused(data(**{"limits": deep}), "<toml>")


@pytest.mark.timeout(10)
def test_a_device_a_pipe_or_a_folder_is_not_read(tmp_path: Path) -> None:
    start = time.monotonic()
    with pytest.raises(SpecError, match=r"/dev/zero: <file>: not a regular file"):
        load_spec("/dev/zero")
    fifo = tmp_path / "spec.toml"
    os.mkfifo(fifo)  # opening it would wait for a writer
    with pytest.raises(SpecError, match="not a regular file"):
        load_spec(fifo)
    with pytest.raises(SpecError, match="a folder"):
        load_spec(tmp_path)
    assert time.monotonic() - start < 1.0


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_text("# padding\n" * (MAX_SPEC_BYTES // 10 + 1))
    with pytest.raises(SpecError, match=r"big\.toml: <file>: .* bytes; the limit is 1,048,576"):
        load_spec(path)


def test_an_integer_too_long_to_convert_is_a_spec_error(tmp_path: Path) -> None:
    path = tmp_path / "long.toml"
    path.write_text("name = 'demo'\n[limits]\nmax_usd = " + "9" * 5000 + "\n")
    with pytest.raises(SpecError, match=r"long\.toml: <toml>: not a usable TOML file"):
        load_spec(path)


def test_unknown_keys_with_control_characters_are_shown_escaped() -> None:
    doc = data()
    doc["limits"]["max_usd\nfake: line"] = 1
    error = refused(doc, "limits.'max_usd\\nfake: line'")
    assert "did you mean 'max_usd'" in str(error)


def test_the_module_uses_full_matches() -> None:
    for pattern in (spec_module.NAME_PATTERN, spec_module.REMOTE_ENV_NAME):
        assert pattern.pattern.startswith("\\A") and pattern.pattern.endswith("\\Z")
    assert not spec_module.REMOTE_ENV_NAME.fullmatch("PATH\n")
    refused(data({**SSH, "remote_env": {"PATH\n": "x"}}), "targets[0].remote_env.'PATH\\n'")


def test_spec_text_from_toml_round_trips() -> None:
    text = 'name = "demo"\n[limits]\nmax_usd = 1\nmax_minutes_per_target = 5\n'
    doc = tomllib.loads(text + '[[targets]]\nbackend = "local"\n[[runs]]\nworkload = "bert"\n')
    assert parse_spec(doc, "s.toml").targets[0].label == "local"
