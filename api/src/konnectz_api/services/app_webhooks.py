"""App webhook triggers: subscribing a published konnect's URL at the app, and unsubscribing it.

A catalogue trigger event with ``trigger: {type: webhook}`` compiles to the runner's webhook trigger
with the manifest's ``signature``. Publishing calls :func:`subscribe`: the manifest's ``subscribe``
request is sent through the account (credentials from the broker, refreshed when they expire) with
the konnect's webhook URL at ``url_path`` and, when the manifest has a ``secret_path``, a secret
generated here; the app's subscription id (``id_path``) and the signing secret (the generated one, or
the reply's ``reply_secret_path`` as Stripe's ``whsec_...``, or a token field of the account) are
stored encrypted in ``app_webhook_subscriptions``. Withdrawing or deleting the konnect calls
:func:`unsubscribe` (the manifest's ``unsubscribe`` request with ``{id}``). The runner reads the
secret from the broker (``POST /api/v1/internal/webhook_secret``) and refuses deliveries whose
signature does not match with 401.

Both are called from async code and never wait on the database on the event loop: each read and
write is a short transaction of its own in the thread pool (:func:`konnectz_api.db.run_db`), none open
while the app is called. The subscription's row is committed once the app has answered.
"""

from __future__ import annotations

import logging
import re
import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from konnectz_api import catalogue
from konnectz_api.compile.compilers import catalogue_app
from konnectz_api.compile.plan import plan
from konnectz_api.core.config import Settings
from konnectz_api.crud import app_accounts
from konnectz_api.db import run_db
from konnectz_api.models import AppWebhookSubscription, Konnect
from konnectz_api.services.app_calls import AppCallError, app_client, call_app
from konnectz_api.services.credential_broker import call_with_account, cipher
from konnectz_contracts.canvas import Canvas
from konnectz_contracts.compiling import config_values
from konnectz_contracts.manifest import App, Event, EventField, Operation, WebhookSubscription, path_params
from konnectz_contracts.refs import resolve
from konnectz_runner.apps import AppRequest, build_event_request, dig

__all__ = ["SubscribeError", "secret_of", "subscribe", "unsubscribe"]

log = logging.getLogger(__name__)
URL_FIELD, SECRET_FIELD, ID_FIELD = "konnectz_webhook_url", "konnectz_webhook_secret", "id"
# A path parameter of subscribe/unsubscribe requests: the konnect's id, for apps that name a webhook
# by a tag the subscriber chooses (Typeform: PUT /forms/{form_id}/webhooks/konnectz-{konnectz_konnect_id}),
# so two konnects on one form keep two webhooks instead of overwriting one.
KONNECT_FIELD = "konnectz_konnect_id"


class SubscribeError(Exception):
    """The app refused the subscription; the message is safe to show."""


def _request(
    app: App,
    event: Event,
    op: Operation,
    values: dict[str, Any],
    credentials: dict[str, Any],
    *,
    body: dict[str, str],
) -> AppRequest:
    """``op`` as a request: its path parameters from the trigger's values (and ``id``), ``body``
    members at their dotted paths, the trigger's other values (with their defaults) as ``input.*`` of
    the static body's templates (Calendly's ``organization``), credentials injected as for any event
    of the app."""
    params = path_params(op.path)
    fields = [EventField(key=p, label=p, location="path", required=True) for p in params]
    fields += [EventField(key=f"b{i}", label=path, body_path=path) for i, path in enumerate(body)]
    inputs = [f for f in event.fields if f.key not in params]
    fields += [EventField(key=f.key, label=f.label, type=f.type, location="none", default=f.default) for f in inputs]
    synthetic = Event(key=event.key, kind="action", label=event.label, operation=op, fields=fields)
    by_wire = {f.wire_name: values.get(f.key) for f in event.fields}
    given = {p: values.get(p, by_wire.get(p)) for p in params}
    given.update({f"b{i}": value for i, value in enumerate(body.values())})
    given.update({f.key: values.get(f.key) for f in inputs})
    return build_event_request(app, synthetic, given, credentials)


def _trigger_of(konnect: Konnect) -> tuple[App, Event, WebhookSubscription, Any] | None:
    canvas: Canvas = plan(konnect.canvas_json, require_linked=False).canvas
    node = next((n for n in canvas.apps if n.is_trigger), None)
    app = catalogue_app(node) if node is not None else None
    event = app.event(str((node.data.selectedEvent or {}).get("id", ""))) if app and node else None
    if app is None or event is None or not isinstance(event.trigger, WebhookSubscription):
        return None
    return app, event, event.trigger, node


def secret_of(session: Session, settings: Settings, konnect_id: int) -> str | None:
    row = session.get(AppWebhookSubscription, konnect_id)
    if row is None:
        return None
    return str(cipher(settings).decrypt(row.secret).get("secret", ""))


async def subscribe(session: Session, settings: Settings, konnect: Konnect, hook_url: str) -> bool:
    """Subscribe ``hook_url`` for the konnect's app webhook trigger (after unsubscribing an earlier
    subscription); False when its trigger is not an app webhook. Raises :class:`SubscribeError`."""
    found = _trigger_of(konnect)
    if found is None:
        return False
    app, event, strategy, node = found
    await unsubscribe(session, settings, konnect)
    values = {**config_values(node), KONNECT_FIELD: str(konnect.id)}
    account = None
    if app.needs_account:
        account_id = (node.data.model_extra or {}).get("selectedAccount") or {}
        raw = str(account_id.get("id", "")) if isinstance(account_id, dict) else ""
        account = (
            await run_db(session, app_accounts.get_account, owner_id=konnect.owner_id, account_id=int(raw))
            if raw.isdigit() and len(raw) < 19
            else None
        )
        if account is None or account.app_id != app.id:
            raise SubscribeError(f"Choose a {app.name} account for this trigger")
    generated = secrets.token_hex(32)
    external_id: str | None = None
    reply_body: Any = None
    credentials: dict[str, Any] = {}
    if strategy.subscribe is not None:
        body = {strategy.url_path: hook_url}
        if strategy.secret_path:
            body[strategy.secret_path] = generated
        op = strategy.subscribe
        try:
            async with app_client(settings) as (http, guard):
                if account is not None:

                    def build(creds: dict[str, Any]) -> AppRequest:
                        credentials.update(creds)
                        return _request(app, event, op, values, creds, body=body)

                    reply = await call_with_account(
                        session, http=http, guard=guard, settings=settings, account=account, app=app,
                        build=build, hooks=[*app.hooks, *event.hooks],
                    )  # fmt: skip
                else:
                    reply = await call_app(http, guard, _request(app, event, op, values, {}, body=body), secrets=[])
        except AppCallError as exc:
            raise SubscribeError(f"{app.name} refused the webhook subscription: {exc}") from exc
        reply_body = reply.body
        external_id = subscription_id(dig(reply_body, strategy.id_path), strategy.id_pattern)
    elif account is not None:
        credentials = app_accounts.credentials_of(account, cipher=cipher(settings))
    secret = generated
    if strategy.reply_secret_path:
        replied = dig(reply_body, strategy.reply_secret_path)
        secret = str(replied) if isinstance(replied, str) else ""
    if strategy.signature is not None:
        secret = resolve(strategy.signature.secret, {"subscription": {"secret": secret}, "auth": credentials})
        if not secret:
            # The app made the subscription: remove it there too, or it would call a URL that refuses.
            if external_id is not None:
                await _unsubscribe_at(session, settings, app, event, strategy, values, external_id, account)
            raise SubscribeError(f"{app.name} gave no signing secret for its webhook")
    row = AppWebhookSubscription(
        konnect_id=konnect.id,
        owner_id=konnect.owner_id,
        app_id=app.id,
        account_id=account.id if account is not None else None,
        event=event.key,
        external_id=external_id,
        secret=cipher(settings).encrypt({"secret": secret}),
        state={"url": hook_url, "values": {k: v for k, v in values.items() if isinstance(v, str | int | float)}},
        created_at=datetime.now(UTC),
    )
    await run_db(session, _add_row, row)
    return True


def _add_row(session: Session, row: AppWebhookSubscription) -> None:
    session.add(row)


def subscription_id(found: Any, pattern: str | None) -> str | None:
    """The app's subscription id from the value at ``id_path`` (the first match of ``id_pattern``)."""
    if not isinstance(found, str | int) or isinstance(found, bool):
        return None
    value = str(found)
    if pattern:
        match = re.search(pattern, value)
        return match.group(0) if match else None
    return value


async def unsubscribe(session: Session, settings: Settings, konnect: Konnect) -> None:
    """Remove the konnect's app subscription (the app's ``unsubscribe`` request, when it has one).

    A failure at the app is logged, not raised: the konnect is withdrawn either way, and deliveries
    to its unpublished URL are refused (404)."""
    found = await run_db(session, _subscription_and_account, konnect.id)
    if found is None:
        return
    row, account = found

    app = catalogue.get_index().get(row.app_id)
    event = app.event(row.event) if app is not None else None
    strategy = event.trigger if event is not None else None
    if (
        app is not None
        and event is not None
        and isinstance(strategy, WebhookSubscription)
        and strategy.unsubscribe is not None
        and row.external_id
    ):
        # The values the subscription was made with (the canvas may have changed since).
        values = {KONNECT_FIELD: str(row.konnect_id), **((row.state or {}).get("values") or {})}
        await _unsubscribe_at(session, settings, app, event, strategy, values, row.external_id, account)
    await run_db(session, _delete_row, row)


def _subscription_and_account(session: Session, konnect_id: int) -> tuple[AppWebhookSubscription, Any] | None:
    """The konnect's subscription and the account it was made through (None: no subscription)."""
    row = session.get(AppWebhookSubscription, konnect_id)
    if row is None:
        return None
    account = (
        app_accounts.get_account(session, owner_id=row.owner_id, account_id=row.account_id)
        if row.account_id is not None
        else None
    )
    return row, account


def _delete_row(session: Session, row: AppWebhookSubscription) -> None:
    session.delete(row)


async def _unsubscribe_at(
    session: Session,
    settings: Settings,
    app: App,
    event: Event,
    strategy: WebhookSubscription,
    values: dict[str, Any],
    external_id: str,
    account: Any,
) -> None:
    """Send the app's ``unsubscribe`` request for subscription ``external_id``; a failure is logged."""
    op = strategy.unsubscribe
    if op is None or account is None:
        return
    values = {**values, ID_FIELD: external_id}
    try:
        async with app_client(settings) as (http, guard):
            await call_with_account(
                session, http=http, guard=guard, settings=settings, account=account, app=app,
                build=lambda creds: _request(app, event, op, values, creds, body={}), hooks=[],
            )  # fmt: skip
    except AppCallError as exc:
        log.warning("Unsubscribing %s subscription %s failed: %s", app.name, external_id, exc)
