"""Which Kubernetes versions a bundle runs on (roadmap F19, OLM v0's `minKubeVersion`).

A bundle says so in its catalog entry in two ways:

- `olm.csv.metadata` (the CSV's metadata, as `opm render` writes it) with `minKubeVersion`, the
  field OLM v0 checks before it installs a CSV; older catalogs carry the whole CSV in an
  `olm.bundle.object` property instead, whose `spec.minKubeVersion` counts the same;
- `olm.kubeVersion`, whose value is a version range (`">=1.30.0 <1.36.0"`), for a bundle that also
  has an upper bound.

The cluster's version is the API server's `gitVersion` reduced to major.minor.patch: providers add
suffixes (`v1.35.4+k3s1`, `v1.30.2-eks-1552ad0`) that would otherwise sort it before the release
it is built from.
"""

from __future__ import annotations

import re

from olm import fbc, semver

__all__ = ["CSV_METADATA", "KUBE_VERSION", "cluster_version", "unsupported"]

CSV_METADATA = "olm.csv.metadata"
KUBE_VERSION = "olm.kubeVersion"
_GIT_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def cluster_version(git_version: str) -> semver.Version:
    """The version of a cluster whose API server reports `git_version`; raises `VersionError`."""
    match = _GIT_VERSION.match(git_version.strip())
    if match is None:
        raise semver.VersionError(f"not a Kubernetes version: {git_version!r}")
    major, minor, patch = match.groups()
    return semver.Version(int(major), int(minor), int(patch or 0))


def unsupported(bundle: fbc.Bundle, cluster: semver.Version) -> str | None:
    """Why `bundle` cannot run on a cluster of version `cluster` ("kube-green 0.8.0 needs
    Kubernetes >= 1.36.0; this cluster is 1.35.4"), or None when it can or says nothing. A value
    that does not parse counts as unmet: the bundle's author meant a constraint."""
    who = f"{bundle.package} {bundle.version}"
    embedded = bundle.embedded_csv()
    csv_spec = embedded.get("spec") if embedded is not None else None
    for metadata in (*bundle.properties_of(CSV_METADATA), csv_spec):
        minimum = metadata.get("minKubeVersion") if isinstance(metadata, dict) else None
        if not minimum:
            continue
        try:
            met = not cluster < semver.parse_version(str(minimum))
        except semver.VersionError:
            return f"{who} declares minKubeVersion {minimum!r}, which is not a version"
        if not met:
            return f"{who} needs Kubernetes >= {minimum}; this cluster is {cluster}"
    for wanted in bundle.properties_of(KUBE_VERSION):
        try:
            met = semver.parse_range(str(wanted)).matches(cluster)
        except semver.RangeError:
            return f"{who} declares {KUBE_VERSION} {wanted!r}, which is not a version range"
        if not met:
            return f'{who} needs Kubernetes "{wanted}"; this cluster is {cluster}'
    return None
