"""A revision stuck rolling out never freezes the extension: a new spec is resolved, rendered and
rolled out past it (upstream reuses the stuck revision until it completes or is archived)."""

from __future__ import annotations

from e2e.operator_controller.conftest import Extensions, ServedCatalog, wait_installed, wait_revisions
from olm_testkit.names import unique
from olm_testkit.plugin import Installer


async def test_a_stuck_rollout_does_not_stop_the_next_one(
    namespace: str, installer: Installer, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    account = await installer(namespace)
    name = unique("stuck")
    await extensions.create(
        name, "test", namespace, account, version="1.0.0", selector={"matchLabels": fixture_catalog.label}
    )
    await wait_installed(extensions, name, "1.0.0")

    # 1.0.1 on a node nobody has: its Deployment never becomes Available, so revision 2 is stuck.
    await extensions.patch_spec(
        name,
        {
            "source": {"catalog": {"version": "1.0.1"}},
            "config": {
                "configType": "Inline",
                "inline": {"deploymentConfig": {"nodeSelector": {"e2e.olm-py.io/no-such-node": "x"}}},
            },
            "progressDeadlineMinutes": 10,
        },
    )
    stuck = await extensions.wait_condition(
        name, "Progressing", "False", reason="ProgressDeadlineExceeded", timeout=90
    )
    assert stuck["status"]["install"]["bundle"]["version"] == "1.0.0"
    # Upstream's words, naming the bundle version; the revision number goes to the revision's Event.
    assert _condition(stuck, "Progressing")["message"] == (
        "Revision has not rolled out for 10 minute(s). Last status: Revision 1.0.1 is rolling out."
    )
    assert [r["name"] for r in stuck["status"]["activeRevisions"]] == [f"{name}-1", f"{name}-2"]

    # While revision 2 is stuck, drop the node selector: revision 3 is created and rolls out at once.
    await extensions.patch_spec(name, {"config": None})
    found = await wait_installed(extensions, name, "1.0.1", timeout=120)
    assert _condition(found, "Installed")["status"] == "True"
    await wait_revisions(
        extensions, name, {f"{name}-1": "Archived", f"{name}-2": "Archived", f"{name}-3": "Active"}
    )


def _condition(extension: dict[str, object], kind: str) -> dict[str, str]:
    status = extension.get("status")
    assert isinstance(status, dict)
    return next(c for c in status["conditions"] if c["type"] == kind)
