"""The install pipeline: what installing or upgrading an extension would do, stage by stage.

One ClusterExtension spec goes in; out comes the bundle to install and the objects to apply, with
the verdicts of the checks that decide whether they may be applied. The stages run in this order,
each a package of its own (import-linter keeps the order: a stage uses only those before it):

- `catalogs`: the ClusterCatalogs the extension's selector picks, and the package read from each;
- `resolve`: the bundle to install (channels, version range, upgrade edges, deprecations);
- `unpack`: the bundle image pulled and read as registry+v1 (`olm.registryv1`);
- `render`: the bundle turned into plain objects for the extension's namespace and configuration;
- `preflight`: CRD upgrade safety against the cluster's CRDs, and the permissions the extension's
  ServiceAccount needs to apply the objects;
- `plan`: the stages above in order, as one call.

operator-controller's ClusterExtension steps and olmctl's previews call the same stage functions
with the same arguments (`plan` says which), so what a user previews is what gets applied. Nothing
here writes to the cluster; applying is operator-controller's (`olm.operator_controller.applier`).
"""
