"""`coverage-gate schema`: print the contracts' JSON Schemas."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from coverage_gate.commands._common import errors_to_exit
from coverage_gate.edges.stdio import write_stdout
from coverage_gate.errors import UsageError

__all__ = ["SCHEMA_NAMES", "published", "schema"]

#: ``coverage_gate.contracts.schemas.SCHEMAS``' names, for --help without loading the models (a test
#: holds them equal).
SCHEMA_NAMES = ("reviewer-output", "evidence", "bundle", "decision", "receipt")


def schema(
    name: Annotated[
        str | None,
        typer.Argument(help=f"One of: {', '.join(SCHEMA_NAMES)}. Without it, all of them."),
    ] = None,
) -> None:
    """Print the JSON Schemas of the contracts."""
    from coverage_gate.contracts.schemas import SCHEMAS  # noqa: PLC0415 - start-up

    with errors_to_exit():
        if name is None:
            document = {key: published(key) for key in SCHEMAS}
        elif name in SCHEMAS:
            document = published(name)
        else:
            raise UsageError(f"unknown schema {name!r}; known: {', '.join(SCHEMAS)}")
        write_stdout(json.dumps(document, indent=2, sort_keys=True) + "\n", "schema")


def published(name: str) -> dict[str, Any]:
    """A contract's JSON Schema; the evidence document's ``source`` names the stream formats it
    takes (the registry's, as `coverage-gate formats` lists them: the model does not know them)."""
    from coverage_gate.contracts.schemas import SCHEMAS  # noqa: PLC0415 - start-up

    document = SCHEMAS[name].model_json_schema(by_alias=True)
    if name == "evidence":
        from coverage_gate.adapters import (  # noqa: PLC0415 - only this schema needs them
            ADAPTERS,
            DOCUMENT_FORMATS,
        )

        source = document["properties"]["source"]
        source["description"] = (
            "The format the evidence was recorded from (see `coverage-gate formats`)."
        )
        source["examples"] = sorted({*ADAPTERS, *DOCUMENT_FORMATS})
    return document
