import json

from src.api.models import NoteStore
from src.util.strings import clean_title

STORE = NoteStore()


def create_note(request_body):
    data = json.loads(request_body)
    title = clean_title(data["title"])
    try:
        note = STORE.add(title, data.get("body", ""))
    except ValueError:
        return 413, {"error": "body too long"}
    return 201, note.to_dict()


def get_note(note_id):
    note = STORE.get(int(note_id))
    if note is None:
        return 404, {"error": "not found"}
    return 200, note.to_dict()


def delete_note(note_id):
    if not STORE.delete(int(note_id)):
        return 404, {"error": "not found"}
    return 204, None


def list_notes(limit=None):
    limit = int(limit) if limit is not None else None
    return 200, [n.to_dict() for n in STORE.all(limit)]


ROUTES = {
    ("POST", "/notes"): create_note,
    ("GET", "/notes"): list_notes,
    ("GET", "/notes/<id>"): get_note,
    ("DELETE", "/notes/<id>"): delete_note,
}
