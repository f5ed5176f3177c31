"""What to pass when a bundle needs a namespace to watch and none was given (pure logic).

A bundle that does not support AllNamespaces is installed to watch one namespace, which the
ClusterExtension must name in `spec.config.inline.watchNamespace`; without it operator-controller
refuses the bundle (InvalidConfiguration: `required field "watchNamespace" is missing`). That
message names the field, not what to put in it, so `advice` adds the flag and a value that works,
from the install modes the catalog says the refused bundle supports:

| the bundle supports (not AllNamespaces) | advice                                                  |
|-----------------------------------------|---------------------------------------------------------|
| OwnNamespace only                       | `--watch-namespace <the install namespace>`             |
| SingleNamespace only                    | `--watch-namespace <a namespace other than that>`       |
| both, or the catalog does not say       | either, each with the mode it selects                   |

Commands without the flag (`upgrade` keeps the extension's configuration) are told the field instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from olm.api import conditions as api
from olm.cli.packages.summary import csv_metadata
from olm.pipeline.catalogs import PackageContent
from olm.registryv1 import OWN_NAMESPACE, SINGLE_NAMESPACE

__all__ = ["FLAG", "advice", "install_modes"]

FLAG = "--watch-namespace"
_FIELD = "spec.config.inline.watchNamespace"
_BUNDLE = re.compile(r'error for resolved bundle "([^"]+)"')
"""How operator-controller's messages name the bundle they are about (`olm.pipeline.plan.for_bundle`)."""


def install_modes(message: str, packages: Iterable[PackageContent]) -> frozenset[str] | None:
    """The install modes the catalog content says the bundle named in `message` supports; None when
    the message names no bundle, or the catalog has none of that name or no CSV metadata for it."""
    named = _BUNDLE.search(message)
    if named is None:
        return None
    for content in packages:
        for bundle in content.bundles:
            if bundle.name != named.group(1):
                continue
            modes = csv_metadata(bundle).get("installModes")
            if not isinstance(modes, list):
                return None
            return frozenset(
                str(m.get("type")) for m in modes if isinstance(m, dict) and m.get("supported") is True
            )
    return None


def advice(
    reason: str,
    message: str,
    *,
    given: str | None,
    install_namespace: str,
    packages: Iterable[PackageContent],
    flag: bool = True,
) -> str | None:
    """What to pass to install the bundle of a refusal (`reason`, `message`) planned without a
    watch namespace (`given` is None or empty); None when the refusal is about something else.
    `flag`: the command takes `--watch-namespace` (else the advice names the spec field)."""
    if reason != api.REASON_INVALID_CONFIGURATION or given or "watchNamespace" not in message:
        return None
    modes = install_modes(message, packages) or frozenset()
    own, single = OWN_NAMESPACE in modes, SINGLE_NAMESPACE in modes
    setting = f"pass {FLAG}" if flag else f"set {_FIELD} to"
    if own and not single:
        return (
            f"the bundle supports {OWN_NAMESPACE} but not AllNamespaces: {setting} {install_namespace} "
            "(its install namespace)"
        )
    if single and not own:
        return (
            f"the bundle supports {SINGLE_NAMESPACE} but not AllNamespaces: {setting} another namespace "
            f"than its install namespace {install_namespace} (the namespace it should watch)"
        )
    return (
        f"the bundle does not support AllNamespaces: {setting} {install_namespace} to watch its install "
        f"namespace ({OWN_NAMESPACE}), or another namespace to watch that one ({SINGLE_NAMESPACE})"
    )
