"""`olmctl rbac`: the least-privilege RBAC an installer ServiceAccount needs for one bundle.

With `--diff` and two `--version`s it prints instead what the second version's Roles and
ClusterRoles grant that the first's do not, in the wording of operator-controller's
permission-growth gate (`status.update.held.addedPermissions`).

Each `--version` is resolved and rendered as `olmctl install` would (`olm.cli.extensions.plan`, operator-
controller's own code); the objects of all of them go into one `leastprivilege.installer_rbac`, so
the RBAC printed covers installing any of those versions, upgrading between them and removing the
extension. Without `--version` the bundle operator-controller would install today is used.
"""

from __future__ import annotations

import argparse
from typing import Any

import yaml

from olm.cli import render
from olm.cli.commands import CommandFailed
from olm.cli.extensions.parsers import catalog_selector
from olm.cli.extensions.plan import CatalogReads, extension_object, plan_install, pull_options
from olm.cli.rbac.leastprivilege import installer_rbac
from olm.cli.session import Session
from olm.pipeline.preflight import growth

__all__ = ["rbac"]


class _Dumper(yaml.SafeDumper):
    """Lists of plain values in flow style (`verbs: [get, patch]`): a rule per few lines."""


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = all(isinstance(item, str | int | float | bool) for item in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)


async def rbac(session: Session, args: argparse.Namespace) -> int:
    extension = args.extension_name or args.package
    config = {"watchNamespace": args.watch_namespace} if args.watch_namespace else None
    selector = catalog_selector(args)
    pull = pull_options(args)
    read: CatalogReads = {}
    if args.diff and len(args.version or ()) != 2:
        raise CommandFailed("--diff compares two versions: give --version FROM --version TO")
    objects: list[dict[str, Any]] = []
    rendered: list[tuple[str, list[dict[str, Any]]]] = []
    for version in args.version or [None]:
        wanted = extension_object(
            extension,
            args.package,
            namespace=args.namespace,
            service_account=args.service_account,
            version=version,
            channels=args.channel or (),
            selector=selector,
            config=config,
            readiness=args.readiness,
        )
        plan = await plan_install(session, wanted, pull=pull, read=read, preflights=False)
        objects += plan.objects
        rendered.append((plan.bundle.version, plan.objects))
    if args.diff:
        (old, old_objects), (new, new_objects) = rendered
        added = growth.added_permissions(new_objects, old_objects)
        session.out.write(render.dump({"from": old, "to": new, "addedPermissions": added}, args.output))
        return 0
    manifests = installer_rbac(
        objects, extension_name=extension, namespace=args.namespace, service_account=args.service_account
    )
    if args.output == "json":
        # A List, which `kubectl apply -f` takes as it takes a multi-document YAML stream.
        session.out.write(render.dump({"apiVersion": "v1", "kind": "List", "items": manifests}, "json"))
    else:
        session.out.write(yaml.dump_all(manifests, Dumper=_Dumper, sort_keys=False, default_flow_style=False))
    return 0
