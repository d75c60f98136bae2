"""Outbound HTTP for steps: guarded, redirect-safe, size-limited.

- Every URL, and every redirect hop (at most :data:`MAX_REDIRECTS`), is checked by the
  :class:`~konnectz_runner.apps.netguard.NetGuard`; httpx is never left to follow redirects itself.
- A redirect to another origin (scheme, host or port differs) drops every secret header: the
  well-known credential headers (:data:`SECRET_HEADERS`), any header whose name contains
  ``token``, ``secret``, ``key`` or ``auth`` (:func:`is_secret_header`), and the headers the
  user marked secret. The same headers are redacted in task logs.
- Retries only when no connection could be made (nothing was sent, so repeating cannot
  duplicate an effect): :data:`CONNECT_ATTEMPTS` tries with a short exponential backoff.
  Timeouts after connecting and HTTP errors are not retried.
- Responses larger than the limit are a :class:`~konnectz_contracts.errors.StepError`.
- No cookies are kept (:func:`step_client`): one client serves the runs of every konnect and owner,
  so a cookie one API set must never ride along on another flow's request.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from http.cookiejar import CookieJar, CookiePolicy
from typing import Any

import httpx

from konnectz_contracts.errors import ConnectFailed, StepError, TimedOut
from konnectz_runner.apps.netguard import NetGuard

__all__ = [
    "CONNECT_ATTEMPTS",
    "MAX_REDIRECTS",
    "MAX_RESPONSE_BYTES",
    "REDACTED",
    "SECRET_HEADERS",
    "display_url",
    "is_secret_header",
    "parse_body",
    "recorded_headers",
    "send",
    "step_client",
]

MAX_REDIRECTS = 5
CONNECT_ATTEMPTS = 3
CONNECT_BACKOFF_SECONDS = 0.25  # 0.25 s, then 0.5 s
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
ERROR_BODY_CHARS = 200
REDACTED = "***"
# Credential headers: never written to task logs, never sent to another origin on a redirect.
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"})
# Header names that look like they carry a credential (X-Auth-Token, X-Client-Secret, X-Access-Key).
_SECRET_NAME = re.compile(r"token|secret|key|auth", re.IGNORECASE)
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})


class _NoCookies(CookiePolicy):
    """Accepts no cookie and returns none."""

    netscape = True
    rfc2965 = False
    hide_cookie2 = True

    def set_ok(self, cookie: Any, request: Any) -> bool:
        return False

    def return_ok(self, cookie: Any, request: Any) -> bool:
        return False

    def domain_return_ok(self, domain: str, request: Any) -> bool:
        return False

    def path_return_ok(self, path: str, request: Any) -> bool:
        return False


class _NoCookieStore(httpx.Cookies):
    """An always-empty cookie store that does not even read Set-Cookie (httpx parses every reply's
    cookies into its jar, about 25 us a response, before a refusing policy drops them)."""

    def __init__(self) -> None:
        super().__init__(CookieJar(policy=_NoCookies()))

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class _StepClient(httpx.AsyncClient):
    _no_cookies = _NoCookieStore()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:  # httpx's __init__ sets the (empty) default
        return None


def step_client(transport: httpx.AsyncBaseTransport, *, timeout: float, user_agent: str) -> httpx.AsyncClient:
    """The HTTP client the steps share: never follows redirects itself (:func:`send` does, checking
    each hop), keeps no cookies between requests."""
    return _StepClient(transport=transport, timeout=timeout, follow_redirects=False, headers={"User-Agent": user_agent})


def is_secret_header(name: str, marked: Iterable[str] = ()) -> bool:
    """True for a credential header: a well-known one, a name that looks like one, or one in ``marked``."""
    lowered = name.lower()
    return lowered in SECRET_HEADERS or bool(_SECRET_NAME.search(lowered)) or lowered in {m.lower() for m in marked}


def display_url(url: httpx.URL) -> str:
    """Scheme, host and path only: query strings often carry keys."""
    return str(url.copy_with(query=None, fragment=None))


def retry_after_seconds(response: httpx.Response) -> float | None:
    """The seconds the response's ``Retry-After`` asks for (a number of seconds or an HTTP date);
    None when it has none or it cannot be read."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def parse_body(response: httpx.Response, content: bytes) -> Any:
    text = content.decode(response.encoding or "utf-8", errors="replace")
    if not text:
        return ""
    content_type = response.headers.get("content-type", "").lower()
    if "json" in content_type:
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


async def _read_limited(response: httpx.Response, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise StepError(f"Response from {display_url(response.url)} is larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _send_once(http: httpx.AsyncClient, request: httpx.Request, limit: int) -> tuple[httpx.Response, bytes]:
    def display() -> str:  # only for a failure: building it costs more than a request's own checks
        return display_url(request.url)

    for attempt in range(1, CONNECT_ATTEMPTS + 1):
        try:
            response = await http.send(request, stream=True, follow_redirects=False)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            failure = ConnectFailed(f"Could not connect to {display()}: {exc or type(exc).__name__}")
            if attempt == CONNECT_ATTEMPTS:
                raise failure from exc
            await asyncio.sleep(CONNECT_BACKOFF_SECONDS * 2 ** (attempt - 1))
            continue
        except httpx.TimeoutException as exc:
            raise TimedOut(f"Timed out calling {display()} ({type(exc).__name__})") from exc
        except httpx.RequestError as exc:
            raise StepError(f"Could not call {display()}: {exc or type(exc).__name__}") from exc
        try:
            content = await _read_limited(response, limit)
        except httpx.TimeoutException as exc:
            raise TimedOut(f"Timed out reading the response of {display()} ({type(exc).__name__})") from exc
        except httpx.RequestError as exc:
            raise StepError(f"Could not read the response of {display()}: {exc}") from exc
        finally:
            await response.aclose()
        return response, content
    raise AssertionError("unreachable")


def _redirect(
    request: httpx.Request, response: httpx.Response, secret_headers: Iterable[str] = ()
) -> httpx.Request | None:
    """The next request of a redirect (as browsers and httpx build it), or None if it is not one."""
    location = response.headers.get("location")
    if response.status_code not in _REDIRECT_CODES or not location:
        return None
    try:
        url = request.url.join(location)
    except httpx.InvalidURL as exc:
        raise StepError(f"Invalid redirect location {location!r} from {display_url(request.url)}") from exc
    method = request.method
    if response.status_code == 303 and method != "HEAD":
        method = "GET"
    if response.status_code in (301, 302) and method == "POST":
        method = "GET"
    headers = httpx.Headers(request.headers)
    headers.pop("host", None)
    if url.scheme != request.url.scheme or url.host != request.url.host or url.port != request.url.port:
        # Never hand credentials to another origin.
        for name in [k for k in headers if is_secret_header(k, secret_headers)]:
            headers.pop(name, None)
    content: bytes | None = request.content
    if method != request.method:
        content = None
        for name in ("content-type", "content-length", "transfer-encoding"):
            headers.pop(name, None)
    return httpx.Request(method, url, headers=headers, content=content)


async def send(
    http: httpx.AsyncClient,
    guard: NetGuard,
    request: httpx.Request,
    limit: int,
    *,
    secret_headers: Iterable[str] = (),
) -> tuple[httpx.Response, bytes]:
    """Send ``request`` following redirects; ``secret_headers`` names extra headers the user marked secret."""
    marked = tuple(secret_headers)
    for _hop in range(MAX_REDIRECTS + 1):
        await guard.check_url(request.url)
        response, content = await _send_once(http, request, limit)
        following = _redirect(request, response, marked)
        if following is None:
            return response, content
        request = following
    raise StepError(f"Too many redirects (more than {MAX_REDIRECTS}) calling {display_url(request.url)}")


def recorded_headers(headers: dict[str, str], secret_headers: Iterable[str] = ()) -> dict[str, str]:
    """The headers as a task log shows them: secret values replaced by :data:`REDACTED`."""
    marked = tuple(secret_headers)
    return {k: (REDACTED if is_secret_header(k, marked) else v) for k, v in headers.items()}
