"""Names of kinds and resources, and the URL paths the API server serves them under."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GroupVersionKind", "GroupVersionResource", "ResourceInfo"]


@dataclass(frozen=True, slots=True)
class _GroupVersion:
    group: str
    version: str

    @property
    def api_version(self) -> str:
        """The `apiVersion` field of objects in this group and version: `v1` or `apps/v1`."""
        return f"{self.group}/{self.version}" if self.group else self.version


@dataclass(frozen=True, slots=True)
class GroupVersionKind(_GroupVersion):
    """A kind in one API version, e.g. `GroupVersionKind("apps", "v1", "Deployment")`.

    The core group is the empty string (`GroupVersionKind("", "v1", "ConfigMap")`).
    """

    kind: str

    @classmethod
    def from_api_version(cls, api_version: str, kind: str) -> GroupVersionKind:
        """Parse an object's `apiVersion` and `kind` fields."""
        group, _, version = api_version.rpartition("/")
        if not version or not kind:
            raise ValueError(f"apiVersion {api_version!r} and kind {kind!r} do not name a kind")
        return cls(group, version, kind)

    def __str__(self) -> str:
        return f"{self.api_version}, Kind={self.kind}"


@dataclass(frozen=True, slots=True)
class GroupVersionResource(_GroupVersion):
    """A resource in one API version, e.g. `GroupVersionResource("apps", "v1", "deployments")`."""

    resource: str

    def __str__(self) -> str:
        return f"{self.api_version}, Resource={self.resource}"


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    """What discovery says about a kind: its resource name, scope, verbs and subresources."""

    gvk: GroupVersionKind
    gvr: GroupVersionResource
    namespaced: bool
    verbs: frozenset[str] = frozenset()
    subresources: frozenset[str] = frozenset()

    @property
    def api_prefix(self) -> str:
        """`/api/v1` for the core group, `/apis/<group>/<version>` otherwise."""
        if self.gvr.group:
            return f"/apis/{self.gvr.group}/{self.gvr.version}"
        return f"/api/{self.gvr.version}"

    def path(
        self, *, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        """The URL path of a collection, or of one object (and its subresource) when `name` is given.

        A namespaced resource without `namespace` gives the all-namespaces collection (for list and
        watch) but an object `name` then raises; a cluster-scoped resource given a `namespace` raises.
        """
        if subresource is not None and name is None:
            raise ValueError(f"subresource {subresource!r} of {self.gvr.resource} needs an object name")
        parts = [self.api_prefix]
        if namespace:
            if not self.namespaced:
                raise ValueError(f"{self.gvk.kind} is cluster-scoped; got namespace {namespace!r}")
            parts.append(f"namespaces/{namespace}")
        elif self.namespaced and name is not None:
            raise ValueError(f"{self.gvk.kind} is namespaced; {name!r} needs a namespace")
        parts.append(self.gvr.resource)
        if name is not None:
            if not name:
                raise ValueError(f"empty name for {self.gvk.kind}")
            parts.append(name)
            if subresource:
                parts.append(subresource)
        return "/".join(parts)
