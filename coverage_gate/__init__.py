"""coverage-gate: reconcile an AI code reviewer's claimed coverage with the reads it performed.

``__version__`` is the installed distribution's version, read when first asked for (reading
package metadata costs start-up time no command needs)."""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    if name == "__version__":
        import importlib.metadata  # noqa: PLC0415 - only when asked

        try:
            return importlib.metadata.version("coverage-gate")
        except importlib.metadata.PackageNotFoundError:
            return "0+unknown"  # a checkout that was never installed
    raise AttributeError(f"module 'coverage_gate' has no attribute {name!r}")
