"""Unpacking a resolved bundle: its image into a directory per digest, read as registry+v1.

The stage after `resolve` and before `render`. `unpacker.BundleUnpacker` pulls the bundle image,
extracts it into `<cache>/<extension>/<digest>/` and loads it (see its module for the cache
layout). Loading is exported here: `load_bundle` (a directory) or `parse_bundle` (a path -> bytes
mapping) returns a `RegistryV1`:

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

from olm.operator_controller.unpack.clusterserviceversion import (
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
from olm.operator_controller.unpack.registryv1 import BundleError, RegistryV1, load_bundle, parse_bundle

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
