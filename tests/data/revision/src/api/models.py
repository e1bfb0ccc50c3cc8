from dataclasses import dataclass, field
import time

from src.util.strings import slugify

MAX_BODY = 10_000


@dataclass
class Note:
    id: int
    title: str
    body: str
    created: float = field(default_factory=time.time)

    @property
    def slug(self):
        return slugify(self.title)

    def to_dict(self):
        return {"id": self.id, "title": self.title, "slug": self.slug, "body": self.body,
                "created": self.created}


class NoteStore:
    def __init__(self):
        self._notes = {}
        self._next = 1

    def add(self, title, body):
        if len(body) > MAX_BODY:
            raise ValueError("body too long")
        note = Note(self._next, title, body)
        self._notes[note.id] = note
        self._next += 1
        return note

    def get(self, note_id):
        return self._notes.get(note_id)

    def delete(self, note_id):
        return self._notes.pop(note_id, None) is not None

    def all(self, limit=None):
        notes = sorted(self._notes.values(), key=lambda n: n.created, reverse=True)
        return notes if limit is None else notes[:limit]
