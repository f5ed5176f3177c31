"""Why resolution found nothing, catalog by catalog, and the one thing to do next.

A failed resolution's condition message is upstream's sentence alone; beside it goes an account
(`ResolutionError.explanation`): each selected catalog with why it gave nothing (at most
`MAX_NAMED`, then a count), how many catalogs the selector left out, and one `Advice`. The Event
of the same change carries both; the advice sentences are fixed strings so that `olmctl status`
can recognise them in that Event and say the same thing.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from olm.pipeline.catalogs.gathering import Skipped

__all__ = ["MAX_NAMED", "Advice", "Miss", "account", "advice_in"]

MAX_NAMED = 5
"""Catalogs named in one message; the rest are counted."""


class Advice(enum.StrEnum):
    """What to change when resolution fails, in the order of preference when several apply: the
    reason given by a catalog that has the package says the most."""

    SUCCESSOR = "request a successor version, or set upgradeConstraintPolicy: SelfCertified to skip the graph"
    UPGRADE = "approve a version with spec.upgrade.approvedVersion, or widen spec.upgrade.automatic"
    CLUSTER = "upgrade the cluster, or set spec.source.catalog.version to a version this cluster runs"
    VERSION = "change spec.source.catalog.version to include an available version"
    CHANNEL = "change spec.source.catalog.channels to channels the package has"
    SKIPPED = "see why the skipped catalogs give no content (olmctl catalog list)"
    PACKAGE = "check the package name (olmctl search) or select a catalog that has it"
    SELECTOR = "change spec.source.catalog.selector to match the labels of a ClusterCatalog"
    NO_CATALOG = "create a ClusterCatalog that serves the package (olmctl catalog add)"
    PRIORITY = "give one catalog a higher spec.priority or narrow spec.source.catalog.selector"


@dataclass(frozen=True, kw_only=True)
class Miss:
    """Why one selected, serving catalog offered no candidate."""

    catalog: str
    why: str
    advice: Advice


def _named(entries: Sequence[str]) -> str:
    shown = list(entries[:MAX_NAMED])
    more = len(entries) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


def account(misses: Sequence[Miss], skipped: Sequence[Skipped], not_selected: Sequence[str]) -> str:
    """`catalogs: a (why), b (why); N not selected by the selector; <advice>`, or what stands in
    for the list when no catalog was selected."""
    if not misses and not skipped:
        if not not_selected:
            return f"no ClusterCatalogs exist; {Advice.NO_CATALOG}"
        return (
            f"no ClusterCatalog matches spec.source.catalog.selector (not selected: {_named(not_selected)}); "
            f"{Advice.SELECTOR}"
        )
    entries = sorted([(m.catalog, m.why) for m in misses] + [(s.name, s.why) for s in skipped])
    text = "catalogs: " + _named([f"{name} ({why})" for name, why in entries])
    if not_selected:
        text += f"; {len(not_selected)} not selected by spec.source.catalog.selector"
    order = list(Advice)
    advice = min([m.advice for m in misses] + ([Advice.SKIPPED] if skipped else []), key=order.index)
    return f"{text}; {advice}"


def advice_in(message: str) -> Advice | None:
    """The advice a resolution explanation (or an Event message holding one) gives, if any."""
    return next((advice for advice in Advice if advice.value in message), None)
