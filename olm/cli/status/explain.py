"""`olmctl status`: what an extension is, what it waits for, and what to do next.

    olmctl status kube-green
    olmctl status kube-green -o yaml

It reads the ClusterExtension, its revisions (the ClusterObjectSets it controls) and the Events
about it, and prints the package and what was asked of it, the installed bundle, the conditions,
each revision with its phase and probe state, the deprecations, the last Events, and the
`diagnosis` verdict: healthy, progressing (and what it waits for) or stuck (and the one
thing to do next). Exit code 0 whenever the extension exists, whatever its health (scripts read
`health` from `-o json`); 1 when it does not.
"""

from __future__ import annotations

import argparse
import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from olm.api import conditions as api
from olm.api import names, revisions
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.api.revisions import Revision
from olm.cli import render
from olm.cli.session import Session, get_extension
from olm.cli.status.diagnosis import Diagnosis, diagnose, one_line
from olm_runtime import conditions
from olm_runtime.client import errors, kinds

__all__ = ["EVENTS_SHOWN", "status", "status_data", "status_text"]

EVENTS_SHOWN = 5
"""The newest Events shown."""

_CONDITIONS_SHOWN = (api.TYPE_INSTALLED, api.TYPE_PROGRESSING, api.TYPE_AVAILABLE)
_DEPRECATIONS = (api.TYPE_PACKAGE_DEPRECATED, api.TYPE_CHANNEL_DEPRECATED, api.TYPE_BUNDLE_DEPRECATED)


def _event_time(event: Mapping[str, Any]) -> str:
    """When a core/v1 Event last happened (events.k8s.io writers fill `series` or `eventTime`)."""
    series = event.get("series") or {}
    return str(
        series.get("lastObservedTime")
        or event.get("lastTimestamp")
        or event.get("eventTime")
        or (event.get("metadata") or {}).get("creationTimestamp")
        or ""
    )


def _requested(catalog: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "version": catalog.get("version") or "",
        "channels": list(catalog.get("channels") or []),
        "catalogSelector": catalog.get("selector"),
        "upgradeConstraintPolicy": catalog.get("upgradeConstraintPolicy") or "CatalogProvided",
    }


def _update(extension: Mapping[str, Any]) -> dict[str, Any] | None:
    """`status.update` with `spec.upgrade`, and why a held step waits (the UpdateHeld condition)."""
    update = (extension.get("status") or {}).get("update")
    held = conditions.find(((extension.get("status") or {}).get("conditions") or ()), api.TYPE_UPDATE_HELD)
    why = str(held.get("message") or "") if held is not None and held.get("status") == "True" else ""
    policy = (extension.get("spec") or {}).get("upgrade") or {}
    if not update and not why and not policy:
        return None
    return {
        "available": (update or {}).get("available"),
        "held": (update or {}).get("held"),
        "rolledBack": (update or {}).get("rolledBack"),
        "why": why,
        "automatic": policy.get("automatic", "Any"),
        "approvedVersion": policy.get("approvedVersion", ""),
    }


def _revision(revision: Revision) -> dict[str, Any]:
    found = revision.conditions
    progressing = conditions.find(found, api.TYPE_PROGRESSING) or {}
    available = conditions.find(found, api.TYPE_AVAILABLE) or {}
    return {
        "name": revision.name,
        "revision": revision.number,
        "lifecycleState": "Archived" if revision.archived else "Active",
        "bundle": revision.bundle.name if revision.bundle else "",
        "version": revision.bundle.version if revision.bundle else "",
        "progressing": str(progressing.get("reason") or ""),
        "available": str(available.get("reason") or ""),
        "probes": one_line(str(available.get("message") or "")),
    }


def status_data(
    extension: Mapping[str, Any],
    owned: Sequence[Revision],
    events: Sequence[Mapping[str, Any]],
    diagnosis: Diagnosis,
) -> dict[str, Any]:
    """What `status` reports, as plain data (the `-o json|yaml` output)."""
    spec = extension.get("spec") or {}
    status = extension.get("status") or {}
    catalog = (spec.get("source") or {}).get("catalog") or {}
    found = status.get("conditions") or []
    bundle = (status.get("install") or {}).get("bundle")
    newest = sorted(events, key=_event_time)[-EVENTS_SHOWN:]
    return {
        "name": (extension.get("metadata") or {}).get("name", ""),
        "package": catalog.get("packageName", ""),
        "requested": _requested(catalog),
        "namespace": spec.get("namespace", ""),
        "serviceAccount": (spec.get("serviceAccount") or {}).get("name", ""),
        "installed": {"bundle": bundle.get("name", ""), "version": bundle.get("version", "")}
        if bundle
        else None,
        "update": _update(extension),
        "health": str(diagnosis.health),
        "waitingFor": diagnosis.waiting_for,
        "nextStep": diagnosis.next_step,
        "explanation": diagnosis.explanation,
        "conditions": [
            {k: str(c.get(k) or "") for k in ("type", "status", "reason", "message")}
            for kind in _CONDITIONS_SHOWN
            if (c := conditions.find(found, kind)) is not None
        ],
        "revisions": [_revision(r) for r in owned],
        "deprecations": [
            str(c.get("message") or "")
            for kind in _DEPRECATIONS
            if (c := conditions.find(found, kind)) is not None and c.get("status") == "True"
        ],
        "events": [
            {
                "time": _event_time(e),
                "type": str(e.get("type") or ""),
                "reason": str(e.get("reason") or ""),
                "message": str(e.get("message") or e.get("note") or ""),
            }
            for e in newest
        ],
    }


def _age(time: str, now: datetime.datetime) -> str:
    """kubectl's short ages: 45s, 12m, 3h, 2d."""
    try:
        then = datetime.datetime.fromisoformat(time.replace("Z", "+00:00"))
    except ValueError:
        return "?"
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _indent(text: str) -> list[str]:
    return ["  " + line for line in text.splitlines()]


def _conditions_text(rows: Sequence[Mapping[str, str]]) -> list[str]:
    """Type, status and reason in columns; a multi-line message continues under its first line."""
    head = render.table(
        ["TYPE", "STATUS", "REASON", "MESSAGE"], [[r["type"], r["status"], r["reason"], ""] for r in rows]
    ).splitlines()
    column = head[0].index("MESSAGE")
    out = [head[0]]
    for line, row in zip(head[1:], rows, strict=True):
        first, *rest = row["message"].splitlines() or [""]
        out.append(line.ljust(column) + first)
        out.extend(" " * column + more for more in rest)
    return ["  " + line.rstrip() for line in out]


def _selector_text(selector: Mapping[str, Any] | None) -> str:
    """A label selector as kubectl's `-l` would read it, or `all` when there is none."""
    if not selector:
        return "all"
    parts = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        values = ",".join(expression.get("values") or [])
        parts.append(
            f"{expression.get('key')} {expression.get('operator')}" + (f" ({values})" if values else "")
        )
    return "selector " + ", ".join(parts)


def _release(name: str, held: Mapping[str, Any]) -> str:
    """What lets a held step go, by what holds it."""
    if held["heldBy"] == api.REASON_READINESS:
        return "the operator's OperatorCondition holds it; spec.upgrade.readiness Ignore forces it"
    if held["heldBy"] == api.REASON_CLUSTER_VERSION:
        return "it needs another Kubernetes version"
    return f"approve with `olmctl upgrade {name} --approve {held['version']}`"


def _update_fields(name: str, update: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    if update is None:
        return []
    fields = [("Updates", f"automatic {update['automatic']}")]
    if update["approvedVersion"]:
        fields[0] = ("Updates", f"automatic {update['automatic']}, approved {update['approvedVersion']}")
    available = update["available"]
    if available:
        path = " -> ".join(available["path"])
        fields.append(("Available", f"{available['name']} ({available['version']}), path {path}"))
    rolled_back = update["rolledBack"]
    if rolled_back:
        failed, restored = rolled_back["failed"], rolled_back["restored"]
        fields.append(
            (
                "Rolled back",
                f"{failed['name']} ({failed['version']}) failed ({rolled_back['reason']}); "
                f"running {restored['name']} ({restored['version']})",
            )
        )
    held = update["held"]
    if held:
        fields.append(
            ("Held", f"{held['name']} ({held['version']}): {held['heldBy']}; {_release(name, held)}")
        )
        fields += [("Adds", line) for line in held.get("addedPermissions") or ()]
    elif update["why"]:
        fields.append(("Held", one_line(update["why"])))
    return fields


def status_text(data: Mapping[str, Any], now: datetime.datetime) -> str:
    """`status` for people: a header block, then conditions, revisions and Events."""
    requested = data["requested"]
    asked = [f"version {requested['version']}" if requested["version"] else "any version"]
    if requested["channels"]:
        asked.append(f"channels {', '.join(requested['channels'])}")
    if requested["upgradeConstraintPolicy"] != "CatalogProvided":
        asked.append(f"upgradeConstraintPolicy {requested['upgradeConstraintPolicy']}")
    installed = data["installed"]
    fields = [
        ("Name", data["name"]),
        ("Package", data["package"]),
        ("Requested", ", ".join(asked)),
        ("Catalogs", _selector_text(requested["catalogSelector"])),
        ("Namespace", f"{data['namespace']} (ServiceAccount {data['serviceAccount']})"),
        ("Installed", f"{installed['bundle']} ({installed['version']})" if installed else "nothing yet"),
        *_update_fields(data["name"], data["update"]),
        ("Health", data["health"]),
        ("Waiting for", data["waitingFor"]),
        ("Why", data["explanation"]),
        ("Next step", data["nextStep"]),
        ("Deprecated", "; ".join(one_line(m) for m in data["deprecations"])),
    ]
    width = max(len(name) for name, _ in fields) + 2
    out = [f"{name + ':':<{width}}{value}" for name, value in fields if value]
    out.append("Conditions:")
    out.extend(_conditions_text(data["conditions"]))
    out.append("Revisions:")
    if data["revisions"]:
        out.extend(
            _indent(
                render.table(
                    ["NAME", "STATE", "BUNDLE", "PROGRESSING", "AVAILABLE", "PROBES"],
                    [
                        [
                            r["name"],
                            r["lifecycleState"],
                            r["bundle"],
                            r["progressing"],
                            r["available"],
                            r["probes"],
                        ]
                        for r in data["revisions"]
                    ],
                )
            )
        )
    else:
        out.append("  none yet")
    out.append("Events:")
    if data["events"]:
        out.extend(
            _indent(
                render.table(
                    ["AGE", "TYPE", "REASON", "MESSAGE"],
                    [
                        [_age(e["time"], now), e["type"], e["reason"], one_line(e["message"])]
                        for e in data["events"]
                    ],
                )
            )
        )
    else:
        out.append("  none (Events expire after an hour)")
    return "\n".join(out) + "\n"


async def status(session: Session, args: argparse.Namespace) -> int:
    client = session.client
    extension = await get_extension(session, args.name)
    listed = await client.list(CLUSTER_OBJECT_SET, label_selector=revisions.owner_selector(args.name))
    owned = revisions.states(listed.items, extension["metadata"]["uid"]).all
    # Events written through events.k8s.io/v1 read back as core/v1 ones, which the server selects
    # by the object they regard. They are a help, not the verdict: without the right to read them
    # the rest is still shown.
    events: Sequence[Mapping[str, Any]] = []
    try:
        listed_events = await client.list(
            kinds.EVENT,
            field_selector=f"involvedObject.kind={names.CLUSTER_EXTENSION},involvedObject.name={args.name}",
        )
        events = listed_events.items
    except errors.Forbidden as err:
        print(f"warning: Events not shown: {err}", file=session.err)
    oldest_first = sorted(events, key=_event_time)
    data = status_data(extension, owned, events, diagnose(extension, owned, oldest_first))
    if args.output == "table":
        session.out.write(status_text(data, datetime.datetime.now(datetime.UTC)))
    else:
        session.out.write(render.dump(data, args.output))
    return 0
