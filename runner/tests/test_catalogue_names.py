"""Every app of the built catalogue (curated and generated) reads differently from every other:
no two share a display name or a description, and the generated ones name their provider."""

from __future__ import annotations

from collections import Counter

import pytest

from konnectz_runner.apps import GENERATED_BUNDLE, default_root, load_catalogue
from konnectz_runner.apps.catalogue import load_bundle
from konnectz_tools.generate import display_name, distinct_names, provider_name

BUNDLE = default_root() / GENERATED_BUNDLE


@pytest.mark.skipif(not BUNDLE.is_file(), reason="run `make catalogue` first (generated bundle missing)")
def test_no_two_apps_share_a_name_or_a_description() -> None:
    curated = load_catalogue(default_root(), include_generated=False).apps
    generated = load_bundle(BUNDLE)
    apps = [*curated, *generated]
    names = Counter(a.name.lower() for a in apps)
    assert [n for n, c in names.items() if c > 1] == []
    descriptions = Counter(a.description.lower() for a in apps if a.description)
    assert [d for d, c in descriptions.items() if c > 1] == []
    assert all(a.description for a in generated)
    github = sorted(a.name for a in generated if a.source.spec_id and a.source.spec_id.startswith("github.com/"))
    assert "GitHub v3 REST API (Enterprise Server 3.8)" in github and "GitHub v3 REST API (AE)" in github
    assert len(set(github)) == len(github) == 8
    assert not {a.name for a in curated} & {a.name for a in generated}


def test_names_carry_the_provider_and_tell_documents_apart() -> None:
    assert display_name("adyen.com/AccountService.json", {"title": "Account API"}) == "Adyen Account API"
    assert display_name("ebay.com/sell-account.json", {"title": "Account API"}) == "eBay Account API"
    assert display_name("amazonaws.com/qldb.json", {"title": "Amazon QLDB"}) == "Amazon QLDB"
    assert display_name("amazonaws.com/synthetics.json", {"title": "Synthetics"}) == "AWS Synthetics"
    sql = display_name("googleapis.com/sqladmin.json", {"title": "Cloud SQL Admin API"})
    assert sql == "Google Cloud SQL Admin API"
    assert provider_name("truora.com") == "Truora" and provider_name("apiz.ebay.com") == "eBay"
    apps = [
        {"id": 1, "name": "GitHub v3 REST API", "spec_id": "github.com/ghes-3.7.json", "version": "1.1.4"},
        {"id": 2, "name": "GitHub v3 REST API", "spec_id": "github.com/github.ae.json", "version": "1.1.4"},
        {
            "id": 3,
            "name": "Amazon Simple Email Service",
            "spec_id": "amazonaws.com/sesv2.json",
            "version": "2019-09-27",
        },
        {
            "id": 4,
            "name": "Amazon Simple Email Service",
            "spec_id": "amazonaws.com/email.json",
            "version": "2010-12-01",
        },
        {"id": 5, "name": "Appwrite", "spec_id": "appwrite.io/client.json", "version": "0.9.3"},
        {"id": 6, "name": "Appwrite", "spec_id": "appwrite.io/server.json", "version": "0.9.3"},
        {"id": 7, "name": "Gitlab", "spec_id": "gitlab.com.json", "version": "v3"},
        {"id": 8, "name": "Unique", "spec_id": "unique.io.json", "version": "1"},
    ]
    assert distinct_names(apps, frozenset({"gitlab"})) == {
        1: "GitHub v3 REST API (Enterprise Server 3.7)",
        2: "GitHub v3 REST API (AE)",
        3: "Amazon Simple Email Service (v2)",
        4: "Amazon Simple Email Service (2010-12-01)",
        5: "Appwrite (Client)",
        6: "Appwrite (Server)",
        7: "Gitlab (v3)",
    }
