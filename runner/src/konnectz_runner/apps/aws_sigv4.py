"""The ``aws_sigv4`` hook: sign an app request with AWS Signature Version 4 (botocore's signer).

AWS apps name the hook in their manifest; their accounts hold ``access_key_id``,
``secret_access_key``, ``region`` (and optionally ``session_token``). The signing name is
``auth.aws_service`` (the document's ``x-aws-signingName``) or else the first label of the host
(``qldb.us-east-1.amazonaws.com`` → ``qldb``). The request is signed as it will be sent: method,
URL with its query, the headers the app request sets (not httpx's transport defaults) and the
body; the signature headers (``Authorization``, ``X-Amz-Date``, ``X-Amz-Content-SHA256``,
``X-Amz-Security-Token``) are added to the httpx request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from konnectz_contracts.errors import StepError

__all__ = ["SIGNATURE_HEADERS", "sign", "signer", "signing_name"]

SIGNATURE_HEADERS = ("Authorization", "X-Amz-Date", "X-Amz-Content-SHA256", "X-Amz-Security-Token")
# Set by httpx at send time or by proxies on the way: never part of the signature.
_UNSIGNED = frozenset({"accept", "accept-encoding", "connection", "user-agent", "content-length", "expect"})


def signing_name(url: str, service: str | None = None) -> str:
    """The service name to sign for: the manifest's, else the first label of the host."""
    if service:
        return service
    host = urlsplit(url).hostname or ""
    return host.split(".", 1)[0]


def sign(
    request: httpx.Request, *, access_key: str, secret_key: str, region: str, service: str, token: str | None = None
) -> None:
    """Add the Signature V4 headers to ``request`` (in place)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    headers = {k: v for k, v in request.headers.items() if k.lower() not in _UNSIGNED and k.lower() != "host"}
    aws = AWSRequest(method=request.method, url=str(request.url), data=request.content or b"", headers=headers)
    SigV4Auth(Credentials(access_key, secret_key, token or None), service, region).add_auth(aws)
    for name in SIGNATURE_HEADERS:
        value = aws.headers.get(name)
        if value is not None:
            request.headers[name] = value


def signer(credentials: dict[str, Any], url: str, service: str | None) -> Callable[[httpx.Request], None]:
    """A function that signs a built request with an account's AWS credentials."""
    access_key = str(credentials.get("access_key_id") or "").strip()
    secret_key = str(credentials.get("secret_access_key") or "").strip()
    region = str(credentials.get("region") or "us-east-1").strip()
    if not access_key or not secret_key:
        raise StepError("AWS requests need the account's Access Key ID and Secret Access Key")
    name = signing_name(url, service)
    token = str(credentials.get("session_token") or "") or None

    def _sign(request: httpx.Request) -> None:
        sign(request, access_key=access_key, secret_key=secret_key, region=region, service=name, token=token)

    return _sign
