"""The manager's and the events module's public surfaces are pinned."""

from __future__ import annotations

from olm_runtime import events, manager
from olm_runtime.manager import tlsprofile, webhook


def test_manager_exports_exactly_these_names() -> None:
    assert sorted(manager.__all__) == [
        "CacheSyncTimeout",
        "GracefulShutdownTimeout",
        "LeaderElectionLost",
        "LeaderElectionOptions",
        "Manager",
        "ManagerOptions",
        "Runnable",
        "SecureMetricsOptions",
        "WebhookOptions",
        "health",
        "leaderelection",
        "runnable_from",
        "tlsprofile",
        "webhook",
    ]
    for name in manager.__all__:
        assert getattr(manager, name) is not None


def test_manager_methods_are_pinned() -> None:
    public = {name for name in dir(manager.Manager) if not name.startswith("_")}
    assert public == {
        "add",
        "add_health_check",
        "add_ready_check",
        "event_recorder",
        "identity",
        "is_leader",
        "run",
        "webhook_server",
    }


def test_webhook_exports_exactly_these_names() -> None:
    assert sorted(webhook.__all__) == [
        "ADMISSION_API_VERSION",
        "AdmissionRequest",
        "AdmissionResponse",
        "CertWatcher",
        "DEFAULT_CERT_DIR",
        "Handler",
        "InvalidReview",
        "PatchError",
        "WebhookOptions",
        "WebhookServer",
        "allowed",
        "apply_patch",
        "denied",
        "errored",
        "json_patch",
        "patched",
    ]


def test_events_exports_exactly_these_names() -> None:
    assert sorted(events.__all__) == [
        "BroadcasterOptions",
        "EventBroadcaster",
        "EventRecorder",
        "EventType",
        "NORMAL",
        "WARNING",
    ]


def test_tlsprofile_exports_exactly_these_names() -> None:
    assert sorted(tlsprofile.__all__) == [
        "CIPHERS",
        "CURVES",
        "INTERMEDIATE",
        "MODERN",
        "OLD",
        "PREDEFINED",
        "Profile",
        "TLS13_CIPHERS",
        "Unsupported",
        "VERSIONS",
    ]
