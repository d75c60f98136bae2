"""Folders of flows: list, create, rename, remove, and (all-or-nothing) assignment of flows."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from konnectz_api.crud import caps
from konnectz_api.crud.konnects import DELETED, owned_ids
from konnectz_api.models import Folder, Konnect


def get_owned(session: Session, *, owner_id: int, folder_id: int) -> Folder | None:
    folder = session.get(Folder, folder_id)
    return folder if folder is not None and folder.owner_id == owner_id else None


def count_konnects(session: Session, *, owner_id: int, folder_id: int) -> int:
    return (
        session.scalar(
            select(func.count()).where(
                Konnect.owner_id == owner_id, Konnect.folder_id == folder_id, Konnect.status != DELETED
            )
        )
        or 0
    )


def create(session: Session, *, owner_id: int, name: str) -> Folder:
    """Raises :class:`~konnectz_api.crud.caps.PlanLimit` beyond the plan's folders."""
    caps.check(session, owner_id=owner_id, kind="folders")
    folder = Folder(owner_id=owner_id, name=name)
    session.add(folder)
    session.commit()
    return folder


def rename(session: Session, *, folder: Folder, name: str) -> bool:
    """True when the name changed."""
    if folder.name == name:
        return False
    folder.name = name
    session.commit()
    return True


def remove(session: Session, *, folder: Folder) -> int:
    """Delete the folder; its flows return to Home. Returns how many (not deleted) flows moved."""
    moved = session.execute(
        update(Konnect)
        .where(Konnect.owner_id == folder.owner_id, Konnect.folder_id == folder.id)
        .values(folder_id=None)
        .returning(Konnect.status)
    ).all()
    session.delete(folder)
    session.commit()
    return sum(1 for (status,) in moved if status != DELETED)


class NotOwned(LookupError):
    def __init__(self, missing: Sequence[int]) -> None:
        super().__init__(missing)
        self.missing = list(missing)


def assign(session: Session, *, owner_id: int, folder: Folder, konnect_ids: Sequence[int]) -> list[int]:
    """Move every listed flow into ``folder`` in one transaction, or none of them when any id is
    not one of the owner's flows (``NotOwned`` names them)."""
    ids = list(dict.fromkeys(konnect_ids))
    found = owned_ids(session, owner_id=owner_id, ids=ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotOwned(missing)
    session.execute(
        update(Konnect).where(Konnect.owner_id == owner_id, Konnect.id.in_(ids)).values(folder_id=folder.id)
    )
    session.commit()
    return ids
