"""A resolution that fails while a selected catalog's content server was unreachable says so in
the condition's message, after upstream's words (`plan.choose`)."""

from __future__ import annotations

import pytest

from olm.api import conditions as api
from olm.api.extensionspec import CatalogSource, UpgradeSpec
from olm.pipeline import plan
from olm.pipeline.catalogs.gathering import MALFORMED, UNREACHABLE, CatalogContent, Gathered, Skipped
from unit.pipeline.resolve.catalogs import content
from unit.pipeline.specs import extension_spec

OUTAGE = "catalog 'down' content server unreachable: the name catalogd.invalid did not resolve (no such host)"


def refused(
    contents: tuple[CatalogContent, ...], *skipped: Skipped, version: str | None = None
) -> plan.Unresolved:
    spec = extension_spec(UpgradeSpec(), CatalogSource(package_name="x", version=version))
    gathered = Gathered(contents=contents, skipped=tuple(sorted(skipped)), not_selected=())
    with pytest.raises(plan.Unresolved) as caught:
        plan.choose(plan.Request(extension="e", spec=spec, installed=None), gathered)
    return caught.value


def test_every_catalog_unreachable_names_the_outage_and_is_retried() -> None:
    found = refused((), Skipped(name="down", why=UNREACHABLE, error=OUTAGE))
    assert (found.reason, found.retry) == (api.REASON_RETRYING, True)
    assert found.message == f'no bundles found for package "x"; {OUTAGE}'


def test_a_reachable_catalog_without_a_match_still_names_the_one_that_was_not() -> None:
    other = CatalogContent(name="other", content=content(channels={"stable": [{"name": "x.v1.0.0"}]}))
    found = refused((other,), Skipped(name="down", why=UNREACHABLE, error=OUTAGE), version=">=2.0.0")
    assert found.message.endswith(f"; {OUTAGE}")
    assert found.message.startswith('no bundles found for package "x" matching version ">=2.0.0"')


def test_other_skips_leave_upstreams_message_alone() -> None:
    found = refused((), Skipped(name="bad", why=MALFORMED, error="catalog 'bad' served malformed content: x"))
    assert found.message == 'no bundles found for package "x"'
