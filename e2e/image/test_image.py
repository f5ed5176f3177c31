"""The OLM image built here (hack/image), pushed to a real registry and pulled back.

The config says how it runs, the project layer holds both console scripts with the virtualenv's
shebang, and the pulled layers, unpacked into a directory, run both commands as 65532.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from olm_runtime.testing.pki import CertificateAuthority
from olm_runtime.testing.registry import Registry, RegistryOptions
from olm_testkit.image import build
from olm_testkit.images.registry import RegistryClient

TAG = "e2e-image"
COMPRESSED_BUDGET = 120 * 2**20
COMMANDS = ("catalogd", "operator-controller")


@dataclass(frozen=True)
class Pulled:
    manifest: dict[str, Any]
    config: dict[str, Any]
    layers: list[bytes]
    """Uncompressed tars, in order."""


@pytest.fixture(scope="module")
def image_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    # A registry of its own rather than the session's: the image needs no control plane (whose
    # binaries the first e2e run spends minutes building), only a CA for the registry's certificate.
    state = tmp_path_factory.mktemp("image-registry")
    registry = Registry(
        RegistryOptions(
            state_dir=state / "registry",
            ca=CertificateAuthority.load_or_create(state / "ca"),
            tie_to_parent=True,
        )
    )
    registry.up()
    try:
        yield registry
    finally:
        registry.down()


@pytest.fixture(scope="module")
def pushed(image_registry: Registry) -> build.BuiltImage:
    return build.build_and_push(registry_host=image_registry.host, ca_file=image_registry.ca_file, tag=TAG)


@pytest.fixture(scope="module")
def pulled(image_registry: Registry, pushed: build.BuiltImage) -> Pulled:
    client = RegistryClient(host=image_registry.host, ca_file=image_registry.ca_file)
    manifest = json.loads(client.manifest(build.DEFAULT_REPOSITORY, TAG))
    config = json.loads(client.blob(build.DEFAULT_REPOSITORY, manifest["config"]["digest"]))
    layers = [gzip.decompress(client.blob(build.DEFAULT_REPOSITORY, d["digest"])) for d in manifest["layers"]]
    return Pulled(manifest=manifest, config=config, layers=layers)


@pytest.fixture(scope="module")
def unpacked(pulled: Pulled, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("olm-image-rootfs")
    root.chmod(0o755)  # layers never describe `/` itself; runtimes make it 0755, mktemp made it 0700
    for layer in pulled.layers:
        with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
            tar.extractall(root, numeric_owner=True, filter="fully_trusted")
    return root


def _members(layer: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        return {member.name: member for member in tar.getmembers()}


def _file(layer: bytes, name: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        extracted = tar.extractfile(name)
        assert extracted is not None, f"{name} is not a regular file"
        return extracted.read()


def test_the_tag_points_at_the_digest_the_build_reported(pushed: build.BuiltImage, pulled: Pulled) -> None:
    manifest = json.dumps(pulled.manifest, separators=(",", ":")).encode()
    assert "sha256:" + hashlib.sha256(manifest).hexdigest() == pushed.digest
    assert pushed.digest_ref.endswith(f"/{build.DEFAULT_REPOSITORY}@{pushed.digest}")


def test_config_runs_operator_controller_as_65532_from_the_virtualenv(pulled: Pulled) -> None:
    runtime = pulled.config["config"]
    assert runtime["User"] == "65532:65532"
    assert runtime["Entrypoint"] == ["operator-controller"]
    assert "PATH=/opt/olm/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" in runtime["Env"]
    assert {"PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1"} <= set(runtime["Env"])
    labels = runtime["Labels"]
    assert labels["org.opencontainers.image.title"] == "olm-py"
    assert labels["org.opencontainers.image.version"]


def test_three_layers_match_their_diff_ids_and_fit_the_size_budget(
    pushed: build.BuiltImage, pulled: Pulled
) -> None:
    assert list(pushed.local.layers) == ["base", "deps", "app"]
    diff_ids = ["sha256:" + hashlib.sha256(layer).hexdigest() for layer in pulled.layers]
    assert diff_ids == pulled.config["rootfs"]["diff_ids"]
    assert sum(d["size"] for d in pulled.manifest["layers"]) == pushed.compressed_size
    assert pushed.compressed_size < COMPRESSED_BUDGET
    assert (
        pushed.local.layers["app"].size < pushed.local.layers["deps"].size < pushed.local.layers["base"].size
    )


def test_the_app_layer_holds_both_console_scripts_with_the_virtualenv_shebang(pulled: Pulled) -> None:
    app = pulled.layers[-1]
    members = _members(app)
    for command in COMMANDS:
        script = members[f"opt/olm/bin/{command}"]
        assert script.isfile()
        assert script.mode & 0o111 == 0o111
        assert _file(app, script.name).splitlines()[0] == b"#!/opt/olm/bin/python"
    assert not any(name.startswith("usr/") for name in members), "the app layer holds only /opt/olm"


def test_the_virtualenv_has_no_pip_and_no_dev_or_bench_dependency(pulled: Pulled) -> None:
    names = {name for layer in pulled.layers[1:] for name in _members(layer)}
    site_packages = "opt/olm/lib/python3.11/site-packages"
    assert f"{site_packages}/olm" in names
    assert f"{site_packages}/olm_runtime" in names  # its own wheel, beside olm-py's in the app layer
    assert f"{site_packages}/aiohttp" in names
    for absent in ("pip", "ensurepip", "kopf", "pytest", "mypy", "hypothesis"):
        assert f"{site_packages}/{absent}" not in names
    assert "opt/olm/bin/pip" not in names


def test_tmp_exists_for_everyone_and_everything_is_owned_by_root_but_the_home(pulled: Pulled) -> None:
    base = _members(pulled.layers[0])
    assert base["tmp"].isdir()
    assert base["tmp"].mode == 0o1777
    assert (base["home/nonroot"].uid, base["home/nonroot"].gid) == (65532, 65532)
    for layer in pulled.layers[1:]:
        assert {(m.uid, m.gid, m.mtime) for m in _members(layer).values()} == {(0, 0, 0)}


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_runs_as_65532_from_the_unpacked_layers(
    command: str, pulled: Pulled, unpacked: Path
) -> None:
    result = subprocess.run(
        ["chroot", "--userspec=65532:65532", str(unpacked), command, "--help"],
        env=dict(entry.split("=", 1) for entry in pulled.config["config"]["Env"]),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: {command}")
    assert result.stderr == ""


def test_every_module_loads_from_its_precompiled_bytecode(pulled: Pulled, unpacked: Path) -> None:
    # An mtime-based .pyc would look stale against the layers' fixed mtimes: Python would recompile
    # it at every start, and say so with -v.
    modules = "import olm.catalogd.main, olm.operator_controller.main"
    result = subprocess.run(
        ["chroot", "--userspec=65532:65532", str(unpacked), "/opt/olm/bin/python", "-v", "-c", modules],
        env=dict(entry.split("=", 1) for entry in pulled.config["config"]["Env"]),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "code object from '/opt/olm/lib/python3.11/site-packages/olm/" in result.stderr
    stale = [line for line in result.stderr.splitlines() if "bytecode is stale" in line]
    assert stale == []


def test_the_user_is_known_by_name(unpacked: Path) -> None:
    result = subprocess.run(
        ["chroot", "--userspec=65532:65532", str(unpacked), "/usr/bin/id"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.startswith("uid=65532(nonroot) gid=65532(nonroot)")


def test_building_again_pushes_the_same_digest(image_registry: Registry, pushed: build.BuiltImage) -> None:
    again = build.build_and_push(registry_host=image_registry.host, ca_file=image_registry.ca_file, tag=TAG)
    assert again.digest == pushed.digest
