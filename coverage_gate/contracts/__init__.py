"""What crosses a boundary: the pydantic contracts (reviewer output, evidence, decision,
receipt), the enums they carry, the plain-value form of the evidence document, the defaults and
bounds, and the client versions each adapter was checked with. Their JSON Schemas are published
(`coverage-gate schema`). Imports nothing else of the package."""
