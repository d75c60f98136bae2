"""Reads the dev SMTP sink's Maildir for /dev/mail and /dev/mail.json."""

from __future__ import annotations

import mailbox
import re
from email.message import Message
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

_LINK = re.compile(r"https?://[^\s<>\"')]+")


def _text_of(msg: Message) -> str:
    if msg.is_multipart():
        for part in msg.walk():
            if part.get_content_type() == "text/plain":
                payload = part.get_payload(decode=True)
                if isinstance(payload, bytes):
                    return payload.decode(part.get_content_charset() or "utf-8", errors="replace")
        return ""
    payload = msg.get_payload(decode=True)
    if isinstance(payload, bytes):
        return payload.decode(msg.get_content_charset() or "utf-8", errors="replace")
    return str(msg.get_payload())


def read_mail(maildir: Path, limit: int = 100) -> list[dict[str, Any]]:
    if not maildir.exists():
        return []
    box = mailbox.Maildir(str(maildir), create=False)
    items: list[tuple[tuple[float, str], dict[str, Any]]] = []
    for key, msg in box.iteritems():
        try:
            date = parsedate_to_datetime(msg["Date"]).isoformat() if msg["Date"] else None
        except (TypeError, ValueError):
            date = None
        text = _text_of(msg)
        mtime = (maildir / "new" / key).stat().st_mtime if (maildir / "new" / key).exists() else 0.0
        items.append(
            (
                (mtime, date or ""),
                {
                    "id": key,
                    "to": msg["To"] or "",
                    "subject": msg["Subject"] or "",
                    "date": date,
                    "text": text,
                    "links": _LINK.findall(text),
                },
            )
        )
    items.sort(key=lambda pair: pair[0], reverse=True)
    return [item for _, item in items[:limit]]
