"""Extension names are label values on everything they install, so longer ones are refused clearly."""

from __future__ import annotations

from e2e.operator_controller.conftest import Extensions, ServedCatalog
from olm_testkit.plugin import Installer


async def test_a_name_longer_than_a_label_value_is_blocked_with_the_reason(
    namespace: str, installer: Installer, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    account = await installer(namespace)
    name = "a" * 64
    await extensions.create(name, "test", namespace, account, selector={"matchLabels": fixture_catalog.label})
    found = await extensions.wait_condition(name, "Progressing", "False", reason="Blocked")
    message = next(c["message"] for c in found["status"]["conditions"] if c["type"] == "Progressing")
    assert message == (
        f'ClusterExtension name "{name}" is 64 characters long; at most 63 are supported because it is '
        "used as a label value"
    )
    assert next(c for c in found["status"]["conditions"] if c["type"] == "Installed")["status"] == "False"
