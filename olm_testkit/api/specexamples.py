"""Every `olm.operatorframework.io/v1` example of the behaviour spec (`../shared/spec/*.md`).

The examples are copied here as written, so the tests run where the spec directory is absent (CI);
`extract` finds them in the spec files, and a unit test checks the copies still match when the spec
directory is present. v1alpha1 examples (most of `olmv1-docs.md`) describe an older API and are
not included.

Three mechanical fixes make the copies loadable, applied by `Example.manifests`:
- the ClusterExtension page renders every line after the first with two extra spaces; dedent them;
- callout markers such as ` (1)` at the end of a line are dropped;
- `<placeholder>`s become concrete values (`<version>` becomes `1.0.0`, others a DNS-safe name).
The ClusterObjectSets page lost its indentation when captured; the copies restore the published
indentation (the unit test compares line contents, not indentation).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = ["EXAMPLES", "OUR_KINDS", "Example", "extract"]

OUR_KINDS = frozenset({"ClusterCatalog", "ClusterExtension", "ClusterObjectSet"})

_START = re.compile(r"^apiVersion: olm\.operatorframework\.io/v1\s*$")
_YAML_LINE = re.compile(r"^(\s+\S|---|#|- |[A-Za-z][\w./-]*:(\s|$))")
_CALLOUT = re.compile(r"\s+\(\d+\)\s*$")
_PLACEHOLDER = re.compile(r"<([A-Za-z0-9_-]+)>")


def extract(markdown: str) -> list[str]:
    """The v1 example blocks of a spec page: from the apiVersion line to the first prose or blank line."""
    lines = markdown.splitlines()
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        if not _START.match(lines[i]):
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].strip() and _YAML_LINE.match(lines[end]):
            end += 1
        blocks.append("\n".join(lines[i:end]) + "\n")
        i = end
    return blocks


def _placeholder(match: re.Match[str]) -> str:
    name = match.group(1).lower()
    return "1.0.0" if name == "version" else name.replace("_", "-")


@dataclass(frozen=True)
class Example:
    source: str
    """File of the spec directory the example comes from."""
    section: str
    """Where in that file."""
    text: str
    """The example as written."""

    def manifests(self) -> list[dict[str, Any]]:
        """The OLM objects of the example, ready to send (other documents, such as Secrets, dropped)."""
        lines = self.text.splitlines()
        rest = [line for line in lines[1:] if line.strip()]
        if rest and all(line.startswith("  ") for line in rest) and lines[1].lstrip().startswith("kind:"):
            lines = [lines[0], *(line[2:] for line in lines[1:])]
        text = "\n".join(_CALLOUT.sub("", line) for line in lines)
        text = _PLACEHOLDER.sub(_placeholder, text)
        return [doc for doc in yaml.safe_load_all(text) if doc and doc.get("kind") in OUR_KINDS]


_CE_PAGE = "clusterextension-api-openshift.md"
_COS_PAGE = "clusterobjectsets.md"
_LARGE_BUNDLE = "large-bundle-support-design.md"

EXAMPLES = (
    Example(
        _CE_PAGE,
        "Example ClusterExtension object",
        """\
apiVersion: olm.operatorframework.io/v1
kind: ClusterExtension
metadata:
  name: <extension_name>
spec:
  namespace: <namespace_name>
  config:
    configType: Inline
    inline:
      watchNamespace: <namespace_name>
  serviceAccount:
    name: <service_account_name>
  source:
    sourceType: Catalog
    catalog:
      packageName: <package_name>
      channels:
        - <channel>
      version: "<version>"
""",
    ),
    Example(
        _CE_PAGE,
        "Example CR with a specified channel",
        """\
apiVersion: olm.operatorframework.io/v1
  kind: ClusterExtension
  metadata:
    name: <clusterextension_name>
  spec:
    namespace: <installed_namespace>
    serviceAccount:
      name: <service_account_installer_name>
    source:
      sourceType: Catalog
      catalog:
        packageName: <package_name>
        channels:
          - latest (1)
""",
    ),
    Example(
        _CE_PAGE,
        "Example CR with the target version specified",
        """\
apiVersion: olm.operatorframework.io/v1
  kind: ClusterExtension
  metadata:
    name: <clusterextension_name>
  spec:
    namespace: <installed_namespace>
    serviceAccount:
      name: <service_account_installer_name>
    source:
      sourceType: Catalog
      catalog:
        packageName: <package_name>
        version: "1.11.1" (1)
""",
    ),
    Example(
        _CE_PAGE,
        "Example CR with a version range specified",
        """\
apiVersion: olm.operatorframework.io/v1
  kind: ClusterExtension
  metadata:
    name: <clusterextension_name>
  spec:
    namespace: <installed_namespace>
    serviceAccount:
      name: <service_account_installer_name>
    source:
      sourceType: Catalog
      catalog:
        packageName: <package_name>
        version: ">1.11.1" (1)
""",
    ),
    Example(
        _COS_PAGE,
        "Examples: Inline objects",
        """\
apiVersion: olm.operatorframework.io/v1
kind: ClusterObjectSet
metadata:
  name: my-app-rev1
spec:
  revision: 1
  lifecycleState: Active
  collisionProtection: Prevent
  phases:
    - name: crds
      objects:
        - object:
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata:
              name: widgets.example.com
            spec:
              group: example.com
              names:
                kind: Widget
                plural: widgets
              scope: Namespaced
              versions:
                - name: v1
                  served: true
                  storage: true
                  schema:
                    openAPIV3Schema:
                      type: object
                      properties:
                        spec:
                          type: object
    - name: rbac
      objects:
        - object:
            apiVersion: v1
            kind: ServiceAccount
            metadata:
              name: my-app-controller
              namespace: my-app-system
        - object:
            apiVersion: rbac.authorization.k8s.io/v1
            kind: ClusterRole
            metadata:
              name: my-app-manager-role
            rules:
              - apiGroups: ["example.com"]
                resources: ["widgets"]
                verbs: ["get", "list", "watch", "create", "update", "delete"]
    - name: deploy
      objects:
        - object:
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: my-app-controller
              namespace: my-app-system
            spec:
              replicas: 1
              selector:
                matchLabels:
                  app: my-app-controller
              template:
                metadata:
                  labels:
                    app: my-app-controller
                spec:
                  serviceAccountName: my-app-controller
                  containers:
                    - name: manager
                      image: example.com/my-app-controller:v1.0.0
""",
    ),
    Example(
        _COS_PAGE,
        "Examples: Secret references",
        """\
apiVersion: olm.operatorframework.io/v1
kind: ClusterObjectSet
metadata:
  name: my-app-rev1
spec:
  revision: 1
  lifecycleState: Active
  collisionProtection: Prevent
  phases:
    - name: crds
      objects:
        - ref:
            name: my-app-rev1-3a7f1b9c0e2d4f68
            namespace: olmv1-system
            key: "K8sTl2xQa0vNpR7mW4dYcJfHbE9gUiAoZX1sDj6wFCy"
    - name: rbac
      objects:
        - ref:
            name: my-app-rev1-8b2e4a6c1d3f5097
            namespace: olmv1-system
            key: "Pm5tRqLwXv8sCj3kFdNhYe7bUiA0oZG1x2W9acDfHJy"
        - ref:
            name: my-app-rev1-8b2e4a6c1d3f5097
            namespace: olmv1-system
            key: "Vn4mTsLwXp8rCk3jFdNhYe7bUiA0oZG1x2W9acDfHQy"
    - name: deploy
      objects:
        - ref:
            name: my-app-rev1-8b2e4a6c1d3f5097
            namespace: olmv1-system
            key: "Bq9nRtLxYw2sDk4lGePhZf8cVjB1pUiA0oZH3x5WaCdy"
""",
    ),
    Example(
        _LARGE_BUNDLE,
        "Per-object content references: Example (system-created, with its Secrets)",
        """\
apiVersion: olm.operatorframework.io/v1
kind: ClusterObjectSet
metadata:
  name: my-extension-1
spec:
  revision: 1
  lifecycleState: Active
  collisionProtection: Prevent
  phases:
    - name: rbac
      objects:
        - ref:
            name: my-extension-1-rbac
            namespace: olmv1-system
            key: service-account
        - ref:
            name: my-extension-1-rbac
            namespace: olmv1-system
            key: cluster-role
    - name: crds
      objects:
        - ref:
            name: my-extension-1-crds
            namespace: olmv1-system
            key: my-crd
    - name: deploy
      objects:
        - ref:
            name: my-extension-1-deploy
            namespace: olmv1-system
            key: deployment
---
apiVersion: v1
kind: Secret
metadata:
  name: my-extension-1-rbac
  namespace: olmv1-system
  labels:
    olm.operatorframework.io/revision-name: my-extension-1
  ownerReferences:
    - apiVersion: olm.operatorframework.io/v1
      kind: ClusterObjectSet
      name: my-extension-1
      uid: <revision-uid>
      controller: true
immutable: true
type: olm.operatorframework.io/object-data
data:
  service-account: <base64(JSON ServiceAccount manifest)>
  cluster-role:    <base64(JSON ClusterRole manifest)>
---
apiVersion: v1
kind: Secret
metadata:
  name: my-extension-1-crds
  namespace: olmv1-system
  labels:
    olm.operatorframework.io/revision-name: my-extension-1
  ownerReferences:
    - apiVersion: olm.operatorframework.io/v1
      kind: ClusterObjectSet
      name: my-extension-1
      uid: <revision-uid>
      controller: true
immutable: true
type: olm.operatorframework.io/object-data
data:
  my-crd: <base64(JSON CRD manifest)>
---
apiVersion: v1
kind: Secret
metadata:
  name: my-extension-1-deploy
  namespace: olmv1-system
  labels:
    olm.operatorframework.io/revision-name: my-extension-1
  ownerReferences:
    - apiVersion: olm.operatorframework.io/v1
      kind: ClusterObjectSet
      name: my-extension-1
      uid: <revision-uid>
      controller: true
immutable: true
type: olm.operatorframework.io/object-data
data:
  deployment: <base64(JSON Deployment manifest)>
""",
    ),
    Example(
        _LARGE_BUNDLE,
        "Per-object content references: Example (user-crafted, inline)",
        """\
apiVersion: olm.operatorframework.io/v1
kind: ClusterObjectSet
metadata:
  name: my-extension-1
spec:
  revision: 1
  lifecycleState: Active
  collisionProtection: Prevent
  phases:
    - name: deploy
      objects:
        - object:
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: my-operator
              namespace: my-ns
            spec: { ... }
""",
    ),
)
