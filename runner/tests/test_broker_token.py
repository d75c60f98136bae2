from konnectz_contracts.broker_token import derived_key, konnect_token, token_for


def test_a_token_opens_one_konnect_only():
    key = "k" * 40
    assert konnect_token(key, 7) == konnect_token(key, 7)
    assert konnect_token(key, 7) != konnect_token(key, 8)
    assert konnect_token(key, 7) != konnect_token("other" * 8, 7)


def test_a_runner_of_one_konnect_uses_its_token_and_a_pool_runner_derives_it():
    assert token_for(7, {"KONNECTZ_CREDENTIALS_TOKEN": "given"}) == "given"
    assert token_for(7, {"KONNECTZ_CREDENTIALS_KEY": "key"}) == konnect_token("key", 7)
    assert token_for(7, {}) is None


def test_the_default_key_is_not_the_signing_key():
    assert derived_key("secret") not in ("secret", "")
    assert derived_key("secret") == derived_key("secret") != derived_key("other")
