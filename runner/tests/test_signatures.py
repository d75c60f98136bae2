"""Signatures of app webhook deliveries: GitHub's X-Hub-Signature-256 and Stripe's Stripe-Signature,
checked against values computed the way each app documents them."""

from __future__ import annotations

import hashlib
import hmac

from konnectz_contracts.manifest import Signature
from konnectz_runner.ingress.signatures import sign, verify_signature

GITHUB = Signature(header="X-Hub-Signature-256", prefix="sha256=", secret="{{subscription.secret}}")
STRIPE = Signature(scheme="stripe", header="Stripe-Signature", secret="{{subscription.secret}}")
BODY = b'{"action":"opened","issue":{"number":1}}'


def test_github_signature() -> None:
    # GitHub's documented example: secret "It's a Secret to Everybody", payload "Hello, World!".
    documented = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert verify_signature(GITHUB, "It's a Secret to Everybody", {"X-Hub-Signature-256": documented},
                            b"Hello, World!", now=0)  # fmt: skip
    good = "sha256=" + hmac.new(b"s3cret", BODY, hashlib.sha256).hexdigest()
    assert sign(GITHUB, "s3cret", BODY) == good
    assert verify_signature(GITHUB, "s3cret", {"x-hub-signature-256": good}, BODY, now=0)
    assert not verify_signature(GITHUB, "other", {"X-Hub-Signature-256": good}, BODY, now=0)
    assert not verify_signature(GITHUB, "s3cret", {"X-Hub-Signature-256": good}, BODY + b" ", now=0)
    assert not verify_signature(GITHUB, "s3cret", {}, BODY, now=0)
    assert not verify_signature(GITHUB, "s3cret", {"X-Hub-Signature-256": good[7:]}, BODY, now=0)  # no prefix
    assert not verify_signature(GITHUB, "", {"X-Hub-Signature-256": good}, BODY, now=0)


def test_stripe_signature() -> None:
    now = 1_700_000_000
    digest = hmac.new(b"whsec_abc", f"{now}.".encode() + BODY, hashlib.sha256).hexdigest()
    header = f"t={now},v1={digest}"
    assert sign(STRIPE, "whsec_abc", BODY, timestamp=now) == header
    assert verify_signature(STRIPE, "whsec_abc", {"Stripe-Signature": header}, BODY, now=now + 10)
    # Rolling secrets: one of several v1 values matches; a v0 (test mode) value is ignored.
    rolled = f"t={now},v1={'0' * 64},v0=ignored,v1={digest}"
    assert verify_signature(STRIPE, "whsec_abc", {"Stripe-Signature": rolled}, BODY, now=now)
    assert not verify_signature(STRIPE, "whsec_abc", {"Stripe-Signature": header}, BODY, now=now + 301)  # replayed
    assert not verify_signature(STRIPE, "whsec_other", {"Stripe-Signature": header}, BODY, now=now)
    for bad in ("", f"v1={digest}", f"t=abc,v1={digest}", f"t={now}", f"t={now},t={now},v1={digest}", "x" * 5000):
        assert not verify_signature(STRIPE, "whsec_abc", {"Stripe-Signature": bad}, BODY, now=now), bad


def test_timestamped_payload_like_slack() -> None:
    slack = Signature(header="X-Slack-Signature", prefix="v0=", secret="{{auth.signing_secret}}",
                      signed_payload="v0:{{headers.x-slack-request-timestamp}}:{{body}}",
                      timestamp_header="X-Slack-Request-Timestamp")  # fmt: skip
    now = 1_531_420_618
    expected = "v0=" + hmac.new(b"shh", f"v0:{now}:".encode() + BODY, hashlib.sha256).hexdigest()
    headers = {"X-Slack-Request-Timestamp": str(now), "X-Slack-Signature": expected}
    assert sign(slack, "shh", BODY, headers=headers) == expected
    assert verify_signature(slack, "shh", headers, BODY, now=now + 60)
    assert not verify_signature(slack, "shh", headers, BODY, now=now + 3600)


async def test_secrets_are_cached_and_read_again_at_most_every_min_refresh() -> None:
    from konnectz_runner.ingress.webhook_secrets import SecretCache, secret_url

    calls: list[int] = []

    async def source(konnect_id: int) -> str:
        calls.append(konnect_id)
        return f"secret-{len(calls)}"

    cache = SecretCache(source, ttl=300, min_refresh=60)
    assert await cache.get(7) == "secret-1" and await cache.get(7) == "secret-1"
    # A delivery that did not verify asks again, but not more often than min_refresh.
    assert await cache.get(7, refresh=True) == "secret-1" and calls == [7]
    eager = SecretCache(source, ttl=300, min_refresh=0)
    assert await eager.get(8) == "secret-2" and await eager.get(8, refresh=True) == "secret-3"
    assert secret_url("http://api/api/v1/internal/credentials") == "http://api/api/v1/internal/webhook_secret"
