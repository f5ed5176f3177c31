"""Controllers: level-based reconcilers fed by a deduplicating, rate-limited queue of keys.

The model (controller-runtime's): sources (informers of the shared cache, in-process channels)
produce events; each watch's predicates filter them and its handler maps them to `Request`s
(namespace/name keys); the controller's `workqueue.RateLimitingQueue` merges duplicates; workers
call `Reconciler.reconcile(request)`, which reads the current state and makes the world match it.

Promises:

- one key is never reconciled by two workers at once, however many workers there are;
- a key added while it is being reconciled is reconciled again afterwards (no event is lost);
- a raised exception retries the key with per-key exponential backoff; `TerminalError` does not
  retry; `Result(requeue_after=s)` comes back after `s` seconds; `Result()` is done;
- workers start only after every source has delivered its initial state;
- on cancellation the controller stops taking keys and lets in-flight reconciles finish.

Not promised: any order across different keys, or that every intermediate state of an object is
seen (reconcilers get keys, not events: read the current state).

A reconciler with several stages writes them as `Steps`: named async steps over one state object,
run in order until one returns `STOP`, each timed and wrapped in a tracing span.

The front door is `Builder(manager).for_(kind).owns(other).complete(reconciler)`; each step's
docstring names the lower-level pieces it wires (`source.Kind`, `handler.enqueue_owner`, ...).
"""

from olm_runtime.controller import event, handler, predicate, source, steps
from olm_runtime.controller._controller import EXPECTED_ERRORS, Controller, Options
from olm_runtime.controller.builder import Builder
from olm_runtime.controller.reconcile import (
    Reconciler,
    ReconcilerFunc,
    Request,
    Result,
    RetryableError,
    TerminalError,
)
from olm_runtime.controller.steps import CONTINUE, STOP, Next, Steps

__all__ = [
    "CONTINUE",
    "EXPECTED_ERRORS",
    "STOP",
    "Builder",
    "Controller",
    "Next",
    "Options",
    "Reconciler",
    "ReconcilerFunc",
    "Request",
    "Result",
    "RetryableError",
    "Steps",
    "TerminalError",
    "event",
    "handler",
    "predicate",
    "source",
    "steps",
]
