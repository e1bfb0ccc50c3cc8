import json

from src.api import handlers


def test_create_and_get():
    status, note = handlers.create_note(json.dumps({"title": " Hello  world ", "body": "x"}))
    assert status == 201
    assert note["title"] == "Hello world"
    assert note["slug"] == "hello-world"
    assert handlers.get_note(note["id"])[0] == 200


def test_body_too_long():
    status, _ = handlers.create_note(json.dumps({"title": "t", "body": "x" * 10_001}))
    assert status == 413


def test_delete_missing():
    assert handlers.delete_note(999)[0] == 404
