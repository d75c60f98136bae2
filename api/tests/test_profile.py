from sqlalchemy import select

from konnectz_api.db import get_sessionmaker
from konnectz_api.models import User


def test_profile_update_keeps_the_locked_fields(client, api):
    email = api.signup_and_verify()
    h = api.login(email)
    body = {
        "first_name": " Grace ",
        "last_name": "Hopper",
        "country": "de",
        "timezone": "Europe/Berlin",
        "is_admin": True,
        "current_plan": "Agency",
        "free_task": 999999,
        "stripe_customer_id": "cus_x",
        "preferred_language": "fr",
        "image_url": "https://evil.example/x.png",
        "email": "other@example.com",
        "id": 1,
    }
    r = client.post("/api/v1/users/profile", json=body, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["key"] == "UPDATE_SUCCESS"
    p = client.get("/api/v1/users/profile", headers=h).json()
    assert (p["first_name"], p["last_name"], p["country"], p["timezone"]) == ("Grace", "Hopper", "DE", "Europe/Berlin")
    assert (p["is_admin"], p["current_plan"], p["preferred_language"], p["image_url"], p["email"]) == (
        False,
        "Free",
        "en",
        None,
        email,
    )
    # update_user is the same operation; unset fields stay as they are, null clears.
    r = client.post("/api/v1/users/update_user", json={"country": None}, headers=h)
    assert r.json()["profile"]["country"] is None and r.json()["profile"]["timezone"] == "Europe/Berlin"


def test_profile_update_refuses_bad_values(client, api):
    h = api.new_user()
    for bad in (
        {"country": "XX"},
        {"country": "Germany"},
        {"timezone": "Mars/Olympus"},
        {"timezone": "Europe/Berlin\x00"},
        {"first_name": "A\x00B"},
        {"first_name": ""},
        {"first_name": "x" * 101},
        {"first_name": 12},
        {"country": ["DE"]},
    ):
        r = client.post("/api/v1/users/profile", json=bad, headers=h)
        assert r.status_code == 422, (bad, r.text)
        assert r.json()["message"]
    assert client.post("/api/v1/users/profile", json={"first_name": "X"}).status_code == 401
    assert client.get("/api/v1/users/profile").status_code == 401


def test_profile_options_come_from_maintained_lists(client, api):
    h = api.new_user()
    opts = client.get("/api/v1/users/profile/options", headers=h).json()
    countries = {c["value"]: c["label"] for c in opts["countries"]}
    assert len(countries) > 240 and countries["DE"] == "Germany" and countries["JP"] == "Japan"
    zones = {z["value"]: z for z in opts["timezones"]}
    assert len(zones) > 300
    assert zones["Asia/Kolkata"]["label"] == "(GMT+05:30) Asia/Kolkata"
    assert zones["Asia/Kolkata"]["offset_minutes"] == 330
    # The spec's form first: GMT offsets (with places that use them now), then IANA zones; each sorted.
    gmt = [z for z in opts["timezones"] if z["value"].startswith("GMT")]
    iana = [z for z in opts["timezones"] if not z["value"].startswith("GMT")]
    assert opts["timezones"] == gmt + iana
    assert {"GMT+05:30", "GMT-03:00", "GMT+00:00", "GMT+05:45"} <= {z["value"] for z in gmt}
    kolkata = next(z for z in gmt if z["value"] == "GMT+05:30")
    assert kolkata["offset_minutes"] == 330 and kolkata["label"].startswith("GMT+05:30 (")
    assert "Asia/Kolkata" in kolkata["label"]
    for group in (gmt, iana):
        offsets = [z["offset_minutes"] for z in group]
        assert offsets == sorted(offsets)


def test_profile_accepts_gmt_offsets_strictly(client, api):
    h = api.new_user()
    for good in ("GMT+05:30", "GMT-03:00", "GMT+14:00", "GMT-12:00", "GMT+00:00", "GMT+05:45"):
        r = client.post("/api/v1/users/profile", json={"timezone": good}, headers=h)
        assert r.status_code == 200, (good, r.text)
        assert r.json()["profile"]["timezone"] == good
    for bad, why in (
        ("GMT+15:00", "hours"),
        ("GMT+14:30", "at most"),
        ("GMT+05:20", "minutes"),
        ("GMT+5:30", "GMT+HH:MM"),
        ("GMT+05:30:00", "GMT+HH:MM"),
        ("GMT+\u0665\u0660:\u0663\u0660", "GMT+HH:MM"),
        ("GMT+05", "GMT+HH:MM"),
        ("GMT 05:30", "unknown time zone"),
        ("UTC+05:30", "unknown time zone"),
    ):
        r = client.post("/api/v1/users/profile", json={"timezone": bad}, headers=h)
        assert r.status_code == 422, (bad, r.text)
        assert why in r.json()["message"], (bad, r.json())
    # The refused values did not replace the last good one.
    assert client.get("/api/v1/users/profile", headers=h).json()["timezone"] == "GMT+05:45"


def test_change_password(client, api):
    email = api.signup_and_verify()
    h = api.login(email)
    url = "/api/v1/users/change_password"
    r = client.post(
        url,
        json={"current_password": "wrong-one", "password": "n3w-password", "password_confirmation": "n3w-password"},
        headers=h,
    )
    assert r.status_code == 400 and r.json()["key"] == "WRONG_PASSWORD"
    r = client.post(
        url,
        json={"current_password": "s3cret-pass", "password": "n3w-password", "password_confirmation": "other-pass"},
        headers=h,
    )
    assert r.status_code == 422 and r.json()["message"] == "Password do not match. Try again!"
    r = client.post(
        url, json={"current_password": "s3cret-pass", "password": "short", "password_confirmation": "short"}, headers=h
    )
    assert r.status_code == 422
    r = client.post(
        url,
        json={"current_password": "s3cret-pass", "password": "n3w-password", "password_confirmation": "n3w-password"},
        headers=h,
    )
    assert r.status_code == 200 and r.json()["key"] == "UPDATE_SUCCESS"
    api.login(email, "n3w-password")
    with get_sessionmaker()() as s:
        assert s.scalar(select(User.password_hash).where(User.email == email)).startswith("$argon2id$")
    assert (
        client.post(
            url, json={"current_password": "n3w-password", "password": "x" * 8, "password_confirmation": "x" * 8}
        ).status_code
        == 401
    )
