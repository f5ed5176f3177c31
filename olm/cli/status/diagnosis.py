"""What an extension is waiting for and, when it is stuck, the next thing to do (pure logic).

`diagnose` reads a ClusterExtension's conditions and its revisions and returns a `Diagnosis`: its
`Health`, what it waits for, and one sentence saying what to do next. The sentence comes from the
condition's reason and message, the only account operator-controller gives of a reconcile:

| Progressing                               | health      | next step                            |
|-------------------------------------------|-------------|--------------------------------------|
| absent, or older than the spec            | Progressing | (none: operator-controller is on it) |
| Succeeded, Available not False            | Healthy     | (none)                               |
| Succeeded, Available False                | Stuck       | look at the objects failing probes   |
| RollingOut                                | Progressing | (none)                               |
| ProgressDeadlineExceeded                  | Stuck       | look at the objects failing probes   |
| Retrying/Blocked/InvalidConfiguration     | Stuck       | by message: ServiceAccount missing,  |
|                                           |             | permissions missing, no bundle found |
|                                           |             | (the resolver's own advice), CRD     |
|                                           |             | upgrade unsafe, configuration, ...   |

The condition message of a resolution failure is upstream's sentence alone; operator-controller
writes the rest (catalog by catalog why nothing was found, and the resolver's `Advice`) into the
`Failed` Event of the same change, as that message, "; ", then the explanation. `diagnose` takes the
explanation from the newest such Event, and the next step from its advice, so the CLI and the Event
say the same thing. Events expire (an hour by default): without one the next step is the generic
one.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import conditions as api
from olm.api.revisions import Revision
from olm_runtime import conditions

__all__ = ["Diagnosis", "Health", "diagnose", "explanation", "one_line"]


class Health(enum.StrEnum):
    HEALTHY = "Healthy"
    """Installed, up to date with its spec, and its objects pass their probes."""
    PROGRESSING = "Progressing"
    """Working towards its spec; nothing to do yet."""
    STUCK = "Stuck"
    """Will not get further without a change: `Diagnosis.next_step` says which."""


@dataclass(frozen=True, kw_only=True)
class Diagnosis:
    health: Health
    waiting_for: str
    """What has to happen before the extension reaches its spec ("" when it has)."""
    next_step: str = ""
    """One sentence: what to do now ("" when nothing is needed)."""
    explanation: str = ""
    """What operator-controller adds to upstream's condition message, read from its Event."""


# The next steps, one sentence each; `{...}` are filled from the extension.
SERVICE_ACCOUNT = (
    'create ServiceAccount "{account}" in namespace "{namespace}" with the permissions the bundle needs '
    "(olmctl rbac {package} --namespace {namespace} --service-account {account} prints them)"
)
PERMISSIONS = (
    'grant ServiceAccount "{account}" in namespace "{namespace}" the permissions listed in the Progressing '
    "message (olmctl rbac {package} --namespace {namespace} --service-account {account} prints them all)"
)
CRD_UPGRADE = (
    "the new bundle would change a CRD unsafely for existing objects: request another version, or set "
    "spec.install.preflight.crdUpgradeSafety.enforcement: None if the change is known to be safe"
)
CONFIGURATION = (
    "change spec.config.inline as the Progressing message says "
    "(olmctl package show {package} lists the install modes the bundle supports)"
)
COLLISION = (
    "the objects listed in the Progressing message belong to someone else: "
    "delete them or the extension that owns them"
)
PULL = "make the bundle image pullable from operator-controller (registry reachable, credentials configured)"
PROBES = (
    "look at the objects named in the Available message (kubectl describe, their Pods' logs): "
    "they do not become ready"
)
NAME_TOO_LONG = "recreate the extension with a name of at most 63 characters"
BLOCKED = "change the spec or the catalog: operator-controller does not retry this until something changes"
RETRYING = "operator-controller retries with backoff; the Progressing message says what fails"

_LIMIT = 200
"""Characters of a condition message quoted in `waiting_for`."""


def one_line(message: str, limit: int = _LIMIT) -> str:
    """A multi-line condition message on one line (list items joined), cut at `limit`."""
    text = " ".join(part.strip().removeprefix("- ") for part in message.splitlines() if part.strip())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def explanation(message: str, events: Sequence[Mapping[str, Any]]) -> str:
    """The explanation the newest `Failed` Event gives beside the condition `message` ("" if none)."""
    prefix = f"{message}; "
    said = [
        text[len(prefix) :]
        for e in events
        if e.get("reason") == api.REASON_FAILED
        and (text := str(e.get("message") or e.get("note") or "")).startswith(prefix)
    ]
    return said[-1] if said else ""


def _stuck(
    extension: Mapping[str, Any], reason: str, message: str, events: Sequence[Mapping[str, Any]]
) -> Diagnosis:
    spec = extension.get("spec") or {}
    fields = {
        "account": (spec.get("serviceAccount") or {}).get("name", ""),
        "namespace": spec.get("namespace", ""),
        "package": ((spec.get("source") or {}).get("catalog") or {}).get("packageName", ""),
    }
    # Imported here: the resolver (with the catalog client, the informer cache and their logging)
    # loads only to explain a stuck extension, not for every `olmctl status`. `advice_in` reads a
    # message and logs nothing, so the logging olmctl configures before a command runs
    # (`olm.cli.session`) is not needed for it.
    from olm.pipeline import resolve  # noqa: PLC0415

    explained = explanation(message, events)
    advice = resolve.advice_in(explained)
    if advice is not None:
        return Diagnosis(
            health=Health.STUCK,
            waiting_for="a bundle that matches spec.source.catalog",
            next_step=advice,
            explanation=explained,
        )
    if message.startswith('service account "') and "not found in namespace" in message:
        waiting = 'ServiceAccount "{account}" in namespace "{namespace}"'.format(**fields)
        return Diagnosis(health=Health.STUCK, waiting_for=waiting, next_step=SERVICE_ACCOUNT.format(**fields))
    cases = (
        ("pre-authorization failed", "the ServiceAccount's permissions", PERMISSIONS),
        ("validating upgrade for CRD", "a CRD upgrade that is safe", CRD_UPGRADE),
        ("revision object collisions", "objects owned by someone else", COLLISION),
        ("pulling bundle image", "the bundle image", PULL),
        ("characters long; at most", "a shorter name", NAME_TOO_LONG),
    )
    for marker, waiting, step in cases:
        if marker in message:
            return Diagnosis(health=Health.STUCK, waiting_for=waiting, next_step=step.format(**fields))
    if reason == api.REASON_INVALID_CONFIGURATION:
        return Diagnosis(
            health=Health.STUCK, waiting_for="a valid configuration", next_step=CONFIGURATION.format(**fields)
        )
    step = BLOCKED if reason == api.REASON_BLOCKED else RETRYING
    return Diagnosis(health=Health.STUCK, waiting_for=one_line(message), next_step=step)


def diagnose(
    extension: Mapping[str, Any], revisions: Sequence[Revision], events: Sequence[Mapping[str, Any]] = ()
) -> Diagnosis:
    """The extension's health, what it waits for and what to do next (see the module doc), from
    its conditions, its revisions and the Events about it, oldest first."""
    metadata = extension.get("metadata") or {}
    if metadata.get("deletionTimestamp"):
        return Diagnosis(health=Health.PROGRESSING, waiting_for="its content to be removed")
    found = (extension.get("status") or {}).get("conditions") or ()
    progressing = conditions.find(found, api.TYPE_PROGRESSING) or {}
    generation = metadata.get("generation")
    if not progressing or (generation is not None and progressing.get("observedGeneration") != generation):
        return Diagnosis(
            health=Health.PROGRESSING,
            waiting_for=f"operator-controller to reconcile the current spec (generation {generation})",
        )
    reason = str(progressing.get("reason") or "")
    message = str(progressing.get("message") or "")
    active = [r for r in revisions if not r.archived]
    latest = active[-1].name if active else "the next revision"
    available = conditions.find(found, api.TYPE_AVAILABLE) or {}
    probes = one_line(str(available.get("message") or ""))
    if reason == api.REASON_SUCCEEDED:
        if available.get("status") == "False":
            return Diagnosis(
                health=Health.STUCK, waiting_for=f"{latest} to pass its probes: {probes}", next_step=PROBES
            )
        return Diagnosis(health=Health.HEALTHY, waiting_for="")
    if reason == api.REASON_ROLLING_OUT:
        detail = probes or one_line(message)
        return Diagnosis(
            health=Health.PROGRESSING, waiting_for=f"{latest} to roll out" + (f": {detail}" if detail else "")
        )
    if reason == api.REASON_PROGRESS_DEADLINE_EXCEEDED:
        return Diagnosis(
            health=Health.STUCK,
            waiting_for=f"{latest}, past its progress deadline: {probes or one_line(message)}",
            next_step=PROBES,
        )
    return _stuck(extension, reason, message, events)
