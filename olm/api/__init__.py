"""The OLM v1 API: ClusterCatalog, ClusterExtension and ClusterObjectSet as pydantic models.

Group `olm.operatorframework.io`, version `v1`; all three kinds are cluster-scoped and have a
`status` subresource.

The models are the single source of truth for the API: `hack.crdgen` generates the CRDs under
`manifests/crds/` from them (`make manifests`), including the CEL rules the API server enforces
(immutability, unions, formats). What the models promise:

- Wire compatibility: `Resource.from_dict` reads what the API server returns and `to_dict` writes
  what it accepts, camelCase keys and all; attributes are snake_case. Top-level and metadata fields
  the models do not know (`metadata.managedFields`) survive a round trip; embedded objects of a
  ClusterObjectSet are kept verbatim.
- Pydantic validation checks types, enums and simple bounds only. The CEL rules (unions,
  immutability, reference and version syntax) run in the API server, which is the authority.
- Well-known strings live in `names` (labels, finalizers, Secret type), `conditions`
  (condition types and reasons per kind) and `kinds` (group, version and kind of each resource).

This package imports nothing itself. `names`, `conditions` and `kinds` load no models and no
pydantic, so a process that needs only the well-known strings (catalogd) stays without them; the
models are imported from their modules, or all at once from `olm.api.models`. Import modules, not
names, where it reads better: `names.OWNER_NAME_LABEL`, `conditions.TYPE_INSTALLED`.
"""
