"""Who may do what on NATS: one user per component, with the subjects it needs (the one source).

The api, the runners and the operator each connect with their own user (``KONNECTZ_NATS_USER`` /
``KONNECTZ_NATS_PASSWORD``). :func:`permissions` lists what each may publish and subscribe to;
:func:`authorization_conf` renders the ``authorization {}`` block of nats-server's configuration
from it, with each password read from an environment variable of the server
(``$KONNECTZ_NATS_<USER>_PASSWORD``). The chart includes that block as the file
``charts/konnectz/files/nats-authorization.conf`` (generated: ``make nats-auth``; a test checks it
is current) and the devstack writes the same block, with a test ``admin`` user, into its
``nats.conf``. docs/nats.md explains each grant.

JetStream is used through its API subjects, which name the stream: a grant per stream keeps a
user to its streams. A KV bucket ``B`` is the stream ``KV_B`` with the subjects ``$KV.B.>``.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from konnectz_contracts import budgets, calls, capture, events, quota, run_control, waits
from konnectz_contracts.responses import RESPONSES_PREFIX

__all__ = [
    "ADMIN",
    "API",
    "COMPONENTS",
    "OPERATOR",
    "RUNNER",
    "Grants",
    "authorization_conf",
    "connect_options",
    "grants",
    "inbox_prefix",
    "password_env",
    "permissions",
]

API, RUNNER, OPERATOR = "api", "runner", "operator"
#: The users of the platform, in the chart and in the devstack.
COMPONENTS = (API, RUNNER, OPERATOR)
#: Full access: the devstack's and the tests' own user (never in the chart).
ADMIN = "admin"

# Streams and buckets (defined by the contract modules that describe them; runner/tests/test_nats_auth.py
# checks that every one ensure_streams creates is listed here).
RUNS, EVENTS, CAPTURES = events.STREAM_RUNS, events.STREAM_EVENTS, capture.STREAM_CAPTURES
KONNECTS, SCHEDULES, POLLS = events.KV_KONNECTS, events.KV_SCHEDULES, events.KV_POLLS
STEPS, IDEMPOTENCY, QUOTA_BLOCKS, BUDGETS = (
    events.KV_STEPS,
    events.KV_IDEMPOTENCY,
    quota.KV_QUOTA_BLOCKS,
    budgets.KV_BUDGETS,
)
ACTIVE, CANCELS, CAPTURING = run_control.KV_ACTIVE, run_control.KV_CANCELS, capture.KV_CAPTURING
SLOTS, LEADERS = run_control.KV_SLOTS, events.KV_LEADERS
WAITS, REVISIONS = waits.KV_WAITS, waits.KV_REVISIONS
EVENTS_CONSUMER = events.EVENTS_CONSUMER
#: Every bucket ensure_streams creates (the runner and the api both call it at start).
ENSURED_BUCKETS = (
    KONNECTS,
    SCHEDULES,
    POLLS,
    STEPS,
    IDEMPOTENCY,
    QUOTA_BLOCKS,
    BUDGETS,
    ACTIVE,
    CANCELS,
    CAPTURING,
    WAITS,
    REVISIONS,
)
ENSURED_STREAMS = (RUNS, EVENTS, CAPTURES)
RESPONSES = f"{RESPONSES_PREFIX}.>"  # webhook answers (konnectz_contracts.responses)
QUOTA_SUBJECTS = "kz.quota.>"  # kz.quota.reserve, kz.quota.reserve_many (konnectz_contracts.quota)
CALL_SUBJECTS = calls.CALL_SUBJECTS  # kz.calls.start: a Call a Flow step asks the api to start a run


@dataclass(frozen=True)
class Grants:
    """What one user may do. Streams and buckets by name; subjects as NATS subjects."""

    manage: tuple[str, ...] = ()  # streams it creates and updates (and reads the info of)
    manage_buckets: tuple[str, ...] = ()
    read: tuple[str, ...] = ()  # streams it reads: consumers, acks, message gets
    read_buckets: tuple[str, ...] = ()
    write_buckets: tuple[str, ...] = ()  # buckets it puts to and deletes from
    delete_from: tuple[str, ...] = ()  # streams it deletes single messages from
    publish: tuple[str, ...] = ()  # plain subjects (stream subjects included)
    subscribe: tuple[str, ...] = ()  # core NATS subscriptions besides its inbox
    extra_api: tuple[str, ...] = ()  # further JetStream API subjects
    allow_responses: bool = False  # may answer requests it received (the api's quota replies)
    notes: dict[str, str] = field(default_factory=dict)


#: The buckets a runner writes (and reads): run state, journals, budgets, captures, slots, leaders.
_RUNNER_WRITES = (
    SCHEDULES,
    POLLS,
    STEPS,
    IDEMPOTENCY,
    QUOTA_BLOCKS,
    BUDGETS,
    ACTIVE,
    CANCELS,
    CAPTURING,
    SLOTS,
    LEADERS,
    WAITS,
    REVISIONS,
)


def grants() -> dict[str, Grants]:
    """Each component's grants (docs/nats.md says why each is there)."""
    return {
        API: Grants(
            # ensure_streams at start: every stream and bucket (the api starts before any runner).
            manage=ENSURED_STREAMS,
            manage_buckets=ENSURED_BUCKETS,
            # task events (its durable consumer), run control and capture reads, timers/runs it looks up.
            read=(EVENTS, RUNS, CAPTURES),
            read_buckets=(KONNECTS, BUDGETS, ACTIVE, CANCELS, CAPTURING, WAITS),
            # flows it deploys (make dev), capture windows, cancel requests, rate budgets it shares
            # with the runners (a step tested in the editor takes from the same bucket).
            # ... and the waits an Approval's link decides (docs/waits.md).
            write_buckets=(KONNECTS, CAPTURING, CANCELS, BUDGETS, WAITS),
            # a cancelled run waiting in a delay: its timer is deleted and the run published now (wake).
            delete_from=(RUNS,),
            # runs it starts (replays, run now, failure alerts) on kz.runs.<id> and kz.runs.pool.<id>.
            publish=("kz.runs.>",),
            # quota reservations the runners ask for (queue group), answered with allow_responses;
            # and the called runs Call a Flow steps ask it to start (konnectz_contracts.calls).
            subscribe=(QUOTA_SUBJECTS, CALL_SUBJECTS),
            allow_responses=True,
        ),
        RUNNER: Grants(
            manage=ENSURED_STREAMS,
            manage_buckets=(*ENSURED_BUCKETS, SLOTS, LEADERS),
            # its runs (and timers, stored in KZ_RUNS), captures; never KZ_EVENTS (task events).
            read=(RUNS, CAPTURES),
            read_buckets=(KONNECTS, *_RUNNER_WRITES),
            # not KZ_KONNECTS: flows are deployed by the api and the operator, never by a runner.
            write_buckets=_RUNNER_WRITES,
            delete_from=(RUNS,),
            # kz.responses.>: a webhook's answer from its run, worker to ingress (konnectz_contracts.responses).
            # kz.calls.>: a Call a Flow step asks the api to start the called run (konnectz_contracts.calls).
            publish=(
                "kz.runs.>",
                "kz.timers.>",
                "kz.events.>",
                "kz.captures.>",
                QUOTA_SUBJECTS,
                RESPONSES,
                CALL_SUBJECTS,
            ),
            # the server's notice that a run was given up (max deliveries) on its consumer; webhook answers.
            subscribe=(f"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{RUNS}.>", RESPONSES),
            # the ingress confirms a webhook answer a worker sent it (a request on kz.responses.>).
            allow_responses=True,
            # ensure_streams looks up (and creates when missing) the api's consumer of KZ_EVENTS.
            extra_api=(
                f"$JS.API.CONSUMER.INFO.{EVENTS}.{EVENTS_CONSUMER}",
                f"$JS.API.CONSUMER.CREATE.{EVENTS}.{EVENTS_CONSUMER}",
                f"$JS.API.CONSUMER.CREATE.{EVENTS}.{EVENTS_CONSUMER}.>",
                f"$JS.API.CONSUMER.DURABLE.CREATE.{EVENTS}.{EVENTS_CONSUMER}",
                # the worker's sweep: finished runs leave KZ_RUNS in one purge below its consumer's ack floor.
                f"$JS.API.STREAM.PURGE.{RUNS}",
            ),
        ),
        # The shared pool's flows: the operator puts and removes them in KZ_KONNECTS, nothing else.
        OPERATOR: Grants(manage_buckets=(KONNECTS,), read_buckets=(KONNECTS,), write_buckets=(KONNECTS,)),
    }


def inbox_prefix(user: str) -> str:
    """Each user's replies come to its own inbox, which no other user may subscribe to."""
    return f"_INBOX_{user}"


def _stream_read(stream: str) -> list[str]:
    return [
        f"$JS.API.STREAM.INFO.{stream}",
        f"$JS.API.STREAM.MSG.GET.{stream}",
        f"$JS.API.DIRECT.GET.{stream}",
        f"$JS.API.DIRECT.GET.{stream}.>",
        f"$JS.API.CONSUMER.CREATE.{stream}",
        f"$JS.API.CONSUMER.CREATE.{stream}.>",
        f"$JS.API.CONSUMER.DURABLE.CREATE.{stream}.*",
        f"$JS.API.CONSUMER.INFO.{stream}.*",
        f"$JS.API.CONSUMER.DELETE.{stream}.*",
        f"$JS.API.CONSUMER.MSG.NEXT.{stream}.*",
        f"$JS.API.CONSUMER.NAMES.{stream}",
        f"$JS.API.CONSUMER.LIST.{stream}",
        f"$JS.ACK.{stream}.>",
        f"$JS.FC.{stream}.>",
    ]


def _stream_manage(stream: str) -> list[str]:
    return [f"$JS.API.STREAM.INFO.{stream}", f"$JS.API.STREAM.CREATE.{stream}", f"$JS.API.STREAM.UPDATE.{stream}"]


def permissions(component: str) -> dict[str, Any]:
    """``{"publish": [...], "subscribe": [...], "allow_responses": bool}`` of one user."""
    if component == ADMIN:
        return {"publish": [">"], "subscribe": [">"], "allow_responses": False}
    g = grants()[component]
    publish: list[str] = ["$JS.API.INFO", "$JS.API.STREAM.NAMES"]
    for stream in g.manage:
        publish += _stream_manage(stream)
    for bucket in g.manage_buckets:
        publish += _stream_manage(f"KV_{bucket}")
    for stream in g.read:
        publish += _stream_read(stream)
    for bucket in g.read_buckets:
        publish += _stream_read(f"KV_{bucket}")
    for bucket in g.write_buckets:
        # put, delete, purge (a tombstone) and compare-and-set are publishes to the key's subject.
        publish += [f"$KV.{bucket}.>", f"$JS.API.STREAM.MSG.DELETE.KV_{bucket}"]
    for stream in g.delete_from:
        publish.append(f"$JS.API.STREAM.MSG.DELETE.{stream}")
    publish += [*g.extra_api, *g.publish]
    subscribe = [f"{inbox_prefix(component)}.>", *g.subscribe]
    return {"publish": _unique(publish), "subscribe": _unique(subscribe), "allow_responses": g.allow_responses}


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def password_env(user: str) -> str:
    """The nats-server environment variable holding ``user``'s password."""
    return f"KONNECTZ_NATS_{user.upper()}_PASSWORD"


def authorization_conf(users: Iterable[str] = COMPONENTS) -> str:
    """The ``authorization {}`` block of nats-server.conf for ``users`` (passwords from the env)."""
    lines = [
        "# Generated by konnectz_contracts.nats_auth (make nats-auth): do not edit.",
        "# One user per component; every password comes from the server's environment.",
        "authorization {",
        "  users = [",
    ]
    for user in users:
        perms = permissions(user)
        lines += [
            "    {",
            f'      user: "{user}"',
            f"      password: ${password_env(user)}",
            "      permissions: {",
            "        publish: {",
            "          allow: [",
            *[f'            "{subject}"' for subject in perms["publish"]],
            "          ]",
            "        }",
            "        subscribe: {",
            "          allow: [",
            *[f'            "{subject}"' for subject in perms["subscribe"]],
            "          ]",
            "        }",
        ]
        if perms["allow_responses"]:
            lines.append("        allow_responses: true")
        lines += ["      }", "    }"]
    lines += ["  ]", "}", ""]
    return "\n".join(lines)


def connect_options(user: str, password: str, ca_file: str = "") -> dict[str, Any]:
    """nats.connect() keyword arguments for a user (none without one: NATS without authorization)
    and, with ``ca_file``, TLS verified against that CA (``tls://`` URLs use the system's CAs)."""
    options: dict[str, Any] = {}
    if user:
        options.update(user=user, password=password, inbox_prefix=inbox_prefix(user))
    if ca_file:
        options["tls"] = ssl.create_default_context(cafile=ca_file)
    return options


def main() -> None:
    """Print the chart's block (``make nats-auth`` writes it to charts/konnectz/files/)."""
    print(authorization_conf(COMPONENTS), end="")


if __name__ == "__main__":
    main()
