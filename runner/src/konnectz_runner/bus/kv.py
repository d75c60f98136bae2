"""JetStream key-value buckets a runner opens for itself (made when missing, safe to race)."""

from __future__ import annotations

from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BadRequestError, BucketNotFoundError
from nats.js.kv import KeyValue

__all__ = ["STREAM_NAME_IN_USE", "open_bucket"]

#: The JetStream error code when another process made the bucket's stream first.
STREAM_NAME_IN_USE = 10058


async def open_bucket(js: JetStreamContext, bucket: str, ttl: float) -> KeyValue:
    """The bucket ``bucket``, made if missing (one value per key, on file, entries expiring ``ttl``
    seconds after a write); when another process makes it at the same time, that one is used."""
    try:
        return await js.key_value(bucket)
    except BucketNotFoundError:
        pass
    try:
        return await js.create_key_value(KeyValueConfig(bucket=bucket, history=1, ttl=ttl, storage=StorageType.FILE))
    except BadRequestError as exc:
        if exc.err_code != STREAM_NAME_IN_USE:
            raise
        return await js.key_value(bucket)
