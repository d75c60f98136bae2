"""The bus room: NATS JetStream, the runner's only shared state.

- :mod:`.connect`: connecting to NATS (and the steps' guarded transport, made at connect time);
- :mod:`.events`: the streams, buckets and consumer as Konnectz creates them; publishing runs and
  task events; :mod:`.kv`: buckets a runner opens for itself;
- :mod:`.active`: the run states ``KZ_ACTIVE`` and ``KZ_CANCELS``; :mod:`.timers`: durable timers;
  :mod:`.waits`: durable waits for a call (``KZ_WAITS``) and the revisions suspended runs resume on;
- :mod:`.capture`: the editor's webhook capture; :mod:`.registry`: which konnects this runner serves.

This face is what other rooms, the api and the tools may import (``from konnectz_runner.bus
import ...``); the modules above are the room's own.
"""

from konnectz_runner.bus.active import (
    LIST_LIMIT,
    ActiveWatch,
    CancelBook,
    cancel_requested,
    get_active,
    list_active,
    request_cancel,
)
from konnectz_runner.bus.active import buckets as run_state_buckets
from konnectz_runner.bus.active import clear as clear_active
from konnectz_runner.bus.active import mark as mark_active
from konnectz_runner.bus.active import wake as wake_waiting
from konnectz_runner.bus.capture import (
    CaptureCache,
    capturing,
    close_window,
    last_capture,
    open_window,
    publish_capture,
)
from konnectz_runner.bus.connect import USER_AGENT, connect_nats, outbound_transport
from konnectz_runner.bus.events import (
    ensure_streams,
    events_consumer_config,
    publish_event,
    publish_run,
    stream_configs,
)
from konnectz_runner.bus.kv import kv_config, open_bucket
from konnectz_runner.bus.registry import KonnectRegistry, load_spec_file, watch_konnects
from konnectz_runner.bus.timers import schedule_continuation
from konnectz_runner.bus.waits import (
    CallAnswer,
    decide_call,
    load_revision,
    remember_revision,
    store_waiting,
    wait_buckets,
    wait_status,
)
from konnectz_runner.bus.waits import on_delivery as wait_on_delivery

__all__ = [
    "LIST_LIMIT",
    "USER_AGENT",
    "ActiveWatch",
    "CallAnswer",
    "CancelBook",
    "CaptureCache",
    "KonnectRegistry",
    "cancel_requested",
    "capturing",
    "clear_active",
    "close_window",
    "connect_nats",
    "decide_call",
    "ensure_streams",
    "events_consumer_config",
    "get_active",
    "kv_config",
    "last_capture",
    "list_active",
    "load_revision",
    "load_spec_file",
    "mark_active",
    "open_bucket",
    "open_window",
    "outbound_transport",
    "publish_capture",
    "publish_event",
    "publish_run",
    "remember_revision",
    "request_cancel",
    "run_state_buckets",
    "schedule_continuation",
    "store_waiting",
    "stream_configs",
    "wait_buckets",
    "wait_on_delivery",
    "wait_status",
    "wake_waiting",
    "watch_konnects",
]
