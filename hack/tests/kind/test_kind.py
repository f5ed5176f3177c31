"""`make run CLUSTER=kind`: the files it writes and the commands it runs, checked without docker or kind
(neither exists where the tests run); the thin loop that runs them is checked with real processes."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import yaml

from hack import kind
from olm.api import names
from olm_testkit import binaries
from olm_testkit.deploy import kustomize

REPO = Path(__file__).resolve().parents[3]
IMAGE = kind.DEFAULT_IMAGE


def manifest_image_names() -> set[str]:
    """The image names (tag removed) that manifests/*/deployment.yaml use, read from the files."""
    found: set[str] = set()
    for path in sorted((REPO / "manifests").glob("*/deployment.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if not document or document.get("kind") != "Deployment":
                continue
            for container in document["spec"]["template"]["spec"]["containers"]:
                image = str(container["image"])
                head, _, last = image.rpartition("/")
                found.add(f"{head}/{last.partition(':')[0]}")
    return found


def files(tmp_path: Path) -> kind.Files:
    written = kind.Files.under(tmp_path)
    kind.write_files(written, REPO, IMAGE)
    return written


def plan(tmp_path: Path, engine: str = "docker", *, exists: bool = False) -> list[kind.Step]:
    tools = kind.Tools(
        engine=engine, env={"KIND_EXPERIMENTAL_PROVIDER": "podman"} if engine == "podman" else {}
    )
    return kind.plan(repo=REPO, files=files(tmp_path), image=IMAGE, tools=tools, cluster_exists=exists)


def index(commands: Sequence[Sequence[str]], matches: Callable[[Sequence[str]], bool]) -> int:
    hits = [number for number, argv in enumerate(commands) if matches(argv)]
    assert hits, "no command matches"
    return hits[0]


def kubectl(argv: Sequence[str], *words: str) -> bool:
    return argv[0] == "kubectl" and all(word in argv for word in words)


def test_cluster_config_is_a_kind_cluster_named_olm_py() -> None:
    config = yaml.safe_load(kind.cluster_config())
    assert config["kind"] == "Cluster"
    assert config["apiVersion"] == "kind.x-k8s.io/v1alpha4"
    assert config["name"] == kind.CLUSTER_NAME == "olm-py"
    assert config["nodes"] == [{"role": "control-plane"}]


def test_overlay_sets_only_the_image_of_the_shipped_manifests(tmp_path: Path) -> None:
    overlay_dir = files(tmp_path).overlay_dir
    document = yaml.safe_load((overlay_dir / "kustomization.yaml").read_text())
    assert set(document) == {"apiVersion", "kind", "resources", "images"}
    assert document["kind"] == "Kustomization"
    bases = [(overlay_dir / resource).resolve() for resource in document["resources"]]
    assert bases == [REPO / "manifests" / "catalogd", REPO / "manifests" / "operator-controller"]
    assert all((base / "kustomization.yaml").is_file() for base in bases)
    (shipped,) = manifest_image_names()
    assert document["images"] == [{"name": shipped, "newName": "localhost/olm-py/olm", "newTag": "dev"}]


def test_overlay_builds_the_bases_with_nothing_but_the_image_changed(tmp_path: Path) -> None:
    overlay_dir = files(tmp_path).overlay_dir
    plain = [obj for base in kind.BASES for obj in kustomize.build(REPO / base)]
    changed = kustomize.build(overlay_dir)
    assert kustomize.images_in(changed) == {IMAGE}
    assert len(plain) == len(changed)
    for before, after in zip(plain, changed, strict=True):
        for container in [
            *before.get("spec", {}).get("template", {}).get("spec", {}).get("containers", ()),
        ]:
            container["image"] = IMAGE
        assert before == after


def test_commands_run_in_order(tmp_path: Path) -> None:
    commands = kind.commands(plan(tmp_path))
    version = binaries.cert_manager_version()
    order = [
        index(commands, lambda a: list(a) == ["kind", "version"]),
        index(commands, lambda a: list(a) == ["docker", "info"]),
        index(commands, lambda a: list(a) == ["kubectl", "version", "--client"]),
        index(commands, lambda a: list(a[:3]) == ["kind", "create", "cluster"]),
        index(commands, lambda a: kubectl(a, "version", "json")),
        index(commands, lambda a: list(a[:2]) == ["docker", "build"]),
        index(commands, lambda a: list(a[:3]) == ["kind", "load", "docker-image"]),
        index(commands, lambda a: kubectl(a, "apply", kind.cert_manager_manifest_url(version))),
        index(commands, lambda a: kubectl(a, "cert-manager", "--for=condition=Available")),
        index(commands, lambda a: kubectl(a, "create", "--dry-run=server")),
        index(commands, lambda a: kubectl(a, "apply", str(REPO / "manifests/crds"))),
        index(commands, lambda a: kubectl(a, "wait", "--for=condition=Established")),
        index(commands, lambda a: kubectl(a, "apply", "-k")),
        index(commands, lambda a: kubectl(a, "rollout", "status", "deployment/catalogd-controller-manager")),
        index(
            commands,
            lambda a: kubectl(a, "rollout", "status", "deployment/operator-controller-controller-manager"),
        ),
        index(commands, lambda a: kubectl(a, "apply", "-f") and a[-1].endswith("demo-catalog.yaml")),
        index(commands, lambda a: kubectl(a, "--for=condition=Serving", "clustercatalog/operatorhubio")),
        index(commands, lambda a: kubectl(a, "apply", "-f") and a[-1].endswith("demo-extension.yaml")),
        index(commands, lambda a: kubectl(a, "--for=condition=Installed", "clusterextension/kube-green")),
        index(commands, lambda a: kubectl(a, "get", "clustercatalogs,clusterextensions,clusterobjectsets")),
    ]
    assert order == sorted(order)
    assert len(set(order)) == len(order)


def test_build_load_and_apply_name_the_same_image_and_real_paths(tmp_path: Path) -> None:
    steps = plan(tmp_path)
    (build_step,) = [step for step in steps if step.argv[:2] == ("docker", "build")]
    assert build_step.argv == ("docker", "build", "-t", IMAGE, "-f", "Containerfile", ".")
    assert build_step.cwd == REPO
    assert (REPO / "Containerfile").is_file()
    (load,) = [step for step in steps if step.argv[:2] == ("kind", "load")]
    assert load.argv == ("kind", "load", "docker-image", IMAGE, "--name", "olm-py")
    (create,) = [step for step in steps if step.argv[:3] == ("kind", "create", "cluster")]
    assert create.argv[create.argv.index("--name") + 1] == "olm-py"
    assert Path(create.argv[create.argv.index("--config") + 1]).read_text() == kind.cluster_config()
    (apply_k,) = [step for step in steps if "-k" in step.argv]
    overlay = Path(apply_k.argv[apply_k.argv.index("-k") + 1])
    assert (overlay / "kustomization.yaml").is_file()
    assert any(str(REPO / "manifests/crds") in step.argv for step in steps)
    assert (REPO / "manifests/crds").is_dir()


def test_every_cluster_command_names_the_kind_context(tmp_path: Path) -> None:
    for argv in kind.commands(plan(tmp_path)):
        if argv[0] == "kubectl" and argv[1:] != ["version", "--client"]:
            assert argv[1:3] == ["--context", "kind-olm-py"], argv


def test_cert_manager_is_the_pinned_release() -> None:
    version = binaries.cert_manager_version()
    assert version.startswith("v")
    url = kind.cert_manager_manifest_url(version)
    assert url.endswith(f"/releases/download/{version}/cert-manager.yaml")
    check = yaml.safe_load(kind.cert_manager_check())
    assert (check["apiVersion"], check["kind"]) == ("cert-manager.io/v1", "Issuer")
    assert check["metadata"]["namespace"] == "cert-manager"


def test_webhook_dependent_steps_are_retried_and_rollouts_explain_failures(tmp_path: Path) -> None:
    steps = plan(tmp_path)
    (dry_run,) = [step for step in steps if "--dry-run=server" in step.argv]
    assert dry_run.retry_seconds > 0
    rollouts = [step for step in steps if "rollout" in step.argv and "status" in step.argv]
    assert len(rollouts) == 2
    for step in rollouts:
        assert any("describe" in argv and "pods" in argv for argv in step.diagnose)
        assert any(arg.startswith("--timeout=") for arg in step.argv)


def test_podman_saves_an_archive_and_loads_it(tmp_path: Path) -> None:
    steps = plan(tmp_path, "podman")
    commands = kind.commands(steps)
    assert not any(argv[0] == "docker" or "docker-image" in argv for argv in commands)
    build_at = index(commands, lambda a: list(a[:2]) == ["podman", "build"])
    save_at = index(commands, lambda a: list(a[:2]) == ["podman", "save"])
    load_at = index(commands, lambda a: list(a[:3]) == ["kind", "load", "image-archive"])
    assert build_at < save_at < load_at
    save, load = commands[save_at], commands[load_at]
    archive = save[save.index("-o") + 1]
    assert save[-1] == IMAGE
    assert load == ["kind", "load", "image-archive", archive, "--name", "olm-py"]
    assert ["podman", "info"] in commands


def test_a_reused_cluster_is_not_created_again_and_its_pods_restart(tmp_path: Path) -> None:
    commands = kind.commands(plan(tmp_path, exists=True))
    assert not any(argv[:3] == ["kind", "create", "cluster"] for argv in commands)
    export = index(commands, lambda a: list(a[:3]) == ["kind", "export", "kubeconfig"])
    restart = index(commands, lambda a: kubectl(a, "rollout", "restart"))
    status = index(commands, lambda a: kubectl(a, "rollout", "status"))
    assert export < index(commands, lambda a: list(a[:2]) == ["docker", "build"]) < restart < status


def test_demo_uses_the_v1_api_and_an_installer_bound_to_cluster_admin() -> None:
    catalog = yaml.safe_load(kind.demo_catalog())
    assert catalog["apiVersion"] == "olm.operatorframework.io/v1"
    assert catalog["spec"]["source"] == {
        "type": "Image",
        "image": {"ref": "quay.io/operatorhubio/catalog:latest", "pollIntervalMinutes": 60},
    }
    documents = {doc["kind"]: doc for doc in yaml.safe_load_all(kind.demo_extension())}
    assert set(documents) == {"Namespace", "ServiceAccount", "ClusterRoleBinding", "ClusterExtension"}
    spec = documents["ClusterExtension"]["spec"]
    assert spec["namespace"] == documents["Namespace"]["metadata"]["name"]
    assert spec["serviceAccount"]["name"] == documents["ServiceAccount"]["metadata"]["name"]
    assert spec["source"]["sourceType"] == "Catalog"
    assert spec["source"]["catalog"]["packageName"] == "kube-green"
    assert spec["source"]["catalog"]["selector"] == {
        "matchLabels": {names.METADATA_NAME_LABEL: catalog["metadata"]["name"]}
    }
    binding = documents["ClusterRoleBinding"]
    assert binding["roleRef"]["name"] == "cluster-admin"
    assert binding["subjects"][0]["name"] == documents["ServiceAccount"]["metadata"]["name"]


def test_down_deletes_the_cluster() -> None:
    assert kind.commands(kind.down_plan()) == [["kind", "delete", "cluster", "--name", "olm-py"]]


@pytest.mark.parametrize(
    ("version", "ok"),
    [("v1.31.0", True), ("v1.35.4", True), ("v2.0.0", True), ("v1.30.13", False), ("v1.29.2+k3s1", False)],
)
def test_server_version_check(version: str, ok: bool) -> None:
    reason = kind.check_server_version(json.dumps({"serverVersion": {"gitVersion": version}}))
    assert (reason is None) == ok
    if not ok:
        assert ">= 1.31" in str(reason)


def test_server_version_check_reports_unreadable_output() -> None:
    assert kind.check_server_version("not json") is not None


def path_with(tmp_path: Path, *tools: str) -> str:
    directory = tmp_path / "bin"
    directory.mkdir(exist_ok=True)
    for tool in tools:
        executable = directory / tool
        executable.write_text("#!/bin/sh\nexit 0\n")
        executable.chmod(executable.stat().st_mode | stat.S_IXUSR)
    return str(directory)


def test_docker_is_preferred(tmp_path: Path) -> None:
    tools = kind.find_tools(path=path_with(tmp_path, "docker", "podman", "kind", "kubectl"), environ={})
    assert tools == kind.Tools(engine="docker", env={})


def test_podman_is_chosen_without_docker_and_kind_is_told(tmp_path: Path) -> None:
    tools = kind.find_tools(path=path_with(tmp_path, "podman", "kind", "kubectl"), environ={})
    assert tools == kind.Tools(engine="podman", env={"KIND_EXPERIMENTAL_PROVIDER": "podman"})


def test_an_explicit_podman_provider_wins_over_docker(tmp_path: Path) -> None:
    path = path_with(tmp_path, "docker", "podman", "kind", "kubectl")
    tools = kind.find_tools(path=path, environ={"KIND_EXPERIMENTAL_PROVIDER": "podman"})
    assert tools.engine == "podman"


def test_missing_tools_are_all_named(tmp_path: Path) -> None:
    with pytest.raises(kind.MissingTools) as raised:
        kind.find_tools(path=path_with(tmp_path), environ={})
    message = str(raised.value)
    for word in ("install", "docker", "podman", "kind", "kubectl"):
        assert word in message


def test_missing_kind_alone_is_named(tmp_path: Path) -> None:
    with pytest.raises(kind.MissingTools, match=r"kind \(") as raised:
        kind.find_tools(path=path_with(tmp_path, "docker", "kubectl"), environ={})
    assert "kubectl" not in str(raised.value)


def test_down_needs_no_kubectl(tmp_path: Path) -> None:
    tools = kind.find_tools(path=path_with(tmp_path, "docker", "kind"), environ={}, kubectl=False)
    assert tools.engine == "docker"


def test_an_unsupported_provider_is_refused(tmp_path: Path) -> None:
    path = path_with(tmp_path, "docker", "kind", "kubectl")
    with pytest.raises(kind.MissingTools, match="nerdctl"):
        kind.find_tools(path=path, environ={"KIND_EXPERIMENTAL_PROVIDER": "nerdctl"})


def test_up_without_the_tools_fails_with_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", path_with(tmp_path))
    monkeypatch.delenv("KIND_EXPERIMENTAL_PROVIDER", raising=False)
    assert kind.up(REPO) == 1
    assert "please install" in capsys.readouterr().err


def python(code: str) -> tuple[str, ...]:
    return (sys.executable, "-c", code)


def test_run_names_the_failing_step_its_command_and_output_tail() -> None:
    steps = [
        kind.Step(what="first", argv=python("print('fine')")),
        kind.Step(
            what="second",
            argv=python(
                "import sys; print('\\n'.join(f'line {i}' for i in range(100)), file=sys.stderr); sys.exit(3)"
            ),
            diagnose=(python("print('diagnosis')"),),
        ),
        kind.Step(what="never", argv=python("raise SystemExit(9)")),
    ]
    with pytest.raises(kind.StepFailed) as raised:
        kind.run(steps, os.environ)
    message = str(raised.value)
    assert "step 2/3 failed: second" in message
    assert "exit status 3" in message
    assert "line 99" in message
    assert "line 10\n" not in message
    assert "diagnosis" in message


def test_run_retries_until_success(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kind, "RETRY_PAUSE", 0.01)
    marker = tmp_path / "count"
    code = (
        f"import pathlib, sys; p = pathlib.Path({str(marker)!r}); "
        "n = int(p.read_text()) if p.exists() else 0; "
        "p.write_text(str(n + 1)); sys.exit(0 if n >= 2 else 1)"
    )
    kind.run([kind.Step(what="flaky", argv=python(code), retry_seconds=30)], os.environ)
    assert marker.read_text() == "3"


def test_run_stops_when_a_check_refuses_the_output() -> None:
    step = kind.Step(
        what="too old",
        argv=python('print(\'{"serverVersion": {"gitVersion": "v1.28.0"}}\')'),
        check=kind.check_server_version,
    )
    with pytest.raises(kind.StepFailed, match=r">= 1\.31"):
        kind.run([step], os.environ)


def test_run_reports_a_missing_program() -> None:
    with pytest.raises(kind.StepFailed, match="no-such-program"):
        kind.run([kind.Step(what="absent", argv=("no-such-program-olm-py",), stream=True)], os.environ)
