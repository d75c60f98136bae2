"""Webhook capture for the editor ("Capture Response"), before or after publishing.

The api's capture call marks a konnect's webhook token as *capturing*: key ``capture.<token>`` in
the ``KZ_CAPTURING`` KV bucket, value a :class:`~konnectz_contracts.capture.CaptureWindow` (konnect id and
since when). The bucket's entries expire after :data:`CAPTURE_TTL_SECONDS`; the editor polls every 7 seconds and
each poll renews the window.

When ``/hooks/<token>`` receives a request for a capturing token, the runner reads it exactly as a
run's trigger output (:func:`konnectz_runner.ingress.webhook.read_trigger_output`) and stores a
:class:`CapturedRequest` on ``kz.captures.<konnect_id>`` in the ``KZ_CAPTURES`` stream (one message
per subject is kept, for :data:`CAPTURE_TTL_SECONDS`). A draft's token is only served this way
while it is capturing: otherwise it is an unknown webhook (404). A published konnect's token
also starts its run as usual.

The api reads the newest captured request with :func:`last_capture`; one received before the
window opened is ignored.
"""

from __future__ import annotations

from datetime import UTC, datetime

from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, PubAck, StorageType, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError, KeyNotFoundError, NotFoundError
from nats.js.kv import KeyValue

from konnectz_contracts.capture import (
    CAPTURE_TTL_SECONDS,
    KV_CAPTURING,
    MAX_CAPTURE_BYTES,
    STREAM_CAPTURES,
    SUBJECTS_CAPTURES,
    CapturedRequest,
    CaptureWindow,
    capture_subject,
    valid_token,
)
from konnectz_contracts.limits import CAPTURE_MSG_MAX_BYTES
from konnectz_runner.bus.kv import ensure_bucket_settings, kv_config

__all__ = [
    "capturing",
    "close_window",
    "ensure_capture",
    "last_capture",
    "open_window",
    "publish_capture",
]

_STREAM_NAME_IN_USE = 10058


def _key(token: str) -> str:
    return f"capture.{token}"


async def ensure_capture(js: JetStreamContext, replicas: int = 1) -> None:
    """Create the KZ_CAPTURES stream and the KZ_CAPTURING bucket if missing, on ``replicas`` servers;
    bring existing ones to ``replicas``."""
    try:
        await js.stream_info(STREAM_CAPTURES)
        await ensure_bucket_settings(js, STREAM_CAPTURES, replicas)
    except NotFoundError:
        try:
            await js.add_stream(
                StreamConfig(
                    name=STREAM_CAPTURES,
                    subjects=[SUBJECTS_CAPTURES],
                    storage=StorageType.FILE,
                    max_msgs_per_subject=1,
                    max_msg_size=CAPTURE_MSG_MAX_BYTES,
                    max_age=CAPTURE_TTL_SECONDS,
                    max_bytes=MAX_CAPTURE_BYTES,
                    discard=DiscardPolicy.OLD,
                    num_replicas=replicas,
                )
            )
        except BadRequestError as exc:
            if exc.err_code != _STREAM_NAME_IN_USE:
                raise
    try:
        await js.key_value(KV_CAPTURING)
        await ensure_bucket_settings(js, f"KV_{KV_CAPTURING}", replicas)
    except BucketNotFoundError:
        try:
            await js.create_key_value(kv_config(KV_CAPTURING, ttl=CAPTURE_TTL_SECONDS, replicas=replicas))
        except BadRequestError as exc:
            if exc.err_code != _STREAM_NAME_IN_USE:
                raise


async def capturing(js: JetStreamContext, token: str, kv: KeyValue | None = None) -> CaptureWindow | None:
    """The open capture window of ``token``, or None. Pass the bucket's ``kv`` handle to save a
    round trip (opening the bucket asks the server for its stream)."""
    if not valid_token(token):
        return None
    if kv is None:
        kv = await js.key_value(KV_CAPTURING)
    try:
        entry = await kv.get(_key(token))
    except KeyNotFoundError:
        return None
    if not entry.value:
        return None
    return CaptureWindow.model_validate_json(entry.value)


async def open_window(js: JetStreamContext, token: str, konnect_id: int) -> CaptureWindow:
    """Open (or renew, keeping its start) the capture window of a konnect's token."""
    window = await capturing(js, token)
    if window is None or window.konnect_id != konnect_id:
        window = CaptureWindow(konnect_id=konnect_id, since=datetime.now(UTC))
    kv = await js.key_value(KV_CAPTURING)
    await kv.put(_key(token), window.model_dump_json().encode())
    return window


async def close_window(js: JetStreamContext, token: str) -> None:
    kv = await js.key_value(KV_CAPTURING)
    try:
        await kv.delete(_key(token))
    except KeyNotFoundError:
        pass


async def publish_capture(js: JetStreamContext, captured: CapturedRequest) -> PubAck:
    return await js.publish(
        capture_subject(captured.konnect_id),
        captured.model_dump_json().encode(),
        timeout=5.0,
        stream=STREAM_CAPTURES,
    )


async def last_capture(js: JetStreamContext, konnect_id: int, since: datetime) -> CapturedRequest | None:
    """The newest request captured for ``konnect_id`` at or after ``since``."""
    try:
        msg = await js.get_last_msg(STREAM_CAPTURES, capture_subject(konnect_id))
    except NotFoundError:
        return None
    if not msg.data:
        return None
    captured = CapturedRequest.model_validate_json(msg.data)
    return captured if captured.received_at >= since else None


class CaptureCache:
    """The open capture windows, followed by watching the KZ_CAPTURING bucket, so a webhook does not
    ask NATS on every request. A window not renewed for :data:`CAPTURE_TTL_SECONDS` is gone (the
    bucket expires it without telling watchers)."""

    def __init__(self) -> None:
        self._windows: dict[str, tuple[CaptureWindow, float]] = {}
        self.ready = False

    def get(self, token: str) -> CaptureWindow | None:
        import time

        found = self._windows.get(token)
        if found is None:
            return None
        window, seen = found
        if time.monotonic() - seen > CAPTURE_TTL_SECONDS:
            self._windows.pop(token, None)
            return None
        return window

    async def follow(self, kv: KeyValue) -> None:
        """Follow the bucket until cancelled (the caller restarts it after a failure)."""
        import time

        from nats.js.kv import KV_DEL, KV_PURGE

        self.ready = False
        fresh: dict[str, tuple[CaptureWindow, float]] = {}
        loading = True
        watcher = await kv.watchall()
        try:
            async for entry in watcher:
                if entry is None:
                    if loading:
                        self._windows = fresh
                        self.ready = True
                        loading = False
                    continue
                target = fresh if loading else self._windows
                token = entry.key.removeprefix("capture.")
                if entry.operation in (KV_DEL, KV_PURGE) or not entry.value:
                    target.pop(token, None)
                    continue
                try:
                    target[token] = (CaptureWindow.model_validate_json(entry.value), time.monotonic())
                except ValueError:
                    target.pop(token, None)
        finally:
            self.ready = False
            try:
                await watcher.stop()
            except Exception:  # noqa: S110 - the connection may already be gone
                pass
