"""Whether OLM v1 can take over a v0 installation, and the ClusterExtension it becomes (pure logic).

`refusals` names every reason an installation cannot move (each one a sentence a user can act on);
`extension_for` writes the ClusterExtension that pins what v0 installed; `catalog_for` maps the
Subscription's CatalogSource to a ClusterCatalog; `spec_changes` lists what applying v1's rendering
of a Deployment would change in the live one (a change to the Pod template restarts its Pods, which
a migration must never do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from olm.api import names
from olm.cli.migrate.v0 import MIGRATED_FROM_ANNOTATION, Installation, InstallMode, install_mode
from olm_runtime import ownerrefs

__all__ = [
    "MIGRATED_FROM_ANNOTATION",
    "CatalogChoice",
    "catalog_for",
    "extension_for",
    "installer_name",
    "refusals",
    "spec_changes",
    "taken_over",
]

SUPPORTED_MODES: Final = ("AllNamespaces", "OwnNamespace", "SingleNamespace")
SETTLED_PLAN_PHASES: Final = ("Complete", "Failed")


def installer_name(extension: str) -> str:
    """The ServiceAccount a migrated extension is installed as."""
    return f"{extension}-installer"


def taken_over(live: Mapping[str, Any], extension: str, revisions: frozenset[str]) -> bool:
    """Whether the ClusterExtension `extension` has taken `live` over: it carries the extension's
    labels, or one of the extension's revisions (their uids) controls it. The labels alone do not
    tell: until its CSV is deleted, v0's olm operator writes adopted objects too, and a write of
    its can leave one without the extension's labels (the owner references kept) until the
    revision's drift repair puts them back."""
    labels = (live.get("metadata") or {}).get("labels") or {}
    if (
        labels.get(names.OWNER_KIND_LABEL) == names.CLUSTER_EXTENSION
        and labels.get(names.OWNER_NAME_LABEL) == extension
    ):
        return True
    controller = ownerrefs.controller_of(live)
    return controller is not None and str(controller.get("uid")) in revisions


def _mode(installation: Installation) -> InstallMode | None:
    if len(installation.operator_groups) != 1:
        return None
    return install_mode(installation.namespace, installation.operator_groups[0])


def _spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("spec") or {}


def _install_plan_refusals(installation: Installation) -> list[str]:
    found = []
    csv_name = installation.csv_name
    for plan in installation.install_plans:
        plan_csvs = list(_spec(plan).get("clusterServiceVersionNames") or ())
        phase = (plan.get("status") or {}).get("phase", "")
        if csv_name in plan_csvs and len(plan_csvs) > 1:
            others = ", ".join(sorted(set(plan_csvs) - {csv_name}))
            found.append(
                f"v0 installed it together with {others} (InstallPlan {plan['metadata']['name']}): "
                "dependencies v0 resolved, which OLM v1 does not manage; migrate or remove them one by one"
            )
        if _spec(plan).get("approved") and phase not in SETTLED_PLAN_PHASES:
            found.append(
                f"InstallPlan {plan['metadata']['name']} is approved and {phase or 'not started'}: "
                "v0 is changing this installation; run again once it is Complete"
            )
    return found


def _csv_refusals(csv: Mapping[str, Any]) -> list[str]:
    found = []
    phase = (csv.get("status") or {}).get("phase", "")
    if phase != "Succeeded":
        found.append(f"CSV {csv['metadata']['name']} is {phase or 'without a phase'}, not Succeeded")
    spec = _spec(csv)
    required = [c.get("name") for c in (spec.get("customresourcedefinitions") or {}).get("required") or ()]
    required += [
        f"{a.get('version')}.{a.get('group')}"
        for a in (spec.get("apiservicedefinitions") or {}).get("required") or ()
    ]
    if required:
        found.append(
            f"it requires APIs another operator provides ({', '.join(sorted(required))}): a dependency "
            "v0 resolved, which OLM v1 does not manage"
        )
    if (spec.get("apiservicedefinitions") or {}).get("owned"):
        found.append("it provides APIServices, which OLM v1 does not install")
    conversion = sorted(
        crd
        for webhook in spec.get("webhookdefinitions") or ()
        if webhook.get("type") == "ConversionWebhook"
        for crd in webhook.get("conversionCRDs") or ()
    )
    if conversion:
        found.append(
            f"its CRDs {', '.join(conversion)} use a conversion webhook: v0 switches such CRDs to "
            "no conversion when their CSV is deleted, so objects stored in other versions could not "
            "be read until OLM v1 restored it"
        )
    return found


def refusals(installation: Installation, everywhere: Sequence[Installation]) -> list[str]:
    """Why `installation` cannot move to OLM v1 (empty when it can); `everywhere` is every v0
    installation of the cluster, for the package installed more than once."""
    extension = installation.extension
    if extension is not None:
        started_from = extension["metadata"].get("annotations", {}).get(MIGRATED_FROM_ANNOTATION, "")
        if started_from != f"{installation.namespace}/{installation.csv_name}":
            name = extension["metadata"]["name"]
            return [
                f"it changed while it was being migrated: ClusterExtension {name} was written for "
                f"{started_from}, and v0 now runs {installation.csv_name}; set {name}'s "
                f"spec.source.catalog.version to {installation.version} and its annotation "
                f"{MIGRATED_FROM_ANNOTATION} to {installation.namespace}/{installation.csv_name}, "
                "then run again"
            ]
        # The first run checked the rest before it wrote the ClusterExtension; this run finishes it.
        return []
    if installation.subscription is None:
        return ["its CSV has no Subscription: the catalog and channel it came from are unknown"]
    found = []
    if installation.csv is None:
        return [f"Subscription {installation.key} has no installed CSV yet"]
    found += _csv_refusals(installation.csv)
    groups = installation.operator_groups
    if len(groups) != 1:
        found.append(
            f"namespace {installation.namespace} has {len(groups)} OperatorGroups; v0 itself needs one"
        )
    mode = _mode(installation)
    if mode is not None and mode.mode not in SUPPORTED_MODES:
        found.append(
            f"its OperatorGroup targets {len(mode.targets)} namespaces ({', '.join(mode.targets)}): "
            "OLM v1 installs an operator for one namespace or for all"
        )
    others = sorted(
        other.namespace
        for other in everywhere
        if other.package == installation.package and other.namespace != installation.namespace
    )
    if others:
        found.append(
            f"package {installation.package} is installed by v0 in several namespaces "
            f"({', '.join(sorted([installation.namespace, *others]))}): OLM v1 installs a package once "
            "per cluster, because its CRDs are cluster-wide"
        )
    found += _install_plan_refusals(installation)
    return found


@dataclass(frozen=True)
class CatalogChoice:
    """The ClusterCatalog an installation's CatalogSource maps to: `create` it with `image` when
    it does not exist yet; `refusal` says why there is none."""

    name: str = ""
    image: str = ""
    create: bool = False
    refusal: str = ""


def catalog_for(
    source_key: str,
    catalog_source: Mapping[str, Any] | None,
    cluster_catalogs: Sequence[Mapping[str, Any]],
    mapped: Mapping[str, str],
) -> CatalogChoice:
    """The ClusterCatalog for CatalogSource `source_key` (`namespace/name`): the one `mapped` names
    (`--catalog`), else one already serving the CatalogSource's image, else a new one named after
    the CatalogSource."""
    by_name = {str(c["metadata"]["name"]): c for c in cluster_catalogs}
    if source_key in mapped:
        name = mapped[source_key]
        if name not in by_name:
            return CatalogChoice(refusal=f"--catalog {source_key}={name}: no ClusterCatalog {name}")
        return CatalogChoice(name=name)
    if catalog_source is None:
        return CatalogChoice(
            refusal=f"its CatalogSource {source_key} does not exist; name a ClusterCatalog with --catalog"
        )
    image = str(_spec(catalog_source).get("image") or "")
    if not image:
        return CatalogChoice(
            refusal=f"its CatalogSource {source_key} serves from an address, not an image: name the "
            f"ClusterCatalog holding the same content with --catalog {source_key}=NAME"
        )
    for name, catalog in by_name.items():
        if ((_spec(catalog).get("source") or {}).get("image") or {}).get("ref") == image:
            return CatalogChoice(name=name, image=image)
    name = source_key.rsplit("/", 1)[-1]
    if name in by_name:
        return CatalogChoice(
            refusal=f"ClusterCatalog {name} exists with another image than CatalogSource {source_key} "
            f"({image}); name the one to use with --catalog {source_key}=NAME"
        )
    return CatalogChoice(name=name, image=image, create=True)


def extension_for(installation: Installation, name: str, catalog: str) -> dict[str, Any]:
    """The ClusterExtension that takes over `installation`: its package pinned to the installed
    version, on the Subscription's channel, from ClusterCatalog `catalog`, for the OperatorGroup's
    namespace, with the Subscription's `config` as `deploymentConfig`."""
    catalog_source: dict[str, Any] = {
        "packageName": installation.package,
        "version": installation.version,
        "selector": {"matchLabels": {names.METADATA_NAME_LABEL: catalog}},
    }
    if installation.channel:
        catalog_source["channels"] = [installation.channel]
    spec: dict[str, Any] = {
        "namespace": installation.namespace,
        "serviceAccount": {"name": installer_name(name)},
        "source": {"sourceType": "Catalog", "catalog": catalog_source},
    }
    inline: dict[str, Any] = {}
    mode = _mode(installation)
    if mode is not None and mode.watch is not None:
        inline["watchNamespace"] = mode.watch
    subscription_config = _spec(installation.subscription).get("config")
    if subscription_config:
        inline["deploymentConfig"] = dict(subscription_config)
    if inline:
        spec["config"] = {"configType": "Inline", "inline": inline}
    return {
        "apiVersion": f"{names.GROUP}/{names.VERSION}",
        "kind": names.CLUSTER_EXTENSION,
        "metadata": {
            "name": name,
            "annotations": {MIGRATED_FROM_ANNOTATION: f"{installation.namespace}/{installation.csv_name}"},
        },
        "spec": spec,
    }


def spec_changes(live: Any, applied: Any, path: str = "spec") -> list[str]:
    """The paths where `applied` (a server-side dry-run apply of v1's rendering) differs from
    `live`: each a field the hand-over would change."""
    if isinstance(live, Mapping) and isinstance(applied, Mapping):
        found = []
        for key in sorted(set(live) | set(applied)):
            found += spec_changes(live.get(key), applied.get(key), f"{path}.{key}")
        return found
    if isinstance(live, list) and isinstance(applied, list) and len(live) == len(applied):
        found = []
        for index, (a, b) in enumerate(zip(live, applied, strict=True)):
            found += spec_changes(a, b, f"{path}[{index}]")
        return found
    return [] if live == applied else [path]
