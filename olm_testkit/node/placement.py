"""Which Pods land on a real node: it registers with a NoSchedule taint (`TAINT_KEY`) and the label
`NODE_LABEL=real`, and `placement_annotations()` makes a whole namespace ask for it (through the
PodNodeSelector and PodTolerationRestriction admission plugins the control plane enables)."""

from __future__ import annotations

import json

NODE_LABEL = "olm-py.dev/node"
TAINT_KEY = "olm-py.dev/real-node"


def placement_annotations() -> dict[str, str]:
    """Namespace annotations that put every Pod of the namespace on the real nodes."""
    return {
        "scheduler.alpha.kubernetes.io/node-selector": f"{NODE_LABEL}=real",
        "scheduler.alpha.kubernetes.io/defaultTolerations": json.dumps(
            [{"key": TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]
        ),
    }
