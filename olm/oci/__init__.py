"""An async OCI registry client: resolve tags, pull verified images, apply layers safely.

The model: a `Reference` names an image (`host[:port]/path[:tag][@digest]`); `RegistryClient`
resolves it to a `Digest` and pulls a `PulledImage` whose manifest, config and layers are on disk
in a content-addressed `BlobCache`. `open_layer` turns a layer blob into a tar stream (gzip; zstd
when the optional `zstandard` package is installed), `apply_layers` writes one directory of an
image to disk under strict safety rules, and `unpack_into` does that once per digest, atomically,
into a directory named after the digest.

Promises:

- Nothing unverified is used: manifests, configs and layers are checked against their digest (and
  descriptor size) before they are returned, and only verified blobs enter the cache.
- The cache survives restarts and is content-addressed: a blob is downloaded once per digest, a
  pull by digest whose content is cached makes no request, a pull by tag makes one `HEAD`.
- Memory stays flat: layers stream to disk in small chunks; nothing holds a layer in memory.
- Authentication: anonymous, Basic, and bearer tokens (the `WWW-Authenticate` flow), with
  credentials from dockerconfigjson pull Secrets (`Keychain`), replaceable while running
  (`use_keychain`). Trust: the system CAs plus extra CA bundles (`TrustStore`), re-read when their
  files change. TLS 1.2 or newer; plain-HTTP registries are not supported. Proxies: each request
  goes through the one `ClientOptions.proxies` picks for its URL (`olm.compat.httpproxy`, Go's
  `HTTPS_PROXY`/`NO_PROXY` rules); a refusing proxy is a `TransientError` naming it
  (`proxy_failure`).
- Transient trouble (connection errors, timeouts, 408, 429, 5xx) is retried with jittered
  exponential backoff, a bounded number of times; then `TransientError`.
- Mirrors: a `registries.conf` (v2) file (`ClientOptions.registries_conf`, followed by
  `RegistriesConf`) rewrites where images are pulled from, as containers/image does: the allowed
  mirrors in order, then the registry itself unless `blocked`. Whatever source serves an image, it
  is verified against the digest its own reference names and reported under that reference.
- Signature policy (`SignaturePolicy`, `ClientOptions.verifier`): a containers-policy.json(5) file
  decides per registry scope whether an image is accepted (`insecureAcceptAnything`, `reject`, cosign
  `sigstoreSigned` with public keys); a refused image is not fetched past its manifest
  (`SignatureRejected`). The file is re-read when it changes; without one, everything is accepted.
- Each error type is a decision (`NotFound`, `Unauthorized`, `DigestMismatch`, `TooLarge`, ...),
  and messages are deterministic, fit for a status condition.

Not provided: pushing, GPG (`signedBy`) and keyless (Fulcio, Rekor) signatures, plain HTTP,
`registries.conf.d` drop-ins.
Nothing here imports the catalogd or operator-controller processes: this is a shared leaf.
"""

from olm.oci._auth import Challenge, Credentials, InvalidPullSecret, Keychain, parse_challenges
from olm.oci._blobcache import BlobCache, BlobWriter
from olm.oci._client import ClientOptions, PulledImage, RegistryClient, Verifier
from olm.oci._digest import Digest
from olm.oci._errors import (
    DigestMismatch,
    InvalidReference,
    InvalidSignaturePolicy,
    NoMatchingPlatform,
    NotFound,
    ProtocolError,
    RegistryError,
    SignatureRejected,
    SizeMismatch,
    TLSVerificationFailed,
    TooLarge,
    TransientError,
    Unauthorized,
    UnsupportedMediaType,
)
from olm.oci._extract import ExtractOptions, ExtractStatistics, UnsafeContent, apply_layers
from olm.oci._layer import LAYER_MEDIA_TYPES, open_layer, zstd_available
from olm.oci._manifest import (
    ACCEPT,
    DOCKER_CONFIG,
    DOCKER_MANIFEST,
    DOCKER_MANIFEST_LIST,
    OCI_CONFIG,
    OCI_INDEX,
    OCI_MANIFEST,
    Descriptor,
    ImageIndex,
    ImageManifest,
)
from olm.oci._manifest import parse as parse_manifest
from olm.oci._mirrors import DEFAULT_PATH as DEFAULT_REGISTRIES_CONF
from olm.oci._mirrors import Blocked, InvalidRegistriesConf, RegistriesConf
from olm.oci._mirrors import parse as parse_registries_conf
from olm.oci._policy import Policy, Scope, parse_policy
from olm.oci._proxy import proxy_failure
from olm.oci._reference import Reference
from olm.oci._retry import RetryPolicy
from olm.oci._transport import Statistics
from olm.oci._trust import TrustStore, bundle_files, ssl_context
from olm.oci._unpack import CorruptLayer, EmptySelection, unpack_into, unpacked_path
from olm.oci._verify import DEFAULT_POLICY_PATH, SignaturePolicy, VerifyStatistics

__all__ = [
    "ACCEPT",
    "DEFAULT_POLICY_PATH",
    "DEFAULT_REGISTRIES_CONF",
    "DOCKER_CONFIG",
    "DOCKER_MANIFEST",
    "DOCKER_MANIFEST_LIST",
    "LAYER_MEDIA_TYPES",
    "OCI_CONFIG",
    "OCI_INDEX",
    "OCI_MANIFEST",
    "BlobCache",
    "BlobWriter",
    "Blocked",
    "Challenge",
    "ClientOptions",
    "CorruptLayer",
    "Credentials",
    "Descriptor",
    "Digest",
    "DigestMismatch",
    "EmptySelection",
    "ExtractOptions",
    "ExtractStatistics",
    "ImageIndex",
    "ImageManifest",
    "InvalidPullSecret",
    "InvalidReference",
    "InvalidRegistriesConf",
    "InvalidSignaturePolicy",
    "Keychain",
    "NoMatchingPlatform",
    "NotFound",
    "Policy",
    "ProtocolError",
    "PulledImage",
    "Reference",
    "RegistriesConf",
    "RegistryClient",
    "RegistryError",
    "RetryPolicy",
    "Scope",
    "SignaturePolicy",
    "SignatureRejected",
    "SizeMismatch",
    "Statistics",
    "TLSVerificationFailed",
    "TooLarge",
    "TransientError",
    "TrustStore",
    "Unauthorized",
    "UnsafeContent",
    "UnsupportedMediaType",
    "Verifier",
    "VerifyStatistics",
    "apply_layers",
    "bundle_files",
    "open_layer",
    "parse_challenges",
    "parse_manifest",
    "parse_policy",
    "parse_registries_conf",
    "proxy_failure",
    "ssl_context",
    "unpack_into",
    "unpacked_path",
    "zstd_available",
]
