"""JetStream key-value buckets a runner opens for itself (made when missing, safe to race)."""

from __future__ import annotations

import logging

from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BadRequestError, BucketNotFoundError
from nats.js.kv import KeyValue

from konnectz_contracts.limits import kv_max_bytes

__all__ = ["STREAM_NAME_IN_USE", "ensure_bucket_settings", "kv_config", "open_bucket"]

log = logging.getLogger(__name__)

#: The JetStream error code when another process made the bucket's stream first.
STREAM_NAME_IN_USE = 10058


def kv_config(bucket: str, *, ttl: float | None = None, replicas: int = 1) -> KeyValueConfig:
    """Bucket ``bucket`` as Konnectz makes it: one value per key, on file, entries expiring ``ttl``
    seconds after a write (None: never), on ``replicas`` servers, at most its
    :data:`~konnectz_contracts.limits.KV_MAX_BYTES`."""
    bound = kv_max_bytes(bucket)
    return KeyValueConfig(
        bucket=bucket,
        history=1,
        ttl=ttl,
        storage=StorageType.FILE,
        replicas=replicas,
        max_bytes=bound if bound is not None else -1,
    )


async def ensure_bucket_settings(js: JetStreamContext, stream: str, replicas: int) -> None:
    """Bring the existing stream ``stream`` (a bucket ``B`` is the stream ``KV_B``) to ``replicas``
    servers and, for a bucket, to its size bound (:func:`kv_config`)."""
    config = (await js.stream_info(stream)).config
    bound = kv_max_bytes(stream.removeprefix("KV_")) if stream.startswith("KV_") else None
    max_bytes = config.max_bytes if bound is None else bound
    if config.num_replicas == replicas and config.max_bytes == max_bytes:
        return
    current, config.num_replicas, config.max_bytes = config.num_replicas, replicas, max_bytes
    try:
        await js.update_stream(config)
    except Exception as exc:
        if current == replicas:  # only the bound: the bucket works as it is
            log.warning("Stream %s: its size bound could not be applied (%s)", stream, exc or type(exc).__name__)
            return
        raise RuntimeError(
            f"Stream {stream}: its replicas could not be changed from {current} to {replicas} "
            f"(KONNECTZ_NATS_REPLICAS; a JetStream cluster of at least that many servers is needed): "
            f"{exc or type(exc).__name__}"
        ) from exc


async def open_bucket(js: JetStreamContext, bucket: str, ttl: float, replicas: int = 1) -> KeyValue:
    """The bucket ``bucket`` on ``replicas`` servers, made if missing (one value per key, on file, entries
    expiring ``ttl`` seconds after a write); when another process makes it at the same time, that one is used."""
    try:
        kv = await js.key_value(bucket)
    except BucketNotFoundError:
        pass
    else:
        await ensure_bucket_settings(js, f"KV_{bucket}", replicas)
        return kv
    try:
        return await js.create_key_value(kv_config(bucket, ttl=ttl, replicas=replicas))
    except BadRequestError as exc:
        if exc.err_code != STREAM_NAME_IN_USE:
            raise
        return await js.key_value(bucket)
