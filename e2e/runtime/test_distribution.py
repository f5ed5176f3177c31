"""olm-runtime is a distribution of its own: its wheel, installed alone into a fresh virtualenv (no
olm, no pydantic, nothing of this checkout's `hack/`), runs the example controller (`examples/`)
against the real control plane, registers the test kit's fixtures with pytest, finds the pinned
control-plane binaries and starts a local control plane with `python -m olm_runtime.testing`.

Both wheels are built from this checkout with uv (its cache holds hatchling), and the virtualenv
gets olm-runtime's dependencies at the versions uv.lock pins, hash-checked. The virtualenv's runtime
is pointed at the binaries the session already has (never at a Go build, which takes minutes).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from examples.greeter.controller import GREETING
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds, load_config
from olm_runtime.testing import binaries
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions
from olm_runtime.testing.poll import eventually

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = "examples"
"""The example controllers, copied as a user's project would hold them."""


@dataclass(frozen=True)
class RuntimeVenv:
    """A virtualenv holding olm-runtime[testing] from its wheel and nothing of this checkout."""

    root: Path
    wheels: dict[str, Path]
    """Distribution name (olm_py, olm_runtime) to its wheel."""

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment without anything that would put this checkout on sys.path or name its
        binaries (the tests say where the binaries are)."""
        dropped = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "OLMPY_ASSETS", "OLM_RUNTIME_CACHE_DIR"}
        env = {k: v for k, v in os.environ.items() if k not in dropped}
        return {**env, "VIRTUAL_ENV": str(self.root), **extra}

    def run(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        timeout: float = 60,
        environment: Mapping[str, str] | None = None,
        **extra: str,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), *args],
            cwd=cwd,
            env=self.env(**(environment or {}), **extra),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def _uv(*args: str) -> None:
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "uv is not on PATH (hack/install-deps.sh installs it)"
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    result = subprocess.run(
        [uv, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, f"uv {' '.join(args)} failed:\n{result.stderr[-3000:]}"


@pytest.fixture(scope="module")
def runtime_venv(tmp_path_factory: pytest.TempPathFactory) -> RuntimeVenv:
    work = tmp_path_factory.mktemp("distribution")
    dist = work / "dist"
    # --offline: hatchling comes from uv's cache, as for `uv sync`.
    _uv("build", "--offline", "--wheel", "--all-packages", "--quiet", "--out-dir", str(dist))
    wheels = {path.name.split("-")[0]: path for path in dist.glob("*.whl")}
    assert set(wheels) == {"olm_py", "olm_runtime"}
    requirements = work / "requirements.txt"
    _uv(
        "export", "--frozen", "--package", "olm-runtime", "--extra", "testing", "--no-dev",
        "--no-default-groups", "--no-emit-workspace", "--format", "requirements-txt", "--quiet",
        "--output-file", str(requirements),
    )  # fmt: skip
    venv = RuntimeVenv(root=work / "venv", wheels=wheels)
    _uv("venv", "--quiet", "--python", sys.executable, str(venv.root))
    python = str(venv.python)
    _uv("pip", "install", "--quiet", "--python", python, "--require-hashes", "-r", str(requirements))
    _uv("pip", "install", "--quiet", "--python", python, "--no-deps", str(wheels["olm_runtime"]))
    _uv("pip", "check", "--quiet", "--python", python)
    return venv


def _names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def _metadata(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        return archive.read(next(n for n in archive.namelist() if n.endswith(f".dist-info/{name}"))).decode()


def test_each_wheel_ships_only_its_own_package(runtime_venv: RuntimeVenv) -> None:
    runtime = _names(runtime_venv.wheels["olm_runtime"])
    packages = {name.split("/")[0] for name in runtime if not name.startswith("olm_runtime-")}
    assert packages == {"olm_runtime"}
    assert "olm_runtime/testing/pytest_plugin.py" in runtime
    assert "olm_runtime/testing/__main__.py" in runtime
    # The pinned versions of the control plane ship as package data, file for file the checkout's
    # (so the wheel's cache keys are the checkout's); OLM's own wrapper modules and node do not.
    gomod = REPO / "olm_runtime" / "testing" / "gomod"
    shipped = sorted(name for name in runtime if name.startswith("olm_runtime/testing/gomod/"))
    assert shipped == sorted(
        f"olm_runtime/{p.relative_to(REPO / 'olm_runtime')}" for p in gomod.rglob("*") if p.is_file()
    )
    for module in ("etcd", "kubernetes", "kwok"):
        assert f"olm_runtime/testing/gomod/{module}/go.sum" in shipped
    assert not [
        name for name in runtime if name.startswith(("olm_runtime/testing/node", "olm_runtime/testing/cert"))
    ]
    assert not [name for name in runtime if "__pycache__" in name]
    assert "[pytest11]" in _metadata(runtime_venv.wheels["olm_runtime"], "entry_points.txt")
    requires = _metadata(runtime_venv.wheels["olm_runtime"], "METADATA")
    assert "Requires-Dist: pydantic" not in requires
    kubernetes = next(line for line in requires.splitlines() if "kubernetes-asyncio" in line)
    assert kubernetes.endswith("; extra == 'testing'")  # the test kit's ApiClient fixture only

    olm = _names(runtime_venv.wheels["olm_py"])
    assert {name.split("/")[0] for name in olm if not name.startswith("olm_py-")} == {"olm"}
    assert "Requires-Dist: olm-runtime[tracing]" in _metadata(runtime_venv.wheels["olm_py"], "METADATA")


def test_olm_runtime_installs_without_olm(runtime_venv: RuntimeVenv, tmp_path: Path) -> None:
    probe = (
        "import importlib.util, olm_runtime.manager, olm_runtime.controller\n"
        "print(olm_runtime.__file__)\n"
        "print(*(importlib.util.find_spec(m) is None for m in ('olm', 'pydantic', 'hack', 'olm_testkit')))\n"
    )
    result = runtime_venv.run(["-c", probe], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    location, absent = result.stdout.splitlines()
    assert Path(location).is_relative_to(runtime_venv.root)
    assert absent == "True True True True"


@pytest.fixture
def greeter_source(tmp_path: Path) -> Path:
    """The example controllers alone, as a user's project would hold them."""
    source = tmp_path / "src"
    shutil.copytree(REPO / EXAMPLES, source / EXAMPLES, ignore=shutil.ignore_patterns("__pycache__"))
    return source


@pytest.fixture
async def greeter(
    runtime_venv: RuntimeVenv, greeter_source: Path, control_plane: ControlPlane, namespace: str
) -> AsyncIterator[asyncio.subprocess.Process]:
    """The Greeter controller running from the virtualenv; stopped with SIGTERM after the test."""
    log = greeter_source.parent / "greeter.log"
    with log.open("wb") as output:
        proc = await asyncio.create_subprocess_exec(
            str(runtime_venv.python), "-m", "examples.greeter",
            f"--kubeconfig={control_plane.kubeconfig}", f"--lease-namespace={namespace}",
            "--metrics-bind-address=0", "--health-probe-bind-address=0",
            cwd=greeter_source, env=runtime_venv.env(), stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), timeout=30)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise
        print(log.read_text()[-3000:])  # shown with a failure


async def test_example_controller_runs_from_the_runtime_wheel(
    greeter: asyncio.subprocess.Process, admin_client: Client, namespace: str
) -> None:
    def alive() -> None:
        assert greeter.returncode is None, f"the greeter exited with {greeter.returncode}"

    async def served() -> bool:
        alive()
        try:
            await admin_client.list(GREETING, namespace=namespace)
        except (errors.NotFound, LookupError):
            return False
        return True

    await eventually(served, what="the Greeting CRD the greeter creates to be served")
    greeting = {
        "apiVersion": GREETING.api_version,
        "kind": GREETING.kind,
        "metadata": {"name": "hello", "namespace": namespace},
        "spec": {"message": "hello from the wheel"},
    }
    await admin_client.create(greeting)

    async def greeted() -> bool:
        alive()
        try:
            cm = await admin_client.get(kinds.CONFIG_MAP, "hello-greeting", namespace=namespace)
        except errors.NotFound:
            return False
        current = await admin_client.get(GREETING, "hello", namespace=namespace)
        ready = conditions.is_true(current.get("status", {}).get("conditions", []), "Ready")
        return bool(cm.get("data") == {"message": "hello from the wheel"} and ready)

    await eventually(greeted, what="the greeting ConfigMap and Ready=True")

    # The finalizer runs in the venv's controller too: the Greeting goes once it has said goodbye.
    await admin_client.delete(GREETING, "hello", namespace=namespace)

    async def gone() -> bool:
        alive()
        try:
            await admin_client.get(GREETING, "hello", namespace=namespace)
        except errors.NotFound:
            return True
        return False

    await eventually(gone, what="the Greeting to be deleted after its finalizer")


CONTROL_PLANE_OUTPUTS = sorted(name for target in binaries.CONTROL_PLANE for name in target.outputs)


def _binary_cache(control_plane_binaries: Path) -> Path | None:
    """The build cache the session's binaries were assembled in (`<cache>/<release>-<key>/`, beside
    `<cache>/targets/`), or None when they come from elsewhere (`$OLMPY_ASSETS`)."""
    cache = control_plane_binaries.parent
    return cache if (cache / "targets").is_dir() else None


@pytest.fixture(scope="module")
def venv_binaries(
    runtime_venv: RuntimeVenv, control_plane_binaries: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """The environment under which the virtualenv's runtime finds the control-plane binaries without
    building any: the session's build cache, where `binaries --no-build` finds the runtime's targets
    (and links its own directory of them), else `$OLMPY_ASSETS` naming the session's directory."""
    cache = _binary_cache(control_plane_binaries)
    if cache is None:
        return {"OLMPY_ASSETS": str(control_plane_binaries)}
    env = {"OLM_RUNTIME_CACHE_DIR": str(cache)}
    args = ["-m", "olm_runtime.testing", "binaries", "--no-build"]
    result = runtime_venv.run(args, cwd=tmp_path_factory.mktemp("binaries"), environment=env)
    assert result.returncode == 0, result.stderr
    return env


def test_the_wheel_finds_the_binaries_of_its_pins_without_building(
    runtime_venv: RuntimeVenv, control_plane_binaries: Path, tmp_path: Path
) -> None:
    cache = _binary_cache(control_plane_binaries)
    if cache is None:
        pytest.skip("the session's binaries come from $OLMPY_ASSETS, not from a build cache")
    args = ["-m", "olm_runtime.testing", "binaries", "--no-build"]
    result = runtime_venv.run(args, cwd=tmp_path, OLM_RUNTIME_CACHE_DIR=str(cache))
    assert result.returncode == 0, result.stderr
    located = Path(result.stdout.strip())
    # The wheel's wrapper modules key the cache as this checkout's do: the same directory.
    assert located == binaries.assembled_dir(binaries.CONTROL_PLANE, cache)
    assert sorted(path.name for path in located.iterdir()) == CONTROL_PLANE_OUTPUTS

    empty = runtime_venv.run(args, cwd=tmp_path, OLM_RUNTIME_CACHE_DIR=str(tmp_path / "empty"))
    assert empty.returncode == 1
    assert "not built yet" in empty.stderr
    assert "`python -m olm_runtime.testing binaries` builds them" in empty.stderr


PLUGIN_TEST = """
from olm_runtime.client import kinds


async def test_the_fixtures_come_from_the_entry_point(admin_client, namespace):
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": namespace}}
    await admin_client.create(config_map)
    assert (await admin_client.get(kinds.CONFIG_MAP, "c", namespace=namespace))["metadata"]["name"] == "c"
"""

PLUGIN_CONFIG = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = session
asyncio_default_test_loop_scope = session
"""


def test_pytest_plugin_gives_the_fixtures_to_a_project_of_its_own(
    runtime_venv: RuntimeVenv, venv_binaries: dict[str, str], tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_mine.py").write_text(PLUGIN_TEST)
    (project / "pytest.ini").write_text(PLUGIN_CONFIG)
    result = runtime_venv.run(
        ["-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        timeout=180,
        environment=venv_binaries,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout


@pytest.fixture
def own_state_dir(tmp_path: Path, control_plane_binaries: Path) -> Iterator[Path]:
    """A state directory for a control plane of the test's own, stopped if the test leaves it up."""
    state = tmp_path / "own-controlplane"
    yield state
    ControlPlane(ControlPlaneOptions(binary_dir=control_plane_binaries, state_dir=state)).down()


async def test_module_starts_a_control_plane_for_the_user(
    runtime_venv: RuntimeVenv, venv_binaries: dict[str, str], own_state_dir: Path, tmp_path: Path
) -> None:
    async def cli(command: str) -> subprocess.CompletedProcess[str]:
        args = ["-m", "olm_runtime.testing", command, f"--state-dir={own_state_dir}"]
        return await asyncio.to_thread(
            runtime_venv.run, args, cwd=tmp_path, timeout=180, environment=venv_binaries
        )

    up = await cli("up")
    assert up.returncode == 0, up.stderr
    assert up.stdout.splitlines()[-1] == f"kubeconfig:  {own_state_dir / 'kubeconfig'}"
    status = await cli("status")
    assert (status.returncode, status.stdout.splitlines()[0]) == (0, "control plane: ready")

    config = await load_config(kubeconfig=own_state_dir / "kubeconfig")
    async with await Client.connect(config, field_manager="e2e") as client:
        nodes = await client.list(kinds.NODE)
    assert len(nodes.items) == 3

    down = await cli("down")
    assert down.returncode == 0, down.stderr
    status = await cli("status")
    assert (status.returncode, status.stdout.strip()) == (1, "control plane: down")
