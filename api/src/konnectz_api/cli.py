"""``python -m konnectz_api serve|migrate|openapi|captcha``."""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="konnectz-api")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the api (and the built SPA)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    sub.add_parser("migrate", help="apply database migrations")
    openapi = sub.add_parser("openapi", help="print the OpenAPI document")
    openapi.add_argument("--output", "-o")
    cap = sub.add_parser("captcha", help="fetch and solve a sign-in captcha (for curl users)")
    cap.add_argument("--url", default="http://127.0.0.1:8080")
    args = parser.parse_args(argv)

    if args.command == "serve":
        import uvicorn

        uvicorn.run("konnectz_api.main:app", host=args.host, port=args.port, log_level="info", proxy_headers=True)
        return 0
    if args.command == "migrate":
        from konnectz_api.migrate import upgrade

        upgrade()
        return 0
    if args.command == "openapi":
        from konnectz_api.main import create_app

        doc = json.dumps(create_app().openapi(), indent=2, sort_keys=True) + "\n"
        if args.output:
            with open(args.output, "w") as fh:
                fh.write(doc)
        else:
            sys.stdout.write(doc)
        return 0
    if args.command == "captcha":
        from konnectz_api.captcha import solve

        with urllib.request.urlopen(f"{args.url.rstrip('/')}/api/v1/captcha/challenge", timeout=10) as resp:  # noqa: S310
            challenge = json.load(resp)
        print(solve(challenge))
        return 0
    return 2
