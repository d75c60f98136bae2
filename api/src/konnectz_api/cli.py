"""``python -m konnectz_api serve|migrate|openapi|captcha|plan|admin|namespace|credentials-key|eval``."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import urllib.request

from pydantic import ValidationError

from konnectz_api import catalogue
from konnectz_api.core.config import get_settings
from konnectz_api.crud import admins, namespace_bindings, quota
from konnectz_api.db import get_sessionmaker
from konnectz_api.errors import ApiError
from konnectz_api.models import Konnect, User
from konnectz_api.schemas import EvaluationRunIn
from konnectz_api.services.captcha import solve
from konnectz_runner.apps import CatalogueError


def _captcha(url: str) -> int:
    """Fetch a challenge and print its solution on stdout (progress on stderr, so $(...) keeps only it)."""
    started = time.monotonic()
    sys.stderr.write(f"captcha: fetching a challenge from {url} ...\n")
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/api/v1/captcha/challenge", timeout=10) as resp:  # noqa: S310
            challenge = json.load(resp)
    except OSError as exc:
        sys.stderr.write(f"captcha: could not reach {url} ({exc}); is `make dev` running?\n")
        return 1
    params = challenge.get("parameters", {})
    sys.stderr.write(
        f"captcha: solving ({params.get('algorithm')}, cost {params.get('cost')}) on {os.cpu_count()} cores ...\n"
    )
    try:
        payload = solve(challenge, workers=os.cpu_count() or 1)
    except TimeoutError as exc:
        sys.stderr.write(f"captcha: {exc}\n")
        return 1
    sys.stderr.write(f"captcha: solved in {time.monotonic() - started:.1f}s\n")
    print(payload)
    return 0


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
    plan = sub.add_parser("plan", help="administer plans (no payment provider: an administrator assigns them)")
    plan_sub = plan.add_subparsers(dest="plan_command", required=True)
    plan_set = plan_sub.add_parser("set", help="give a user a plan and its task limit")
    plan_set.add_argument("email")
    plan_set.add_argument("plan", help="Free, Team, Agency or Premium")
    plan_sub.add_parser("list", help="list the plans and their task limits")
    admin = sub.add_parser(
        "admin",
        help="name administrators (assign plans, configure OAuth apps); KONNECTZ_ADMIN_EMAILS names them too",
    )
    admin_sub = admin.add_subparsers(dest="admin_command", required=True)
    admin_sub.add_parser("grant", help="make the user with this e-mail an administrator").add_argument("email")
    admin_sub.add_parser("revoke", help="take back a grant (KONNECTZ_ADMIN_EMAILS still names its own)").add_argument(
        "email"
    )
    admin_sub.add_parser("list", help="list the administrators: granted here or named by KONNECTZ_ADMIN_EMAILS")
    namespace = sub.add_parser(
        "namespace",
        help="bind Kubernetes namespaces to Konnectz accounts: a Konnect applied there with kubectl is imported "
        "for the account's owner or a member who may publish; KONNECTZ_NAMESPACE_BINDINGS binds them too",
    )
    namespace_sub = namespace.add_subparsers(dest="namespace_command", required=True)
    bind = namespace_sub.add_parser("bind", help="bind a namespace to the account of the owner with this e-mail")
    bind.add_argument("namespace")
    bind.add_argument("email")
    namespace_sub.add_parser(
        "unbind", help="remove a binding (new Konnects there are refused; imported flows keep running)"
    ).add_argument("namespace")
    namespace_sub.add_parser("list", help="list the bound namespaces: bound here or by KONNECTZ_NAMESPACE_BINDINGS")
    sub.add_parser(
        "credentials-key",
        help="print KONNECTZ_CREDENTIALS_KEY for shared runners (derived from KONNECTZ_SECRET_KEY)",
    )
    evaluate = sub.add_parser(
        "eval",
        help="run a flow's evaluations headless against a revision and print the score; "
        "exit 0 at or above the threshold, 1 below it, 2 on an error",
    )
    evaluate.add_argument("--flow", type=int, required=True, help="the flow's (konnect's) id")
    evaluate.add_argument(
        "--revision", help='a revision number or "draft" (default: the live revision, else the draft)'
    )
    evaluate.add_argument("--threshold", type=float, help="the score to reach, 0 to 1 (default: the set's)")
    evaluate.add_argument("--json", action="store_true", help="print the whole result as JSON")
    args = parser.parse_args(argv)

    if args.command == "serve":
        import uvicorn  # the server loads only to serve

        problem = _cannot_start()
        if problem is not None:
            print(f"konnectz-api: cannot start: {problem}", file=sys.stderr)
            return 1
        uvicorn.run("konnectz_api.main:app", host=args.host, port=args.port, log_level="info", proxy_headers=True)
        return 0
    if args.command == "migrate":
        from konnectz_api.migrate import upgrade  # import-ok: alembic and the migrations load only to migrate

        upgrade()
        return 0
    if args.command == "openapi":
        from konnectz_api.main import create_app  # import-ok: the whole app loads only for its OpenAPI document

        doc = json.dumps(create_app().openapi(), indent=2, sort_keys=True) + "\n"
        if args.output:
            with open(args.output, "w") as fh:
                fh.write(doc)
        else:
            sys.stdout.write(doc)
        return 0
    if args.command == "captcha":
        return _captcha(args.url)
    if args.command == "plan":
        return _plan(args)
    if args.command == "admin":
        return _admin(args)
    if args.command == "namespace":
        return _namespace(args)
    if args.command == "eval":
        return _eval(args)
    if args.command == "credentials-key":
        # The key a runner hosting many konnects needs (KONNECTZ_CREDENTIALS_KEY).
        print(get_settings().runner_credentials_key)
        return 0
    return 2


def _cannot_start() -> str | None:
    """Why the api cannot start (its settings, the kubernetes deployer's cluster configuration or the app
    catalogue are unusable), checked before the server opens anything: a broken image or configuration
    exits at once with one line."""
    try:
        settings = get_settings()
        if settings.deployer == "kubernetes":
            from kubernetes import config as kube_config  # optional: the Kubernetes deployer's

            try:
                kube_config.load_incluster_config()
            except kube_config.ConfigException:
                try:
                    kube_config.load_kube_config()
                except (kube_config.ConfigException, OSError) as exc:
                    return f"kubernetes deployer: no service account and no usable kubeconfig ({exc})"
        catalogue.get_index()
    except ValidationError as exc:
        errors = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors())
        return f"invalid settings ({errors})"
    except (CatalogueError, OSError) as exc:
        return f"app catalogue: {exc}"
    return None


def _admin(args: argparse.Namespace) -> int:
    settings = get_settings()
    with get_sessionmaker()() as session:
        if args.admin_command == "list":
            rows = admins.listed(session, settings)
            if not rows:
                print(f"No administrator. {admins.HOW_TO_NAME}")
            for row in rows:
                how = ", ".join(n for n, on in (("granted", row.granted), ("KONNECTZ_ADMIN_EMAILS", row.named)) if on)
                state = "administrator" if row.active else f"not yet: {row.why_not}"
                print(f"{row.email}\t{how}\t{state}")
            return 0
        grant = args.admin_command == "grant"
        user = admins.set_granted(session, args.email, granted=grant)
        if user is None:
            print(f"No user with e-mail {args.email}", file=sys.stderr)
            return 1
        if admins.is_administrator(user, settings):
            state = "administrator" + ("" if grant else " (still named by KONNECTZ_ADMIN_EMAILS)")
        elif grant:
            state = "administrator once the e-mail is verified"
        else:
            state = "not an administrator"
        print(f"{user.email}: {state}")
    return 0


def _namespace(args: argparse.Namespace) -> int:
    settings = get_settings()
    with get_sessionmaker()() as session:
        if args.namespace_command == "list":
            rows = namespace_bindings.listed(session, settings.namespace_bindings)
            if not rows:
                print(f"No namespace is bound: {namespace_bindings.how_to_bind('<namespace>')}.")
            for row in rows:
                how = "KONNECTZ_NAMESPACE_BINDINGS" if row.source == namespace_bindings.ENVIRONMENT else "bound here"
                state = f"not yet: {row.pending}" if row.pending else "bound"
                print(f"{row.namespace}\t{row.owner_email}\t{how}\t{state}")
            return 0
        try:
            if args.namespace_command == "bind":
                bound = namespace_bindings.bind(session, args.namespace, args.email)
                owner = session.get(User, bound.owner_id)
                print(f"{args.namespace}: bound to the account of {owner.email if owner else args.email}")
            elif namespace_bindings.unbind(session, args.namespace):
                print(f"{args.namespace}: unbound (new Konnects there are refused; imported flows keep running)")
            else:
                print(f"{args.namespace}: not bound")
        except namespace_bindings.BindingError as exc:
            print(exc, file=sys.stderr)
            return 1
    return 0


def _plan(args: argparse.Namespace) -> int:
    if args.plan_command == "list":
        for p in quota.PLANS.values():
            caps = f"{p.folders} folders\t{p.konnects} flows\t{p.app_accounts} app accounts"
            print(f"{p.name}\t{p.task_limit} tasks\t{p.price}\t{caps}")
        return 0

    with get_sessionmaker()() as session:
        try:
            user = quota.set_plan(session, email=args.email, plan=args.plan)
        except quota.UnknownPlan as exc:
            print(exc, file=sys.stderr)
            return 2
        if user is None:
            print(f"No user with e-mail {args.email}", file=sys.stderr)
            return 1
        print(f"{user.email}: plan {user.current_plan}, {user.task_limit} tasks, {user.task_consumed} consumed")
    return 0


def _eval(args: argparse.Namespace) -> int:
    """``eval``: the flow's evaluation set run in this process against the database (as its owner)."""
    from konnectz_api.services.evaluations import run_evaluation  # import-ok: the runner's engine loads only here

    revision: int | str | None = args.revision
    if isinstance(revision, str) and revision != "draft":
        if not revision.isdigit():
            print(f'eval: --revision must be a revision number or "draft", not {revision!r}', file=sys.stderr)
            return 2
        revision = int(revision)
    try:
        body = EvaluationRunIn(revision=revision, threshold=args.threshold)
    except ValidationError as exc:
        print(f"eval: {'; '.join(str(e['msg']) for e in exc.errors())}", file=sys.stderr)
        return 2
    settings = get_settings()
    with get_sessionmaker()() as session:
        konnect = session.get(Konnect, args.flow) if 0 < args.flow < 2**63 else None
        owner = session.get(User, konnect.owner_id) if konnect is not None and konnect.status != "DELETED" else None
        if konnect is None or owner is None:
            print(f"eval: no flow {args.flow}", file=sys.stderr)
            return 2
        try:
            result = asyncio.run(run_evaluation(session, settings, owner, konnect.id, body))
        except ApiError as exc:
            print(f"eval: {exc.message}", file=sys.stderr)
            return 2
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        width = max([4, *(len(c.name) for c in result.cases)])
        print(f"{'case':<{width}}  result  status    seconds  why")
        for case in result.cases:
            failed = [f"{c.step or '?'}.{c.path or '*'} {c.op}: {c.reason}" for c in case.checks if not c.passed]
            why = "; ".join([case.error, *failed] if case.error else failed)
            verdict = "pass" if case.passed else "FAIL"
            print(f"{case.name:<{width}}  {verdict:<6}  {case.status:<8}  {case.seconds:>7.2f}  {why}")
        which = "the draft" if result.revision is None else f"revision {result.revision}"
        verdict = "passed" if result.passed_threshold else "FAILED"
        print(
            f"score {result.score:.3f} ({result.passed}/{result.total}) on {which}: "
            f"{verdict} (threshold {result.threshold:g})"
        )
    return 0 if result.passed_threshold else 1
