"""`olmctl install`, `list`, `upgrade` and `uninstall` as a subprocess against the real control plane,
a real catalogd and a real operator-controller process, a real registry and cert-manager: the
preview shows what operator-controller then really applies, installs and upgrades wait until done,
and bad input ends in one line and exit code 1 (2 for usage). Run with `-s` to see every command
and its output (the docs page shows such a run).

The module uses operator-controller's session fixtures (imported below, which for this module
replaces the catalogd-only fixtures `e2e/cli/conftest.py` provides under the same names).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import certifi
import pytest
import yaml

from e2e.operator_controller.conftest import Extensions, ServedCatalog
from e2e.operator_controller.test_removal import revision_objects
from olm.api import names
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.cli.main import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_testkit.certmanager import CertManager
from olm_testkit.names import unique
from olm_testkit.olmctl import Olmctl, Result
from olm_testkit.plugin import Installer
from olm_testkit.processes import token_kubeconfig

CRD = "sleepinfos.kube-green.com"


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def _lines(text: str) -> list[str]:
    """The lines of `text` with runs of spaces (column padding) made single."""
    return [" ".join(line.split()) for line in text.splitlines()]


def _one_line_error(result: Result, code: int = EXIT_FAILED) -> str:
    """The error of a failed command: its exit code, one line on stderr, no traceback."""
    assert result.code == code, (result.code, result.out, result.err)
    assert result.err.endswith("\n")
    assert result.err.count("\n") == 1, result.err
    assert "Traceback" not in result.err
    return result.err.removesuffix("\n")


def _identity(obj: dict[str, Any]) -> tuple[str, str, str]:
    return (obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace", ""))


async def _revision_objects(kube: Client, name: str) -> list[dict[str, Any]]:
    """The objects operator-controller rolled out in revision `name`."""
    return await revision_objects(kube, dict(await kube.get(CLUSTER_OBJECT_SET, name)))


async def test_kube_green_is_previewed_installed_listed_upgraded_and_uninstalled(
    *,
    olmctl: Olmctl,
    pull: tuple[str, ...],
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    community_catalog: ServedCatalog,
    cert_manager: CertManager,
) -> None:
    kube = extensions.kube
    account = await installer(namespace)  # cluster-admin: this test is not about permissions
    name = unique("green")
    install = (
        "install",
        "kube-green",
        "--namespace",
        namespace,
        "--name",
        name,
        "--service-account",
        account,
        "--catalog",
        community_catalog.name,
        "--version",
        "0.6.0",
        *pull,
    )

    preview = await olmctl(*install, "--dry-run")
    assert preview.code == EXIT_OK, preview.err
    assert ["Bundle:", "kube-green.v0.6.0"] in _rows(preview.out)
    assert ["Catalog:", community_catalog.name] in _rows(preview.out)
    assert "Install mode: AllNamespaces (watches all namespaces)" in _lines(preview.out)
    assert ["CustomResourceDefinition", CRD] in _rows(preview.out)
    assert ["Deployment", "kube-green-controller-manager", namespace] in _rows(preview.out)
    assert any(line.startswith("CRD upgrade safety: safe") for line in _lines(preview.out))
    assert (
        f"Permissions: ServiceAccount {namespace}/{account} may manage every object (preflight passed)"
        in _lines(preview.out)
    )
    with pytest.raises(errors.NotFound):
        await kube.get(CLUSTER_EXTENSION, name)  # a dry run creates nothing

    as_yaml = await olmctl(*install, "--dry-run", "-o", "yaml")
    assert as_yaml.code == EXIT_OK, as_yaml.err
    planned = yaml.safe_load(as_yaml.out)
    assert planned["bundle"]["name"] == "kube-green.v0.6.0"
    assert planned["installMode"] == "AllNamespaces"
    assert planned["preflight"]["permissions"]["ok"] is True
    assert planned["preflight"]["crdUpgradeSafety"]["problems"] == []
    kinds_planned = {o["kind"] for o in planned["objects"]}
    assert {"CustomResourceDefinition", "Deployment", "ValidatingWebhookConfiguration", "Certificate"} <= (
        kinds_planned
    )

    installed = await olmctl(*install)
    extensions.created.append(name)  # removed at teardown if the test stops before uninstall
    assert installed.code == EXIT_OK, installed.err
    assert f"clusterextension/{name} created; waiting for it to be installed" in installed.err
    assert "Installed=True Succeeded" in installed.err  # stderr is a pipe: one line per change
    assert "\x1b[" not in installed.err + installed.out  # and no colour
    # The preview first, then the status once installed.
    assert ["Bundle:", "kube-green.v0.6.0"] in _rows(installed.out)
    assert _rows(installed.out)[-2:] == [
        ["NAME", "PACKAGE", "VERSION", "CHANNELS", "NAMESPACE", "INSTALLED", "PROGRESSING"],
        [name, "kube-green", "0.6.0", "*", namespace, "True", "(Succeeded)", "True", "(Succeeded)"],
    ]
    # The preview showed exactly what operator-controller applied.
    applied = await _revision_objects(kube, f"{name}-1")
    assert sorted(applied, key=_identity) == sorted(planned["objects"], key=_identity)

    listed = await olmctl("list", "-o", "json")
    assert listed.code == EXIT_OK, listed.err
    row = next(r for r in listed.json() if r["name"] == name)
    assert (row["package"], row["version"], row["namespace"]) == ("kube-green", "0.6.0", namespace)
    assert row["installed"]["status"] == "True"
    assert row["progressing"]["reason"] == "Succeeded"
    table = await olmctl("list")
    assert [
        name,
        "kube-green",
        "0.6.0",
        "*",
        namespace,
        "True",
        "(Succeeded)",
        "True",
        "(Succeeded)",
    ] in _rows(table.out)

    # 0.7.1 is two upgrades away (0.6.0 -> 0.7.0 -> 0.7.1): CatalogProvided does not go there at once.
    too_far = await olmctl("upgrade", name, "--version", "0.7.1", "--dry-run", *pull)
    assert _one_line_error(too_far) == (
        "error: the upgrade would not proceed: the target is not a direct successor "
        "(pass --self-certified to allow it)"
    )
    assert (
        "Upgrade: Not a direct successor of kube-green.v0.6.0: CatalogProvided reaches it in 2 upgrades "
        "(kube-green.v0.6.0 -> kube-green.v0.7.0 -> kube-green.v0.7.1); to go there at once, "
        "upgradeConstraintPolicy must be SelfCertified." in _lines(too_far.out)
    )

    step = await olmctl("upgrade", name, "--version", "0.7.0", "--dry-run", *pull)
    assert step.code == EXIT_OK, step.err
    assert (
        "Upgrade: Direct successor: kube-green.v0.7.0 replaces kube-green.v0.6.0 (channel alpha); "
        "allowed with CatalogProvided." in _lines(step.out)
    )
    assert "CRD upgrade safety: safe (1 existing CRD(s) replaced compatibly)" in _lines(step.out)
    assert (await kube.get(CLUSTER_EXTENSION, name))["spec"]["source"]["catalog"]["version"] == "0.6.0"

    upgraded = await olmctl("upgrade", name, "--version", "0.7.0", *pull, "-o", "json")
    assert upgraded.code == EXIT_OK, upgraded.err
    result = upgraded.json()
    assert result["upgrade"]["verdict"] == "DirectSuccessor"
    assert result["extension"]["version"] == "0.7.0"
    found = await kube.get(CLUSTER_EXTENSION, name)
    assert found["status"]["install"]["bundle"] == {"name": "kube-green.v0.7.0", "version": "0.7.0"}
    applied = await _revision_objects(kube, f"{name}-2")
    assert sorted(applied, key=_identity) == sorted(result["objects"], key=_identity)

    # Back to 0.6.0: no edge leads down; SelfCertified allows it.
    downgrade = await olmctl("upgrade", name, "--version", "0.6.0", "--dry-run", *pull, "-o", "json")
    assert downgrade.code == EXIT_FAILED
    assert downgrade.json()["upgrade"]["verdict"] == "NoPath"
    assert downgrade.json()["upgrade"]["downgrade"] is True
    certified = await olmctl("upgrade", name, "--version", "0.6.0", "--self-certified", "--dry-run", *pull)
    assert certified.code == EXIT_OK, certified.err
    assert any(
        "(a downgrade); only upgradeConstraintPolicy SelfCertified allows it" in line
        for line in _lines(certified.out)
    )

    # A second extension of the package would meet this one's objects, which revision 2 controls:
    # the preview names that revision and its extension, and stops before anything is created.
    twin_name = unique("twin")
    twin = await olmctl(
        "install",
        "kube-green",
        "--namespace",
        namespace,
        "--name",
        twin_name,
        "--service-account",
        account,
        "--catalog",
        community_catalog.name,
        *pull,
    )
    message = _one_line_error(twin)
    assert message.startswith("error: preflight failed, no ClusterExtension was created: "), message
    owner = f"ClusterObjectSet {name}-2 of ClusterExtension {name}"
    assert f"CustomResourceDefinition {CRD} is controlled by {owner}" in message
    assert any(
        line.startswith("Collisions: COLLISION: the rollout would wait on") for line in _lines(twin.out)
    )
    with pytest.raises(errors.NotFound):
        await kube.get(CLUSTER_EXTENSION, twin_name)

    removed = await olmctl("uninstall", name, "--cascade")
    assert removed.code == EXIT_OK, removed.err
    assert removed.out == f"clusterextension/{name} uninstalled\n"
    with pytest.raises(errors.NotFound):
        await kube.get(CLUSTER_EXTENSION, name)
    with pytest.raises(errors.NotFound):
        await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CRD)
    owned = f"{names.OWNER_NAME_LABEL}={name}"
    assert (await kube.list(CLUSTER_OBJECT_SET, label_selector=owned)).items == []
    assert (await kube.list(kinds.DEPLOYMENT, namespace=namespace)).items == []


async def test_bad_input_ends_in_one_line_and_an_exit_code(
    *,
    olmctl: Olmctl,
    pull: tuple[str, ...],
    namespace: str,
    kube: Client,
    community_catalog: ServedCatalog,
    control_plane: ControlPlane,
    tmp_path: Path,
) -> None:
    base = ("install", "--namespace", namespace, "--service-account", "installer", "--dry-run", *pull)
    catalog = ("--catalog", community_catalog.name)

    unknown_package = await olmctl(*base, "no-such-package", *catalog)
    assert _one_line_error(unknown_package) == (
        f"error: package 'no-such-package' not found in catalogs {community_catalog.name}"
    )
    unknown_catalog = await olmctl(*base, "kube-green", "--catalog", "no-such-catalog")
    assert _one_line_error(unknown_catalog) == 'error: clustercatalog "no-such-catalog" not found'
    no_match = await olmctl(*base, "kube-green", "--catalog-selector", "e2e.olm-py.io/catalog=none")
    assert _one_line_error(no_match).startswith("error: no ClusterCatalog matches the catalog selector")

    bad_range = await olmctl(*base, "kube-green", *catalog, "--version", ">=1.0 <<")
    assert _one_line_error(bad_range).startswith('error: invalid version range ">=1.0 <<"')
    out_of_range = await olmctl(*base, "kube-green", *catalog, "--version", "9.9.9")
    assert _one_line_error(out_of_range).startswith(
        'error: no bundles found for package "kube-green" matching version "9.9.9"'
    )

    # Trusting only the public CAs, catalogd's certificate does not verify: the catalog cannot be read.
    wrong_trust = Olmctl(control_plane.kubeconfig, Path(certifi.where()))
    unreadable = await wrong_trust(*base, "kube-green", *catalog)
    message = _one_line_error(unreadable)
    assert unreadable.out == ""  # nothing else, not even a library's log line, reaches stdout
    assert message.startswith(f"error: no selected catalog could be read: {community_catalog.name}: ")
    assert "TLS with" in message

    # A user who may not read ClusterCatalogs.
    await kube.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nobody", "namespace": namespace}}
    )
    config = await token_kubeconfig(
        kube, control_plane, namespace=namespace, name="nobody", path=tmp_path / "nobody"
    )
    forbidden = await Olmctl(config, control_plane.ca_file)(*base, "kube-green", *catalog)
    assert "forbidden" in _one_line_error(forbidden).lower()

    missing = await olmctl("upgrade", "no-such-extension", "--dry-run", *pull)
    assert _one_line_error(missing) == 'error: clusterextension "no-such-extension" not found'
    gone = await olmctl("uninstall", "no-such-extension")
    assert _one_line_error(gone) == 'error: clusterextension "no-such-extension" not found'

    usage = await olmctl("install", "kube-green", "--service-account", "sa")  # no --namespace
    assert usage.code == EXIT_USAGE
    assert "the following arguments are required: -n/--namespace" in usage.err
    selector = await olmctl(*base, "kube-green", "--catalog-selector", "novalue")
    assert selector.code == EXIT_USAGE
    assert "expected KEY=VALUE" in selector.err


async def test_install_creates_a_least_privilege_installer_for_an_own_namespace_bundle(
    *,
    olmctl: Olmctl,
    pull: tuple[str, ...],
    kube: Client,
    extensions: Extensions,
    community_catalog: ServedCatalog,
) -> None:
    namespace, name = unique("cli-cats"), unique("cats")
    account = "cats-installer"
    install = (
        "install",
        "cat-facts-operator",
        "--namespace",
        namespace,
        "--name",
        name,
        "--service-account",
        account,
        "--create-service-account",
        "--watch-namespace",
        namespace,
        "--catalog",
        community_catalog.name,
        *pull,
    )
    try:
        preview = await olmctl(*install, "--dry-run")
        assert preview.code == EXIT_OK, preview.err
        assert f"Install mode: OwnNamespace (watches namespace {namespace})" in _lines(preview.out)
        assert any(
            line.startswith(f"Permissions: ServiceAccount {namespace}/{account} would be created")
            for line in _lines(preview.out)
        )
        with pytest.raises(errors.NotFound):
            await kube.get(kinds.NAMESPACE, namespace)  # a dry run creates nothing

        installed = await olmctl(*install)
        extensions.created.append(name)
        assert installed.code == EXIT_OK, installed.err
        assert f"clusterrole/{name}-installer applied" in installed.err.splitlines()
        assert (
            f"Permissions: ServiceAccount {namespace}/{account} may manage every object (preflight passed)"
            in _lines(installed.out)
        )
        found = await kube.get(CLUSTER_EXTENSION, name)
        assert found["status"]["install"]["bundle"]["name"].startswith("cat-facts-operator.v")
        binding = await kube.get(kinds.CLUSTER_ROLE_BINDING, f"{name}-installer")
        assert binding["roleRef"]["name"] == f"{name}-installer"  # its own role, not cluster-admin
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": namespace}]

        removed = await olmctl("uninstall", name, "--cascade")
        assert removed.code == EXIT_OK, removed.err
        with pytest.raises(errors.NotFound):
            await kube.get(CLUSTER_EXTENSION, name)
    finally:
        if name in extensions.created:  # the installer's RBAC must outlive the extension's teardown
            await extensions.delete_and_wait_gone(name)
        for gvk in (kinds.CLUSTER_ROLE_BINDING, kinds.CLUSTER_ROLE):
            with contextlib.suppress(errors.NotFound):
                await kube.delete(gvk, f"{name}-installer")
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.NAMESPACE, namespace)
