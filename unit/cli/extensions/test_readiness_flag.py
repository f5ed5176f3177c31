"""`--readiness` (olmctl install and rbac) offers exactly `spec.upgrade.readiness`'s values, and
writes the field only when it is not the default."""

from __future__ import annotations

from olm.api.extensionspec import ExtensionSpec, Readiness
from olm.cli.extensions.parsers import READINESS
from olm.cli.extensions.plan import extension_object


def test_the_flag_offers_the_api_values_default_first() -> None:
    assert tuple(str(r) for r in Readiness) == READINESS
    assert READINESS[0] == Readiness.NONE


def test_the_planned_extension_carries_the_contract_only_when_asked() -> None:
    def planned(readiness: str) -> dict[str, object]:
        return extension_object("x", "pkg", namespace="ns", service_account="sa", readiness=readiness)

    assert "upgrade" not in planned("None")["spec"]  # type: ignore[operator]
    respect = planned("Respect")
    assert ExtensionSpec.of(respect).upgrade.readiness is Readiness.RESPECT
