"""Admission webhooks: an HTTPS server for AdmissionReview v1 and the helpers handlers answer with.

    async def default_tier(request: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
        if request.object is None:
            return webhook.allowed()
        mutated = copy.deepcopy(request.object)
        mutated.setdefault("metadata", {}).setdefault("labels", {}).setdefault("tier", "standard")
        return webhook.patched(request.object, mutated)

    manager.webhook_server.register("/default-tier", default_tier)

What is promised:

- Every POST to a registered path gets an AdmissionReview v1 response echoing the request's uid.
  A handler that raises is answered with `errored` (allowed: false, code 500), logged and counted; it
  never reaches the client as a broken connection. A body that is not an AdmissionReview v1 gets
  HTTP 400.
- `patched(original, mutated)` sends an RFC 6902 patch that, applied to `original`, gives exactly
  `mutated` (types kept: `1`, `1.0` and `true` differ).
- TLS as `WebhookOptions.tls_profile` allows (`tlsprofile`; Intermediate by default: TLS 1.2 or
  newer). The certificate and key are read from `cert_dir` when the server starts (a
  missing or bad pair fails the start) and again whenever either file changes; new connections get the
  new pair, open ones keep theirs. A bad pair on rotation is logged and the old one kept
  (`olm_runtime.manager.certwatcher`, which `CertWatcher` is re-exported from).
- Metrics: `controller_runtime_webhook_requests_total{webhook,code}`,
  `controller_runtime_webhook_latency_seconds{webhook}`,
  `controller_runtime_webhook_requests_in_flight{webhook}`, `controller_runtime_webhook_panics_total`,
  `certwatcher_read_certificate_total`, `certwatcher_read_certificate_errors_total`.

Not provided: the webhook configuration objects (register a Validating/MutatingWebhookConfiguration
pointing at the Service yourself), conversion webhooks, client-certificate authentication of the
API server.
"""

from olm_runtime.manager.certwatcher import CertWatcher
from olm_runtime.manager.webhook._admission import (
    ADMISSION_API_VERSION,
    AdmissionRequest,
    AdmissionResponse,
    Handler,
    InvalidReview,
    allowed,
    denied,
    errored,
    patched,
)
from olm_runtime.manager.webhook._jsonpatch import PatchError
from olm_runtime.manager.webhook._jsonpatch import apply as apply_patch
from olm_runtime.manager.webhook._jsonpatch import diff as json_patch
from olm_runtime.manager.webhook._server import DEFAULT_CERT_DIR, WebhookOptions, WebhookServer

__all__ = [
    "ADMISSION_API_VERSION",
    "DEFAULT_CERT_DIR",
    "AdmissionRequest",
    "AdmissionResponse",
    "CertWatcher",
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
