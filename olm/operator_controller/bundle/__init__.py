"""registry+v1 bundles: parsing, and (in `bundle.render`) rendering to plain Kubernetes objects.

The unpack step of the install pipeline hands this package a bundle's files; `load_bundle` (a
directory) or `parse_bundle` (a path -> bytes mapping) returns a `RegistryV1`:

- `metadata/annotations.yaml` names the package and channels; a media type other than
  `registry+v1` is refused.
- `manifests/` must be flat and hold exactly one ClusterServiceVersion ("no ClusterServiceVersion
  found", "more than one ClusterServiceVersion" otherwise); YAML is read with Kubernetes semantics
  (`kubeyaml`), JSON as JSON, `List` objects are flattened.
- `metadata/properties.yaml` properties join the CSV's `olm.properties` annotation.

Every malformed input raises `BundleError` with a message naming the file. CRDs and the CSV fields
rendering uses are normalised the way upstream's Go types normalise them (`gotypes`, `k8stypes`),
so rendered objects match upstream's byte for byte where it matters (names derived from hashes).
"""

from olm.operator_controller.bundle.clusterserviceversion import (
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
from olm.operator_controller.bundle.registryv1 import BundleError, RegistryV1, load_bundle, parse_bundle

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
