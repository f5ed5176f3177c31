"""Turning rendered objects into a ClusterObjectSet revision: phases, then Secrets.

- `phases`: the thirteen-phase rollout order by GroupKind (`PHASES`, data with a test that every
  kind OLM renders has a phase); unknown kinds go to `deploy`. `sort_into_phases` is deterministic.
- `secrets`: `pack(revision_name, owner_name, objects)` externalises every object into immutable
  Secrets of type `olm.operatorframework.io/object-data` in the system namespace, with
  content-addressed keys and names, at most ~900 KiB of data per Secret, gzip for objects whose JSON
  is larger than that, and a `PackingError` naming the object when one is still too large. It returns
  the Secrets and the ClusterObjectSet phases whose objects are `ref`s into them. Same input, same
  output, byte for byte.

Not here yet: the crash-safe creation sequence (Secrets -> ClusterObjectSet -> ownerReferences), orphan
removal and revision garbage collection, which need the Kubernetes client.
"""

from olm.operator_controller.applier import phases, secrets
from olm.operator_controller.applier.phases import (
    DEFAULT_PHASE,
    PHASES,
    GroupKind,
    Phase,
    group_kind,
    phase_of,
    sort_into_phases,
)
from olm.operator_controller.applier.secrets import (
    MAX_OBJECTS_PER_PHASE,
    MAX_SECRET_DATA_BYTES,
    PackedRevision,
    PackingError,
    PackingOptions,
    encode_object,
    pack,
)

__all__ = [
    "DEFAULT_PHASE",
    "MAX_OBJECTS_PER_PHASE",
    "MAX_SECRET_DATA_BYTES",
    "PHASES",
    "GroupKind",
    "PackedRevision",
    "PackingError",
    "PackingOptions",
    "Phase",
    "encode_object",
    "group_kind",
    "pack",
    "phase_of",
    "phases",
    "secrets",
    "sort_into_phases",
]
