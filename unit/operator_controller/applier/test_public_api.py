"""The public surface of the applier is pinned: changing it must be a deliberate edit here."""

from __future__ import annotations

from olm.operator_controller import applier


def test_exported_names() -> None:
    assert sorted(applier.__all__) == sorted(
        [
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
    )
    for name in applier.__all__:
        assert getattr(applier, name) is not None
