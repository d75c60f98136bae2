from konnectz_contracts.broker_token import (
    derived_key,
    forget_resource_uid,
    konnect_token,
    remember_resource_uid,
    token_for,
)


def test_a_token_opens_one_konnect_of_one_resource_only():
    key = "k" * 40
    assert konnect_token(key, 7, "uid-a") == konnect_token(key, 7, "uid-a")
    assert konnect_token(key, 7, "uid-a") != konnect_token(key, 8, "uid-a")
    assert konnect_token(key, 7, "uid-a") != konnect_token("other" * 8, 7, "uid-a")
    # A copy of the Konnect (another uid) gets another token; no resource (make dev) is "".
    assert konnect_token(key, 7, "uid-a") != konnect_token(key, 7, "uid-b") != konnect_token(key, 7, "")


def test_a_runner_of_one_konnect_uses_its_token_and_a_pool_runner_derives_it():
    assert token_for(7, {"KONNECTZ_CREDENTIALS_TOKEN": "given"}) == "given"
    assert token_for(7, {"KONNECTZ_CREDENTIALS_KEY": "key"}) == konnect_token("key", 7, "")
    assert token_for(7, {}) is None
    # The shared pool: bound to the uid the operator handed over with the flow.
    remember_resource_uid(7, "uid-7")
    try:
        assert token_for(7, {"KONNECTZ_CREDENTIALS_KEY": "key"}) == konnect_token("key", 7, "uid-7")
        assert token_for(8, {"KONNECTZ_CREDENTIALS_KEY": "key"}) == konnect_token("key", 8, "")
    finally:
        forget_resource_uid(7)
    assert token_for(7, {"KONNECTZ_CREDENTIALS_KEY": "key"}) == konnect_token("key", 7, "")


def test_the_default_key_is_not_the_signing_key():
    assert derived_key("secret") not in ("secret", "")
    assert derived_key("secret") == derived_key("secret") != derived_key("other")
