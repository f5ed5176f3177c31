"""Work queues for controllers: deduplicating, delaying and rate-limited, on asyncio.

The model is client-go's. Producers (event handlers, timers, the worker itself on failure) `add` keys;
workers loop on `item = await queue.get()`, process it, and call `queue.done(item)`. A queue is a
FIFO of distinct items plus two books: `dirty` (items that need processing) and `processing` (items
handed out and not yet done). Items must be hashable; they are compared by equality, so use small
immutable keys (a namespace/name pair), never the objects themselves.

What the queue promises:

- **Fair**: distinct items are handed out in the order they were first added (FIFO). Waiting `get`
  calls are woken in the order they started waiting.
- **Stingy**: an item added many times before a worker takes it is handed out once.
- **One worker per item**: an item is never handed to a second worker while the first has not
  called `done` for it.
- **No lost adds**: an item added while it is being processed is handed out again after `done`,
  at the back of the queue.
- **Delays** (`DelayingQueue.add_after`): the item is added once its delay has passed; a delay of
  zero or less adds it at once; of two delays for one waiting item, the earlier deadline wins.
- **Retries** (`RateLimitingQueue.add_rate_limited`): the item is added after the delay its rate
  limiter gives; `forget` resets that memory and `num_requeues` reports it. The default limiter is
  client-go's: the slower of per-item exponential backoff (5 ms doubling to 1000 s) and an overall
  bucket of 10 retries per second with a burst of 100.
- **Shutdown**: after `shut_down()` adds are ignored, delayed items are dropped and every `get`
  raises `ShutDown`, at once, even if items are still queued (unlike client-go, whose workers keep
  taking queued items until it is empty: a level-based controller gets them again from its next
  list). `shut_down_with_drain()` does the same and then waits until each item in flight is `done`.

What it does not promise:

- No order between different items beyond FIFO hand-out: two workers finish in any order, and a
  delayed or re-added item takes its place at the back.
- No persistence: items live in memory and are gone with the process.
- No thread safety: a queue belongs to one event loop; only `statistics()` may be read from
  another thread.

Time comes from an `olm_runtime.clock.Clock` (`FakeClock` in tests). A queue created with a `name`
reports the `workqueue_*` families (`WorkqueueMetrics`, on the runtime's registry unless given
another); one without a name records none. `statistics()` gives a `Statistics` snapshot, which the
metrics read at scrape time.
"""

from olm_runtime.workqueue._delaying import DelayingQueue
from olm_runtime.workqueue._limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)
from olm_runtime.workqueue._metrics import WorkqueueMetrics
from olm_runtime.workqueue._queue import Queue, ShutDown, Statistics
from olm_runtime.workqueue._rate_limiting import RateLimitingQueue

__all__ = [
    "BucketRateLimiter",
    "DelayingQueue",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "Queue",
    "RateLimiter",
    "RateLimitingQueue",
    "ShutDown",
    "Statistics",
    "WorkqueueMetrics",
    "default_controller_rate_limiter",
]
