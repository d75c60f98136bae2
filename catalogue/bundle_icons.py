"""Bundle brand icons into catalogue/icons from the simple-icons npm package (CC0-1.0).

Run by hand when the curated apps or the generated catalogue change (the output is committed; the
build and the api never fetch an icon):

    npm pack simple-icons@16.37.0 && tar xzf simple-icons-16.37.0.tgz
    .venv/bin/python catalogue/bundle_icons.py package

Each brand's glyph is drawn on its brand colour (white, or near-black on a light colour, for
contrast) as a 64x64 rounded square like the monograms. ``catalogue/icons/prefixes.json`` maps a
generated app's key prefix (its provider) to a brand, so every API of one provider shares its logo.
Apps without a brand here keep their monogram. The brand names and logos are trademarks of their
owners, shown only to identify the service an app connects to.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ICONS = HERE / "icons"
# curated app key -> simple-icons slug
CURATED = {
    "airtable": "airtable", "asana": "asana", "calendly": "calendly", "discord": "discord", "dropbox": "dropbox",
    "github": "github", "gitlab": "gitlab", "gmail": "gmail", "google_calendar": "googlecalendar",
    "google_drive": "googledrive", "google_forms": "googleforms", "google_sheets": "googlesheets",
    "hubspot": "hubspot", "intercom": "intercom", "jira": "jira", "mailchimp": "mailchimp", "notion": "notion",
    "shopify": "shopify", "stripe": "stripe", "telegram": "telegram", "trello": "trello", "typeform": "typeform",
    "zendesk": "zendesk", "zoom": "zoom",
}  # fmt: skip
# generated key prefix (the provider's part of the key) -> slug; a prefix ends with "-" unless it is a whole key
PREFIXES = {
    "googleapis-com-": "googlecloud", "hubapi-com-": "hubspot", "nexmo-com-": "vonage", "vonage-com-": "vonage",
    "adyen-com-": "adyen", "vtex-": "vtex", "ebay-com-": "ebay", "github-com-": "github", "xero-com-": "xero",
    "apache-org-": "apache", "appwrite-io-": "appwrite", "deutschebahn-com-": "deutschebahn", "docker-com-": "docker",
    "lufthansa-com-": "lufthansa", "spotify-com": "spotify", "1password-": "1password", "adafruit-": "adafruit",
    "apple-com-": "apple", "appveyor-com": "appveyor", "brex-io": "brex", "bungie-net": "bungie", "bunq-com": "bunq",
    "channel4-com": "channel4", "digitalocean-com": "digitalocean", "discourse-local": "discourse",
    "flickr-com": "flickr", "giphy-com": "giphy", "gitlab-com": "gitlab", "here-com-": "here", "intel-com-": "intel",
    "klarna-com": "klarna", "lyft-com": "lyft", "mastercard-com-": "mastercard", "qualtrics-com": "qualtrics",
    "redhat-com": "redhat", "swagger-io-": "swagger", "vercel-com": "vercel", "vimeo-com": "vimeo",
    "vmware-local-": "vmware", "zapier-com": "zapier",
}  # fmt: skip


def _light(hex_colour: str) -> bool:
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (0, 2, 4))
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] > 0.4


def icon_svg(package: Path, slug: str, brands: dict[str, dict[str, str]]) -> str:
    source = (package / "icons" / f"{slug}.svg").read_text()
    path = re.search(r'<path d="([^"]+)"', source)
    if path is None:
        raise SystemExit(f"{slug}: no path in {source[:80]}")
    brand = brands[slug]
    colour = brand["hex"]
    glyph = "#111827" if _light(colour) else "#ffffff"
    title = brand["title"].replace("&", "&amp;").replace("<", "&lt;")
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64" role="img">'
        f"<title>{title}</title>"
        f'<rect width="64" height="64" rx="14" fill="#{colour}"/>'
        f'<g transform="translate(16 16) scale(1.3333)"><path fill="{glyph}" d="{path.group(1)}"/></g>'
        "</svg>\n"
    )


def main(package: Path) -> None:
    data = json.loads((package / "data" / "simple-icons.json").read_text())
    brands = {b["slug"]: b for b in data}
    ICONS.mkdir(exist_ok=True)
    for key, slug in CURATED.items():
        (ICONS / f"{key}.svg").write_text(icon_svg(package, slug, brands))
    for slug in sorted(set(PREFIXES.values())):
        (ICONS / f"brand-{slug}.svg").write_text(icon_svg(package, slug, brands))
    mapping = {prefix: f"brand-{slug}" for prefix, slug in sorted(PREFIXES.items())}
    (ICONS / "prefixes.json").write_text(json.dumps(mapping, indent=1, sort_keys=True) + "\n")
    print(f"{len(CURATED)} curated icons, {len(set(PREFIXES.values()))} provider icons in {ICONS}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
