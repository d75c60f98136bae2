"""A real SMTP server on loopback that stores every message in a Maildir (dev mailbox)."""

from __future__ import annotations

from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Mailbox

from konnectz_devstack._errors import DevStackError
from konnectz_devstack._ports import port_is_free


class SmtpSink:
    def __init__(self, maildir: Path, port: int) -> None:
        self.maildir = Path(maildir).resolve()
        self.port = port
        self._controller: Controller | None = None

    def start(self) -> None:
        if not port_is_free(self.port):
            raise DevStackError(
                f"Port {self.port} (SMTP sink) is busy: stop whatever uses it or set KONNECTZ_SMTP_PORT."
            )
        self.maildir.parent.mkdir(parents=True, exist_ok=True)
        self._controller = Controller(Mailbox(self.maildir), hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None
