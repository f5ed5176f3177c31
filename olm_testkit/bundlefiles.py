"""The files of a small, valid registry+v1 bundle, as bytes: a base that tests and the fuzzer change
one file at a time (`metadata/annotations.yaml`, a CSV, a CRD in JSON, `metadata/properties.yaml`,
a `List` of objects)."""

from __future__ import annotations

ANNOTATIONS = b"""annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.package.v1: p
  operators.operatorframework.io.bundle.channels.v1: stable,fast
  operators.operatorframework.io.bundle.channel.default.v1: stable
"""
CSV = b"""apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: p.v1.0.0
  annotations:
    olm.properties: '[{"type":"x","value":1}]'
spec:
  version: 1.0.0
  installModes:
  - {type: AllNamespaces, supported: true}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: p
        spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}}}
      clusterPermissions:
      - serviceAccountName: p
        rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
"""
CRD = b"""{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "ws.example.com"},
 "spec": {"group": "example.com", "names": {"kind": "W", "plural": "ws"}, "scope": "Namespaced",
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}
"""
PROPERTIES = (
    b"properties:\n- type: olm.maxOpenShiftVersion\n  value: 4.9\n- {type: olm.gvk, value: {b: 1, a: 2}}\n"
)
LIST = b"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n"
