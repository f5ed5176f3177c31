"""`make run CLUSTER=kind`: OLM deployed from `manifests/` into a kind cluster, one extension installed.

    python -m hack.kind up [--image REF]   # create or reuse the kind cluster `olm-py`, deploy, demo
    python -m hack.kind down               # delete the cluster

For machines with `kind`, `kubectl` and `docker` (or `podman`: chosen when docker is absent, or when
`KIND_EXPERIMENTAL_PROVIDER=podman` is already set). Unlike `make run`, everything here is what a
user would type: the image is built from the `Containerfile` and loaded into the cluster's node,
cert-manager comes from its released static manifest, OLM is applied with `kubectl apply -k` through
an overlay that only sets the image, and the demo catalog is the public operatorhub.io catalog, so
the node needs network access.

Every command is decided up front by pure functions (`plan`, `down_plan`) and run by a thin loop
that stops at the first failure with the command, the tail of its output and, for a rollout or an
installation that does not finish, what the cluster says about it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hack import demo
from olm.api import names
from olm_testkit import binaries
from olm_testkit.deploy import kustomize

CLUSTER_NAME = "olm-py"
CONTEXT = f"kind-{CLUSTER_NAME}"
"""The kubeconfig context kind writes for the cluster; every kubectl command names it, so a user who
switches context while `up` runs cannot redirect the rest of the run to another cluster."""
DEFAULT_IMAGE = "localhost/olm-py/olm:dev"
SYSTEM_NAMESPACE = names.DEFAULT_SYSTEM_NAMESPACE
BASES = ("manifests/catalogd", "manifests/operator-controller")
CRDS = "manifests/crds"
MIN_KUBERNETES = (1, 31)
CERT_MANAGER_NAMESPACE = "cert-manager"

DEMO_CATALOG = "operatorhubio"
DEMO_CATALOG_IMAGE = "quay.io/operatorhubio/catalog:latest"
DEMO_EXTENSION = demo.EXTENSION
DEMO_NAMESPACE = demo.NAMESPACE

CREATE_WAIT = "180s"
ROLLOUT_TIMEOUT = "300s"
# The operatorhub.io catalog is large: unpacking it is the slowest step of the run.
SERVING_TIMEOUT = "900s"
INSTALLED_TIMEOUT = "600s"
RETRY_PAUSE = 5.0
TAIL_LINES = 30

INSTALL_HINTS = {
    "kind": "kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation)",
    "kubectl": "kubectl (https://kubernetes.io/docs/tasks/tools/)",
    "engine": "docker (https://docs.docker.com/engine/install/) or podman (https://podman.io/docs/installation)",
}


class MissingTools(RuntimeError):
    """A tool `up` or `down` needs is not on PATH; the message names what to install."""


class StepFailed(RuntimeError):
    """A command failed; the message names the step, the command, its output's tail and diagnostics."""


@dataclass(frozen=True, kw_only=True)
class Tools:
    engine: str
    """`docker` or `podman`: builds the image and runs kind's node containers."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment added to every command: kind uses podman only when told so."""


@dataclass(frozen=True, kw_only=True)
class Step:
    what: str
    argv: tuple[str, ...]
    cwd: Path | None = None
    stream: bool = False
    """Echo the output while the command runs (long steps: build, cluster creation, rollouts)."""
    show: bool = False
    """Print the output once the command succeeded (the final status)."""
    retry_seconds: float = 0.0
    """Run again until it succeeds or this much time has passed: webhooks answer some time after
    their Deployment is Available, once cert-manager's cainjector has written their CA bundle."""
    check: Callable[[str], str | None] | None = None
    """Given the command's stdout, a reason to stop despite its success, or None."""
    diagnose: tuple[tuple[str, ...], ...] = ()
    """Commands whose output is printed when this one fails (describe the Pods, the conditions)."""


@dataclass(frozen=True, kw_only=True)
class Files:
    """What `up` writes before running the plan (into a temporary directory)."""

    kind_config: Path
    overlay_dir: Path
    cert_manager_check: Path
    demo_catalog: Path
    demo_extension: Path
    image_archive: Path
    """Only written with podman: kind loads podman's images from an archive."""

    @staticmethod
    def under(work: Path) -> Files:
        return Files(
            kind_config=work / "kind-config.yaml",
            overlay_dir=work / "overlay",
            cert_manager_check=work / "cert-manager-check.yaml",
            demo_catalog=work / "demo-catalog.yaml",
            demo_extension=work / "demo-extension.yaml",
            image_archive=work / "olm-image.tar",
        )


def find_tools(
    *, path: str | None = None, environ: Mapping[str, str] | None = None, kubectl: bool = True
) -> Tools:
    """The container engine to use and the environment kind needs for it, or MissingTools naming
    everything that is missing at once (`path` is a PATH string; None means the process's PATH)."""
    environ = os.environ if environ is None else environ

    def found(name: str) -> bool:
        return shutil.which(name, path=path) is not None

    missing: list[str] = []
    provider = environ.get("KIND_EXPERIMENTAL_PROVIDER", "")
    if provider not in ("", "docker", "podman"):
        raise MissingTools(
            f"KIND_EXPERIMENTAL_PROVIDER={provider} is not supported here: unset it, or set docker or podman"
        )
    if provider:
        engine = provider
        if not found(engine):
            missing.append(f"{engine} (KIND_EXPERIMENTAL_PROVIDER={provider} asks for it)")
    elif found("docker"):
        engine = "docker"
    elif found("podman"):
        engine = "podman"
    else:
        engine = "docker"
        missing.append(INSTALL_HINTS["engine"])
    if not found("kind"):
        missing.append(INSTALL_HINTS["kind"])
    if kubectl and not found("kubectl"):
        missing.append(INSTALL_HINTS["kubectl"])
    if missing:
        raise MissingTools("not on PATH, please install: " + "; ".join(missing))
    env = {"KIND_EXPERIMENTAL_PROVIDER": "podman"} if engine == "podman" else {}
    return Tools(engine=engine, env=env)


def cluster_config(name: str = CLUSTER_NAME) -> str:
    """kind's cluster configuration: one node, which runs the control plane and every Pod (catalogd's
    two replicas prefer, not require, different nodes)."""
    document = {
        "kind": "Cluster",
        "apiVersion": "kind.x-k8s.io/v1alpha4",
        "name": name,
        "nodes": [{"role": "control-plane"}],
    }
    return yaml.safe_dump(document, sort_keys=False)


def _base_objects(repo: Path) -> list[dict[str, Any]]:
    return [obj for base in BASES for obj in kustomize.build(repo / base)]


def shipped_image_name(repo: Path) -> str:
    """The image name (without tag) the shipped Deployments use: what the overlay replaces."""
    image_names = {kustomize.split_tag(image)[0] for image in kustomize.images_in(_base_objects(repo))}
    if len(image_names) != 1:
        raise ValueError(
            f"the manifests under {repo / 'manifests'} name several images: {sorted(image_names)}"
        )
    return image_names.pop()


def overlay_kustomization(repo: Path, overlay_dir: Path, image: str) -> str:
    """The overlay's kustomization.yaml: both bases, unchanged but for the image."""
    override = kustomize.ImageOverride(name=shipped_image_name(repo), new_ref=image)
    return kustomize.overlay([repo / base for base in BASES], [override], relative_to=overlay_dir)


def deployments(repo: Path) -> dict[str, tuple[str, str]]:
    """For each base (`catalogd`, `operator-controller`): its Deployment's name and the label
    selector of its Pods, read from the manifests."""
    found: dict[str, tuple[str, str]] = {}
    for base in BASES:
        for obj in kustomize.build(repo / base):
            if obj.get("kind") == "Deployment":
                labels = obj["spec"]["selector"]["matchLabels"]
                selector = ",".join(f"{key}={value}" for key, value in sorted(labels.items()))
                found[Path(base).name] = (obj["metadata"]["name"], selector)
    return found


def cert_manager_manifest_url(version: str) -> str:
    return f"https://github.com/cert-manager/cert-manager/releases/download/{version}/cert-manager.yaml"


def cert_manager_check() -> str:
    """An Issuer created with a server-side dry run: it succeeds only once cert-manager's webhook
    answers, which is what applying OLM's Issuers and Certificates needs."""
    document = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": {"name": "olm-py-webhook-check", "namespace": CERT_MANAGER_NAMESPACE},
        "spec": {"selfSigned": {}},
    }
    return yaml.safe_dump(document, sort_keys=False)


def demo_catalog() -> str:
    catalog = {
        "apiVersion": names.API_VERSION,
        "kind": names.CLUSTER_CATALOG,
        "metadata": {"name": DEMO_CATALOG},
        "spec": {
            "source": {"type": "Image", "image": {"ref": DEMO_CATALOG_IMAGE, "pollIntervalMinutes": 60}}
        },
    }
    return yaml.safe_dump(catalog, sort_keys=False)


def demo_extension() -> str:
    """The demo extension, installed as a ServiceAccount bound to cluster-admin for brevity (as in
    `make run`; docs/operator-controller/permissions.md shows how to scope it)."""
    documents = demo.extension_objects(catalog=DEMO_CATALOG)
    return yaml.safe_dump_all(documents, sort_keys=False)


def check_server_version(version_json: str) -> str | None:
    """Why the cluster is too old for OLM (from `kubectl version -o json`), or None."""
    try:
        git_version = str(json.loads(version_json)["serverVersion"]["gitVersion"])
    except (ValueError, KeyError, TypeError):
        return f"cannot read the server version from `kubectl version -o json`: {version_json[:200]!r}"
    match = re.match(r"v(\d+)\.(\d+)", git_version)
    if match is None:
        return f"cannot parse the server version {git_version!r}"
    if (int(match[1]), int(match[2])) < MIN_KUBERNETES:
        wanted = ".".join(map(str, MIN_KUBERNETES))
        return (
            f"the kind cluster runs Kubernetes {git_version}; OLM needs >= {wanted}: upgrade kind "
            f"(v0.24.0 or later defaults to a new enough node image), then `make cluster-down CLUSTER=kind`"
        )
    return None


def write_files(files: Files, repo: Path, image: str) -> None:
    files.overlay_dir.mkdir(parents=True, exist_ok=True)
    files.kind_config.write_text(cluster_config())
    (files.overlay_dir / "kustomization.yaml").write_text(
        overlay_kustomization(repo, files.overlay_dir, image)
    )
    files.cert_manager_check.write_text(cert_manager_check())
    files.demo_catalog.write_text(demo_catalog())
    files.demo_extension.write_text(demo_extension())


def _kubectl(*args: str) -> tuple[str, ...]:
    return ("kubectl", "--context", CONTEXT, *args)


def _condition_step(kind: str, name: str, condition: str, timeout: str, *, controlled_by: str) -> Step:
    """Wait for `condition` of the OLM object; on failure show it and the log of the Deployment
    `controlled_by` (in the system namespace) that reconciles it."""
    resource = kind.lower()
    return Step(
        what=f"{kind} {name} is {condition}",
        argv=_kubectl("wait", f"--for=condition={condition}", f"{resource}/{name}", f"--timeout={timeout}"),
        diagnose=(
            _kubectl("get", resource, name, "-o", "yaml"),
            _kubectl("-n", SYSTEM_NAMESPACE, "logs", f"deployment/{controlled_by}", "--tail=40"),
        ),
    )


def preflight(tools: Tools) -> list[Step]:
    """The tools answer: a docker daemon that is not running fails here, not halfway through."""
    return [
        Step(what="kind is usable", argv=("kind", "version")),
        Step(what=f"{tools.engine} is usable", argv=(tools.engine, "info")),
        Step(what="kubectl is usable", argv=("kubectl", "version", "--client")),
    ]


def plan(*, repo: Path, files: Files, image: str, tools: Tools, cluster_exists: bool) -> list[Step]:
    """Every command of `up`, in order."""
    steps = preflight(tools)
    if cluster_exists:
        steps.append(
            Step(
                what=f"reuse the kind cluster {CLUSTER_NAME}",
                argv=("kind", "export", "kubeconfig", "--name", CLUSTER_NAME),
            )
        )
    else:
        steps.append(
            Step(
                what=f"create the kind cluster {CLUSTER_NAME}",
                argv=(
                    "kind",
                    "create",
                    "cluster",
                    "--name",
                    CLUSTER_NAME,
                    "--config",
                    str(files.kind_config),
                    "--wait",
                    CREATE_WAIT,
                ),
                stream=True,
            )
        )
    steps.append(
        Step(
            what=f"Kubernetes >= {'.'.join(map(str, MIN_KUBERNETES))}",
            argv=_kubectl("version", "-o", "json"),
            check=check_server_version,
        )
    )
    steps.append(
        Step(
            what=f"build the OLM image {image}",
            argv=(tools.engine, "build", "-t", image, "-f", "Containerfile", "."),
            cwd=repo,
            stream=True,
        )
    )
    if tools.engine == "podman":
        archive = str(files.image_archive)
        steps += [
            Step(
                what="save the image to an archive",
                argv=("podman", "save", "--format", "docker-archive", "-o", archive, image),
            ),
            Step(
                what="load the image into the cluster",
                argv=("kind", "load", "image-archive", archive, "--name", CLUSTER_NAME),
                stream=True,
            ),
        ]
    else:
        steps.append(
            Step(
                what="load the image into the cluster",
                argv=("kind", "load", "docker-image", image, "--name", CLUSTER_NAME),
                stream=True,
            )
        )
    version = binaries.cert_manager_version()
    steps += [
        Step(
            what=f"install cert-manager {version}",
            argv=_kubectl("apply", "-f", cert_manager_manifest_url(version)),
        ),
        Step(
            what="cert-manager's Deployments are Available",
            argv=_kubectl(
                "-n",
                CERT_MANAGER_NAMESPACE,
                "wait",
                "--for=condition=Available",
                "deployment",
                "--all",
                f"--timeout={ROLLOUT_TIMEOUT}",
            ),
            diagnose=(_kubectl("-n", CERT_MANAGER_NAMESPACE, "describe", "pods"),),
        ),
        Step(
            what="cert-manager's webhook answers",
            argv=_kubectl("create", "--dry-run=server", "-f", str(files.cert_manager_check)),
            retry_seconds=120,
        ),
        Step(what="apply OLM's CRDs", argv=_kubectl("apply", "-f", str(repo / CRDS))),
        Step(
            what="OLM's CRDs are Established",
            argv=_kubectl("wait", "--for=condition=Established", "-f", str(repo / CRDS), "--timeout=60s"),
        ),
        Step(
            what="apply catalogd and operator-controller (overlay: only the image is set)",
            argv=_kubectl("apply", "-k", str(files.overlay_dir)),
            retry_seconds=60,
        ),
    ]
    rollouts = deployments(repo)
    catalogd, controller = rollouts["catalogd"][0], rollouts["operator-controller"][0]
    if cluster_exists:
        # Same image reference as before, new content: only new Pods run the image just loaded.
        steps += [
            Step(
                what=f"restart {name} to run the image just loaded",
                argv=_kubectl("-n", SYSTEM_NAMESPACE, "rollout", "restart", f"deployment/{name}"),
            )
            for name, _ in rollouts.values()
        ]
    steps += [
        Step(
            what=f"Deployment {SYSTEM_NAMESPACE}/{name} rolled out",
            argv=_kubectl(
                "-n",
                SYSTEM_NAMESPACE,
                "rollout",
                "status",
                f"deployment/{name}",
                f"--timeout={ROLLOUT_TIMEOUT}",
            ),
            stream=True,
            diagnose=(
                _kubectl("-n", SYSTEM_NAMESPACE, "describe", "pods", "-l", selector),
                _kubectl("-n", SYSTEM_NAMESPACE, "get", "events", "--sort-by=.lastTimestamp"),
            ),
        )
        for name, selector in rollouts.values()
    ]
    steps += [
        Step(
            what=f"create the ClusterCatalog {DEMO_CATALOG} ({DEMO_CATALOG_IMAGE})",
            argv=_kubectl("apply", "-f", str(files.demo_catalog)),
            # catalogd's mutating webhook answers once cert-manager has injected its CA bundle.
            retry_seconds=120,
        ),
        _condition_step("ClusterCatalog", DEMO_CATALOG, "Serving", SERVING_TIMEOUT, controlled_by=catalogd),
        Step(
            what=f"create the ClusterExtension {DEMO_EXTENSION} (namespace, ServiceAccount, binding)",
            argv=_kubectl("apply", "-f", str(files.demo_extension)),
        ),
        _condition_step(
            "ClusterExtension", DEMO_EXTENSION, "Installed", INSTALLED_TIMEOUT, controlled_by=controller
        ),
        Step(
            what="status",
            argv=_kubectl("get", "clustercatalogs,clusterextensions,clusterobjectsets"),
            show=True,
        ),
        Step(
            what=f"conditions of {DEMO_EXTENSION}",
            argv=_kubectl(
                "get",
                "clusterextension",
                DEMO_EXTENSION,
                "-o",
                'jsonpath={range .status.conditions[*]}{.type}{"\\t"}{.status}{"\\t"}{.reason}'
                '{"\\t"}{.message}{"\\n"}{end}',
            ),
            show=True,
        ),
    ]
    return steps


def commands(steps: Sequence[Step]) -> list[list[str]]:
    return [list(step.argv) for step in steps]


def down_plan() -> list[Step]:
    return [
        Step(
            what=f"delete the kind cluster {CLUSTER_NAME}",
            argv=("kind", "delete", "cluster", "--name", CLUSTER_NAME),
        )
    ]


@dataclass(frozen=True)
class _Outcome:
    returncode: int
    stdout: str
    tail: str


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _execute(step: Step, env: Mapping[str, str]) -> _Outcome:
    try:
        if step.stream:
            # One pipe for both streams, read as it comes: no deadlock, and the tail keeps the order.
            with subprocess.Popen(
                step.argv,
                cwd=step.cwd,
                env=dict(env),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
            ) as proc:
                assert proc.stdout is not None
                tail: deque[str] = deque(maxlen=TAIL_LINES)
                for line in proc.stdout:
                    print(f"    {line}", end="", flush=True)
                    tail.append(line)
                return _Outcome(proc.wait(), "", "".join(tail))
        result = subprocess.run(
            step.argv,
            cwd=step.cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        )
    except OSError as err:
        return _Outcome(127, "", str(err))
    return _Outcome(result.returncode, result.stdout, _tail(result.stderr or result.stdout))


def _diagnostics(step: Step, env: Mapping[str, str]) -> str:
    parts: list[str] = []
    for argv in step.diagnose:
        try:
            result = subprocess.run(
                argv, env=dict(env), capture_output=True, text=True, errors="replace", check=False
            )
            output = result.stdout + result.stderr
        except OSError as err:
            output = str(err)
        parts.append(f"$ {shlex.join(argv)}\n{_tail(output, 80)}")
    return "\n".join(parts)


def run(steps: Sequence[Step], env: Mapping[str, str], *, first: int = 1, total: int | None = None) -> None:
    """Run the steps in order; StepFailed at the first that fails (after its retries)."""
    total = total if total is not None else first - 1 + len(steps)
    for number, step in enumerate(steps, start=first):
        print(f"[{number}/{total}] {step.what}", flush=True)
        started = time.monotonic()
        while True:
            outcome = _execute(step, env)
            reason = step.check(outcome.stdout) if outcome.returncode == 0 and step.check else None
            if outcome.returncode == 0 and reason is None:
                break
            if reason is None and time.monotonic() - started < step.retry_seconds:
                time.sleep(RETRY_PAUSE)
                continue
            message = f"step {number}/{total} failed: {step.what}\ncommand: {shlex.join(step.argv)}"
            if step.cwd is not None:
                message += f"\n(in {step.cwd})"
            if reason is not None:
                message += f"\n{reason}"
            else:
                message += f"\nexit status {outcome.returncode}; last lines of its output:\n{outcome.tail}"
            if step.diagnose:
                message += f"\n\nwhat the cluster says:\n{_diagnostics(step, env)}"
            raise StepFailed(message)
        if step.show and outcome.stdout.strip():
            print(outcome.stdout.rstrip())
        elapsed = time.monotonic() - started
        if elapsed >= 5:
            print(f"    done in {elapsed:.0f}s", flush=True)


def kind_clusters(env: Mapping[str, str]) -> list[str]:
    result = subprocess.run(
        ("kind", "get", "clusters"),
        env=dict(env),
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    )
    if result.returncode != 0:
        raise StepFailed(f"`kind get clusters` failed:\n{_tail(result.stderr or result.stdout)}")
    # With no cluster kind prints a sentence on stderr and nothing on stdout.
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]


def _environment(tools: Tools) -> dict[str, str]:
    return {**os.environ, **tools.env}


def up(repo: Path, *, image: str = DEFAULT_IMAGE) -> int:
    """Create or reuse the cluster, build and load `image`, deploy OLM with it, install the demo."""
    try:
        tools = find_tools()
        env = _environment(tools)
        if tools.env:
            print(f"using {tools.engine} ({' '.join(f'{k}={v}' for k, v in tools.env.items())})")
        checks = preflight(tools)
        with tempfile.TemporaryDirectory(prefix="olm-py-kind-") as work:
            files = Files.under(Path(work))
            write_files(files, repo, image)
            # The checks run before `kind get clusters`, whose own errors say less; until it has
            # answered, the count assumes a new cluster (reusing one adds the restarts).
            fresh = plan(repo=repo, files=files, image=image, tools=tools, cluster_exists=False)
            run(checks, env, total=len(fresh))
            exists = CLUSTER_NAME in kind_clusters(env)
            steps = plan(repo=repo, files=files, image=image, tools=tools, cluster_exists=exists)
            run(steps[len(checks) :], env, first=len(checks) + 1, total=len(steps))
    except (MissingTools, StepFailed, ValueError, binaries.BuildError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    controller = deployments(repo)["operator-controller"][0]
    print(f"""
kind cluster {CLUSTER_NAME} is up; its kubectl context is {CONTEXT}.
Try:
  kubectl --context {CONTEXT} get clustercatalogs,clusterextensions,clusterobjectsets
  kubectl --context {CONTEXT} get clusterextension {DEMO_EXTENSION} -o yaml
  kubectl --context {CONTEXT} -n {DEMO_NAMESPACE} get deployments
  kubectl --context {CONTEXT} -n {SYSTEM_NAMESPACE} get pods
  kubectl --context {CONTEXT} -n {SYSTEM_NAMESPACE} logs deployment/{controller}
Stop:  make cluster-down CLUSTER=kind""")
    return 0


def down() -> int:
    """Delete the cluster (kind succeeds when there is none)."""
    try:
        tools = find_tools(kubectl=False)
        run(down_plan(), _environment(tools))
    except (MissingTools, StepFailed) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hack.kind", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=("up", "down"))
    parser.add_argument(
        "--image", default=DEFAULT_IMAGE, help=f"the OLM image to build and load (default {DEFAULT_IMAGE})"
    )
    args = parser.parse_args(argv)
    if args.command == "up":
        return up(Path(__file__).resolve().parents[1], image=args.image)
    return down()


if __name__ == "__main__":
    sys.exit(main())
