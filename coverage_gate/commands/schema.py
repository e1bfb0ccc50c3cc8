"""`coverage-gate schema`: print the contracts' JSON Schemas."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from coverage_gate.commands._common import errors_to_exit
from coverage_gate.errors import UsageError
from coverage_gate.stdio import write_stdout

#: ``coverage_gate.schemas.SCHEMAS``' names, for --help without loading the models (a test holds
#: them equal).
SCHEMA_NAMES = ("reviewer-output", "evidence", "bundle", "decision")


def schema(
    name: Annotated[
        str | None,
        typer.Argument(help=f"One of: {', '.join(SCHEMA_NAMES)}. Without it, all of them."),
    ] = None,
) -> None:
    """Print the JSON Schemas of the contracts."""
    from coverage_gate.schemas import SCHEMAS  # noqa: PLC0415 - start-up

    with errors_to_exit():
        if name is None:
            document = {
                key: model.model_json_schema(by_alias=True) for key, model in SCHEMAS.items()
            }
        elif name in SCHEMAS:
            document = SCHEMAS[name].model_json_schema(by_alias=True)
        else:
            raise UsageError(f"unknown schema {name!r}; known: {', '.join(SCHEMAS)}")
        write_stdout(json.dumps(document, indent=2, sort_keys=True) + "\n", "schema")
