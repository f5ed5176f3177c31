"""`olmctl status` and the resolution messages behind it, against the real control plane, a real
catalogd and a real operator-controller process: an installed extension reads healthy; one whose
ServiceAccount is missing, whose selector matches no catalog or whose version range matches no
bundle reads stuck: its condition carries upstream's message, and the Event of the change and
`olmctl status` say why and what to do. Run with
`-s` to see every command and its output (the docs page shows such a run).

The module uses operator-controller's session fixtures (imported below, which for this module
replace the catalogd-only fixtures `e2e/cli/conftest.py` provides under the same names).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from e2e.operator_controller.conftest import Extensions, ServedCatalog, wait_event, wait_installed
from olm.cli.main import EXIT_FAILED, EXIT_OK
from olm.pipeline.resolve import Advice
from olm_runtime import conditions
from olm_runtime.client import Client, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_testkit.names import unique
from olm_testkit.olmctl import Olmctl, Result
from olm_testkit.plugin import Installer
from olm_testkit.processes import token_kubeconfig


def _fields(text: str) -> dict[str, str]:
    """The `Name: value` header lines of `status`'s table output."""
    header = text.split("\nConditions:\n", maxsplit=1)[0]
    return {name: value.strip() for name, _, value in (line.partition(":") for line in header.splitlines())}


async def _wait_message(extensions: Extensions, name: str, message: str) -> dict[str, Any]:
    """Wait until the extension's Progressing message is `message`, retrying."""
    found: dict[str, Any] = {}

    async def says() -> bool:
        nonlocal found
        found = await extensions.get(name)
        return bool(conditions.of(found, "Progressing").get("message") == message)

    try:
        await eventually(says, what=f"ClusterExtension {name} to say why it is stuck", timeout=120)
    except AssertionError as error:
        got = conditions.of(found, "Progressing").get("message")
        raise AssertionError(f"{error}\nwanted: {message}\n   got: {got}") from None
    progressing = conditions.of(found, "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("True", "Retrying")
    return found


async def test_status_of_an_installed_extension(
    olmctl: Olmctl,
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
) -> None:
    account = await installer(namespace)
    name = unique("status")
    await extensions.create(
        name, "test", namespace, account, version="1.0.0", selector={"matchLabels": fixture_catalog.label}
    )
    await wait_installed(extensions, name, "1.0.0")

    shown = await olmctl("status", name)
    assert shown.code == EXIT_OK, shown.err
    fields = _fields(shown.out)
    assert {
        k: fields.get(k) for k in ("Name", "Package", "Requested", "Catalogs", "Installed", "Health")
    } == {
        "Name": name,
        "Package": "test",
        "Requested": "version 1.0.0",
        "Catalogs": f"selector olm.operatorframework.io/metadata.name={fixture_catalog.name}",
        "Installed": "test-operator.1.0.0 (1.0.0)",
        "Health": "Healthy",
    }
    assert "Next step" not in fields
    revisions = shown.out.split("\nRevisions:\n")[1].split("\nEvents:\n")[0].splitlines()
    assert [" ".join(row.split()) for row in revisions] == [
        "NAME STATE BUNDLE PROGRESSING AVAILABLE PROBES",
        f"{name}-1 Active test-operator.1.0.0 Succeeded ProbesSucceeded "
        "Objects are available and pass all probes.",
    ]

    as_json = (await olmctl("status", name, "-o", "json")).json()
    assert as_json["health"] == "Healthy"
    assert as_json["installed"] == {"bundle": "test-operator.1.0.0", "version": "1.0.0"}
    assert as_json["nextStep"] == ""
    assert [r["name"] for r in as_json["revisions"]] == [f"{name}-1"]
    reasons = [e["reason"] for e in as_json["events"]]
    assert {"Resolved", "Installed"} <= set(reasons), reasons


async def test_status_names_the_missing_service_account(
    olmctl: Olmctl, namespace: str, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    name = unique("status")
    await extensions.create(
        name, "test", namespace, "nobody", version="1.0.0", selector={"matchLabels": fixture_catalog.label}
    )
    await extensions.wait_condition(name, "Progressing", "True", reason="Retrying", message_contains="nobody")

    shown = await olmctl("status", name)
    assert shown.code == EXIT_OK, shown.err
    fields = _fields(shown.out)
    assert fields["Installed"] == "nothing yet"
    assert fields["Health"] == "Stuck"
    assert fields["Waiting for"] == f'ServiceAccount "nobody" in namespace "{namespace}"'
    assert fields["Next step"] == (
        f'create ServiceAccount "nobody" in namespace "{namespace}" with the permissions the bundle needs '
        f"(olmctl rbac test --namespace {namespace} --service-account nobody prints them)"
    )


async def test_a_selector_that_matches_no_catalog(
    olmctl: Olmctl,
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
) -> None:
    account = await installer(namespace)
    name = unique("status")
    await extensions.create(
        name, "test", namespace, account, selector={"matchLabels": {"e2e.olm-py.io/no-such": "catalog"}}
    )

    message = 'no bundles found for package "test"'
    found = await _wait_message(extensions, name, message)
    assert conditions.of(found, "Installed")["message"] == message

    # The explanation goes to the Failed Event of the change; olmctl status reads it back. Which
    # catalogs it names depends on the session's other tests when the Event was recorded.
    event = await wait_event(extensions.kube, name, type="Warning", reason="Failed", note_contains=message)
    note = str(event["note"])
    explanation = note.removeprefix(f"{message}; ")
    assert explanation.startswith("no ClusterCatalog matches spec.source.catalog.selector (not selected: ")
    assert explanation.endswith(f"); {Advice.SELECTOR}")

    as_json = (await olmctl("status", name, "-o", "json")).json()
    assert (as_json["health"], as_json["nextStep"], as_json["explanation"]) == (
        "Stuck",
        str(Advice.SELECTOR),
        explanation,
    )


async def test_a_version_range_without_a_bundle(
    olmctl: Olmctl,
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
) -> None:
    account = await installer(namespace)
    name = unique("status")
    await extensions.create(
        name,
        "test",
        namespace,
        account,
        version=">=9.0.0",
        selector={"matchLabels": fixture_catalog.label},
    )

    message = 'no bundles found for package "test" matching version ">=9.0.0"'
    await _wait_message(extensions, name, message)
    event = await wait_event(extensions.kube, name, type="Warning", reason="Failed", note_contains=message)
    # Other tests' catalogs in the session are counted as not selected; how many depends on them.
    assert re.fullmatch(
        re.escape(f"{message}; catalogs: {fixture_catalog.name} (no version in range, highest 1.2.0)")
        + r"(; \d+ not selected by spec\.source\.catalog\.selector)?"
        + re.escape(f"; {Advice.VERSION}"),
        str(event["note"]),
    )

    shown = await olmctl("status", name)
    assert shown.code == EXIT_OK, shown.err
    fields = _fields(shown.out)
    assert (fields["Health"], fields["Waiting for"], fields["Why"], fields["Next step"]) == (
        "Stuck",
        "a bundle that matches spec.source.catalog",
        str(event["note"]).removeprefix(f"{message}; "),
        str(Advice.VERSION),
    )


async def test_status_without_the_right_to_read_events(
    *,
    namespace: str,
    kube: Client,
    control_plane: ControlPlane,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
    tmp_path: Path,
) -> None:
    name = unique("status")
    await extensions.create(
        name, "test", namespace, "nobody", version="1.0.0", selector={"matchLabels": fixture_catalog.label}
    )
    await extensions.wait_condition(name, "Progressing", "True", reason="Retrying", message_contains="nobody")
    reader = unique("status-reader")
    await kube.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": reader, "namespace": namespace}}
    )
    rules = [
        {"apiGroups": ["olm.operatorframework.io"], "resources": ["clusterextensions"], "verbs": ["get"]},
        {"apiGroups": ["olm.operatorframework.io"], "resources": ["clusterobjectsets"], "verbs": ["list"]},
    ]
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": reader}}
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": reader},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": reader},
        "subjects": [{"kind": "ServiceAccount", "name": reader, "namespace": namespace}],
    }
    await kube.create({**role, "rules": rules})
    await kube.create(binding)
    try:
        config = await token_kubeconfig(
            kube, control_plane, namespace=namespace, name=reader, path=tmp_path / "r"
        )
        limited = Olmctl(config, control_plane.ca_file)
        result = Result(-1, "", "")

        async def shown() -> bool:  # a new binding takes effect within moments, not at once
            nonlocal result
            result = await limited("status", name)
            return result.code == EXIT_OK

        await eventually(shown, what="olmctl status to work with the reader's permissions", timeout=30)
        assert _fields(result.out)["Health"] == "Stuck"
        assert "\nEvents:\n  none" in result.out
        assert result.err.startswith("warning: Events not shown: "), result.err
        assert "forbidden" in result.err.lower()
    finally:
        await kube.delete(kinds.CLUSTER_ROLE_BINDING, reader)
        await kube.delete(kinds.CLUSTER_ROLE, reader)


async def test_status_of_an_unknown_extension(olmctl: Olmctl, olm_crds: None) -> None:
    missing = await olmctl("status", "no-such-extension")
    assert missing.code == EXIT_FAILED
    assert missing.err == 'error: clusterextension "no-such-extension" not found\n'
    assert missing.out == ""
