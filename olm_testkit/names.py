"""Names that no other test of the session uses: tests share one control plane and one registry,
and isolate themselves by name and namespace."""

from __future__ import annotations

import uuid


def unique(prefix: str) -> str:
    """`<prefix>-<8 hex digits>`: unique for the session, and short enough for a label value when
    `prefix` is (at most 54 characters)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
