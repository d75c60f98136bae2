"""JetStream key-value buckets a runner opens for itself (made when missing, safe to race)."""

from __future__ import annotations

from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BadRequestError, BucketNotFoundError
from nats.js.kv import KeyValue

__all__ = ["STREAM_NAME_IN_USE", "ensure_replicas", "open_bucket"]

#: The JetStream error code when another process made the bucket's stream first.
STREAM_NAME_IN_USE = 10058


async def ensure_replicas(js: JetStreamContext, stream: str, replicas: int) -> None:
    """Bring the existing stream ``stream`` (a bucket ``B`` is the stream ``KV_B``) to ``replicas`` servers."""
    config = (await js.stream_info(stream)).config
    if config.num_replicas == replicas:
        return
    current, config.num_replicas = config.num_replicas, replicas
    try:
        await js.update_stream(config)
    except Exception as exc:
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
        await ensure_replicas(js, f"KV_{bucket}", replicas)
        return kv
    try:
        config = KeyValueConfig(bucket=bucket, history=1, ttl=ttl, storage=StorageType.FILE, replicas=replicas)
        return await js.create_key_value(config)
    except BadRequestError as exc:
        if exc.err_code != STREAM_NAME_IN_USE:
            raise
        return await js.key_value(bucket)
