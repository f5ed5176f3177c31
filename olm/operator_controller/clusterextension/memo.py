"""What a steady reconcile may skip: the render and pack of content the newest revision already holds.

Every reconcile of an installed extension used to render the bundle, pack it into Secrets and hash
the result, only to find the newest revision holds that content already. The content digest is a
pure function of a few inputs, so it is remembered per extension against those inputs
(`RenderKey`): when they are unchanged and the newest active revision still carries that digest,
the reconcile skips unpack, render, pack and the preflights, exactly as it would after computing
the same digest.

The key is complete because it holds every input of `render.manifests_for` +
`applier.pack` + `revisions.content_digest` that can change while the process runs:

- the bundle, by image digest (a digest names one content; a bundle named by tag is never looked
  up here, since only a pull tells its digest);
- `spec.namespace` and `spec.config.inline` (the render's install namespace and configuration);
- `spec.progressDeadlineMinutes` (part of the content digest);
- whether `spec.upgrade.readiness` adds the OperatorCondition contract.

With the digest it keeps the bundle's `olm.properties` (`Rendered`), which the revision's
annotations carry and which a skipped render cannot read. Only rendered content is remembered:
content restored from a revision (`rollbackTo`, `onFailure: Rollback`) is no render of its key.

The certificate provider, the system namespace and the code are fixed for the life of the process,
so the memo leaves them out; they matter to what a *restarted* process may reuse. Every revision
rendered here records a digest of its key with them and of what the render produced (`stored_key`,
the `render-key` annotation): a process that starts with an empty memo and finds that digest on the
newest active revision takes the revision's content digest and properties annotations as
remembered (`recorded`; an edit of either breaks the match), and a steady extension is
reconciled after a restart without its bundle being pulled, parsed or rendered again, as it is by
the process that rendered it. The renderer's part (`renderer`) digests OLM's installed version, its
own source (an install whose version string did not move, as an editable checkout's, still changes
it) and those settings, so a new OLM version or another `--system-namespace` renders everything
once again.

The revision side is checked, not keyed: the memo is used only when the newest active revision's
content-digest annotation equals the remembered digest, so a new, archived, deleted or edited
revision takes the full path. Catalog changes need no key part: they reach this step as a
different resolved bundle image. Drift of installed objects is the ClusterObjectSet controller's
business and never passes through here.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

import orjson

import olm
from olm import version
from olm.api import names
from olm.api.extensionspec import ExtensionSpec
from olm.api.revisions import Revision

__all__ = ["RenderKey", "RenderMemo", "Rendered", "recorded", "render_key", "renderer", "stored_key"]


@dataclass(frozen=True, kw_only=True)
class RenderKey:
    """The inputs a revision's content digest is computed from."""

    image: str
    """The bundle image by digest."""
    namespace: str
    config: bytes
    """`spec.config.inline` as canonical JSON (keys sorted), `null` when unset."""
    progress_deadline_minutes: int | None
    operator_condition: bool


def render_key(image: str, spec: ExtensionSpec) -> RenderKey:
    return RenderKey(
        image=image,
        namespace=spec.namespace,
        # A copy: orjson's result keeps the buffer it was written into (4 KiB at least), and a key
        # lives as long as its extension.
        config=bytes(memoryview(orjson.dumps(spec.config, option=orjson.OPT_SORT_KEYS))),
        progress_deadline_minutes=spec.progress_deadline_minutes,
        operator_condition=spec.upgrade.operator_condition,
    )


@functools.cache
def _source_digest() -> str:
    """OLM's Python source, every file by its path in the package: what renders and packs."""
    root = Path(olm.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def renderer(*, system_namespace: str, bundle_webhooks: bool) -> str:
    """What renders and packs besides a `RenderKey`'s inputs, fixed for a process's life: OLM's
    code and the settings the content depends on."""
    settings = {
        "source": _source_digest(),
        "version": version.installed(),
        "systemNamespace": system_namespace,
        "webhooks": bundle_webhooks,
    }
    return hashlib.sha256(orjson.dumps(settings, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True)
class Rendered:
    """What a render produced that a steady reconcile still needs without rendering."""

    digest: str
    properties: str | None
    """The bundle's `olm.properties` (the revision's annotation of that name)."""


class RenderMemo:
    """The content digest (and bundle properties) last computed per extension, with the key it was
    computed from; one entry per extension, dropped with it."""

    def __init__(self) -> None:
        self._rendered: dict[str, tuple[RenderKey, Rendered]] = {}

    def remember(self, extension: str, key: RenderKey, rendered: Rendered) -> None:
        self._rendered[extension] = (key, rendered)

    def lookup(self, extension: str, key: RenderKey) -> Rendered | None:
        """What was remembered for `extension` if it was computed from `key`, else None."""
        found = self._rendered.get(extension)
        if found is None or found[0] != key:
            return None
        return found[1]

    def forget(self, extension: str) -> None:
        self._rendered.pop(extension, None)


def stored_key(key: RenderKey, renderer: str, rendered: Rendered) -> str:
    """What a revision records of the render that produced it (the `render-key` annotation): a
    digest of the key's inputs, the renderer, and what the render produced, the content digest and
    the properties, which the revision carries in annotations of their own. So the record vouches
    for those annotations too: one edited or removed no longer matches it."""
    # Every field of the key, by its own list: a field added to `RenderKey` is recorded too.
    inputs = {**dataclasses.asdict(key), "config": key.config.decode(), "renderer": renderer}
    inputs |= {"digest": rendered.digest, "properties": rendered.properties}
    return "sha256:" + hashlib.sha256(orjson.dumps(inputs, option=orjson.OPT_SORT_KEYS)).hexdigest()


def recorded(revision: Revision, key: RenderKey, renderer: str) -> Rendered | None:
    """What rendering `key` produced, as `revision` records it when this renderer rendered it from
    that key (and its content digest and properties annotations are as the render left them), else
    None."""
    annotations = revision.object.get("metadata", {}).get("annotations") or {}
    rendered = Rendered(digest=revision.digest, properties=annotations.get(names.PROPERTIES_ANNOTATION))
    matches = annotations.get(names.RENDER_KEY_ANNOTATION) == stored_key(key, renderer, rendered)
    return rendered if revision.digest and matches else None
