"""Applying rendered objects: a ClusterObjectSet revision whose content lives in Secrets.

The last stage of the install pipeline (the ClusterObjectSet controller then rolls the revision out).

- `phases`: the thirteen-phase rollout order by GroupKind (`PHASES`, data with a test that every
  kind OLM renders has a phase); unknown kinds go to `deploy`. `sort_into_phases` is deterministic.
- `secrets`: `pack(revision_name, owner_name, objects)` externalises every object into immutable
  Secrets of type `olm.operatorframework.io/object-data` in the system namespace, with
  content-addressed keys and names, at most ~900 KiB of data per Secret, gzip for objects whose JSON
  is larger than that, and a `PackingError` naming the object when one is still too large. It returns
  the Secrets and the ClusterObjectSet phases whose objects are `ref`s into them. Same input, same
  output, byte for byte.
- `revisions`: an extension's revisions as the API holds them (`RevisionStates`), the crash-safe
  creation sequence (Secrets -> ClusterObjectSet -> the Secrets' ownerReferences), the sweep of
  Secrets a crash left without a revision or an owner, and retention (archived revisions beyond
  the limit are deleted, with their Secrets). Import it as a module; it talks to the API server.
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
