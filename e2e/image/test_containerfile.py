"""The Containerfile builds with a real builder, buildah, from the Debian base hack/image makes (no
image is pulled), and the image it builds runs both commands as 65532 with only the runtime
dependencies installed.

buildah runs rootful with chroot isolation and vfs storage in a directory of its own, so it needs
neither a container runtime nor overlay mounts. The build stage downloads uv and the locked
dependencies from the Python package index, so this test needs the network like `uv sync` does; the
host's CA store is mounted over the build's, so a TLS-intercepting proxy the host trusts works too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from olm_testkit.image import build, oci

IMAGE = "localhost/olm-py/olm:containerfile"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


@dataclass(frozen=True)
class Buildah:
    """buildah with its storage, run state and temporary files under `root`."""

    root: Path

    def __call__(self, *args: str, timeout: float = 120) -> str:
        argv = [
            "buildah",
            "--root",
            str(self.root / "storage"),
            "--runroot",
            str(self.root / "run"),
            "--storage-driver",
            "vfs",
            *args,
        ]
        result = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, "TMPDIR": str(self.root / "tmp")},
        )
        if result.returncode != 0:
            raise AssertionError(
                f"{' '.join(argv[7:10])} exited with {result.returncode}:\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result.stdout


@pytest.fixture(scope="module")
def buildah() -> Iterator[Buildah]:
    if shutil.which("buildah") is None:
        pytest.fail("buildah is not installed: install Debian's `buildah` package")
    # Not tmp_path: pytest keeps old temporary directories, and vfs storage is a few hundred MB.
    # buildah names the base image after this path, so it must be a valid image reference: mkdtemp's
    # random part may end in "_", which a reference does not allow.
    root = Path(tempfile.gettempdir()) / f"olm-buildah-{uuid.uuid4().hex[:12]}"
    root.mkdir()
    (root / "tmp").mkdir()
    tool = Buildah(root)
    try:
        yield tool
    finally:
        subprocess.run(
            ["buildah", "--root", str(root / "storage"), "--runroot", str(root / "run"), "rm", "--all"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def image(buildah: Buildah) -> str:
    base_dir = buildah.root / "base"
    oci.write_layout(build.base_image(builder=True), base_dir, ref_name=build.base_ref_name(builder=True))
    mounts = ["--volume", f"{HOST_CA_BUNDLE}:{HOST_CA_BUNDLE}:ro"] if HOST_CA_BUNDLE.is_file() else []
    buildah(
        "bud",
        "--isolation",
        "chroot",
        "--build-arg",
        f"BASE=oci:{base_dir}:{build.base_ref_name(builder=True)}",
        *mounts,
        "--file",
        str(build.PROJECT_DIR / "Containerfile"),
        "--tag",
        IMAGE,
        str(build.PROJECT_DIR),
        timeout=900,
    )
    return IMAGE


@pytest.fixture(scope="module")
def container(buildah: Buildah, image: str) -> Iterator[str]:
    name = buildah("from", "--pull=never", image).strip()
    try:
        yield name
    finally:
        buildah("rm", name)


def _run(buildah: Buildah, container: str, *argv: str) -> str:
    return buildah("run", "--isolation", "chroot", container, "--", *argv)


def test_the_config_runs_operator_controller_as_65532(buildah: Buildah, image: str) -> None:
    config = json.loads(buildah("inspect", "--type", "image", image))["OCIv1"]["config"]
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"] == ["operator-controller"]
    assert any(entry.startswith("PATH=/opt/olm/bin:") for entry in config["Env"])


@pytest.mark.parametrize("command", ["catalogd", "operator-controller"])
def test_each_command_runs_as_65532(buildah: Buildah, container: str, command: str) -> None:
    assert _run(buildah, container, command, "--help").startswith(f"usage: {command}")
    assert _run(buildah, container, "id", "-u").strip() == "65532"


def test_scripts_run_from_the_virtualenv_where_it_was_made(buildah: Buildah, container: str) -> None:
    shebang = _run(buildah, container, "head", "-n1", "/opt/olm/bin/catalogd").strip()
    assert shebang == "#!/opt/olm/bin/python"


def test_only_the_runtime_dependencies_are_installed(buildah: Buildah, container: str) -> None:
    # kopf is the bench group's, pytest and mypy the dev group's: a default `uv sync` installs them.
    probe = (
        "import importlib.util as u, json; "
        "print(json.dumps({m: u.find_spec(m) is not None "
        "for m in ('olm', 'olm_runtime', 'aiohttp', 'kopf', 'pytest', 'mypy', 'pip')}))"
    )
    found = json.loads(_run(buildah, container, "/opt/olm/bin/python", "-c", probe))
    assert found == {
        "olm": True,
        "olm_runtime": True,  # from its own distribution, the workspace member runtime/
        "aiohttp": True,
        "kopf": False,
        "pytest": False,
        "mypy": False,
        "pip": False,
    }
