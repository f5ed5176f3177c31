"""The registry+v1 bundle format: a ClusterServiceVersion, its CRDs and the objects beside them.

A shared leaf beside `olm.fbc`: the install pipeline reads bundles with it (`olm.pipeline.unpack`
pulls and loads them, `render` turns them into objects, `preflight` reads their permissions) and so
does olmctl. `load_bundle` (a directory) or `parse_bundle` (a path -> bytes mapping) returns a
`RegistryV1` (`bundle`), whose `csv` is a `ClusterServiceVersion` (`clusterserviceversion`, with the
install-mode names):

- `metadata/annotations.yaml` names the package and channels; a media type other than
  `registry+v1` is refused.
- `manifests/` must be flat and hold exactly one ClusterServiceVersion ("no ClusterServiceVersion
  found", "more than one ClusterServiceVersion" otherwise); YAML is read with Kubernetes semantics
  (`olm.compat.kubeyaml`), JSON as JSON, `List` objects are flattened.
- `metadata/properties.yaml` properties join the CSV's `olm.properties` annotation.

Every malformed input raises `BundleError` with a message naming the file. CRDs and the CSV fields
rendering uses are normalised the way upstream's Go types normalise them (`olm.compat`),
so rendered objects match upstream's byte for byte where it matters (names derived from hashes).
"""

from olm.registryv1.bundle import BundleError, RegistryV1, load_bundle, parse_bundle
from olm.registryv1.clusterserviceversion import (
    ALL_NAMESPACES,
    MULTI_NAMESPACE,
    OWN_NAMESPACE,
    SINGLE_NAMESPACE,
    ClusterServiceVersion,
    CSVError,
    DeploymentSpec,
    Permission,
    WebhookDefinition,
)

__all__ = [
    "ALL_NAMESPACES",
    "MULTI_NAMESPACE",
    "OWN_NAMESPACE",
    "SINGLE_NAMESPACE",
    "BundleError",
    "CSVError",
    "ClusterServiceVersion",
    "DeploymentSpec",
    "Permission",
    "RegistryV1",
    "WebhookDefinition",
    "load_bundle",
    "parse_bundle",
]
