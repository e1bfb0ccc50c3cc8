"""The per-deployment disk copy of the last good live answer.

Holds the deployment a live answer belongs to (server URL without credentials, environment, app
name), the path of its copy (a digest of the deployment in the file name), keeping a copy
(``save_disk_copy``, which never fails the run) and the check that a copy read back names the
deployment asking. Reading the copy and evaluating it is ``flags``'s and ``_engine``'s.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from coverage_gate.edges.files import write_atomic
from coverage_gate.rollout._settings import FlagConfigError, FlagSettings

__all__ = [
    "DEPLOYMENT_KEY",
    "check_deployment",
    "deployment",
    "disk_copy_path",
    "save_disk_copy",
]

#: The member of a disk copy that names the deployment it was kept for (the Unleash engine
#: ignores members it does not know, so the copy stays a features document).
DEPLOYMENT_KEY = "coverageGateDeployment"


def deployment(settings: FlagSettings) -> dict[str, str]:
    """The deployment a live answer belongs to: server URL (without credentials or a trailing
    slash), environment and app name."""
    raw = (settings.unleash_url or "").strip()
    try:
        parts = urlsplit(raw)
    except ValueError:  # not a URL (an unclosed "[" of an IPv6 host): the fetch will say so
        scheme, separator, rest = raw.partition("://")
        url = f"{scheme}{separator}{rest.rpartition('@')[2]}" if separator else raw
    else:
        netloc = parts.netloc.rpartition("@")[2].lower()  # user:password@ is never written down
        url = urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), "", ""))
    return {"url": url, "environment": settings.environment, "appName": settings.app_name}


def disk_copy_path(settings: FlagSettings) -> Path | None:
    """Where this deployment's disk copy lives: beside the configured path, its name carrying a
    digest of the deployment (``flags.json`` → ``flags.3f2a9c0d1e4b5a67.json``); ``None`` when
    the disk copy is off."""
    base = settings.disk_copy
    if base is None:
        return None
    key = json.dumps(deployment(settings), sort_keys=True).encode()
    digest = hashlib.sha256(key).hexdigest()[:16]
    return base.with_name(f"{base.stem}.{digest}{base.suffix or '.json'}")


def save_disk_copy(settings: FlagSettings, text: str) -> str:
    """Keep the last good document of this deployment, naming the deployment inside; a copy that
    cannot be written never fails the run (the note says why)."""
    path = disk_copy_path(settings)
    if path is None:
        return ""
    try:
        document = json.loads(text)
        document[DEPLOYMENT_KEY] = deployment(settings)
        write_atomic(path, json.dumps(document), make_parents=True)  # its folder may be new
    except OSError as error:
        return f"; disk copy not saved to {path} ({error})"
    return ""


def check_deployment(text: str, settings: FlagSettings, path: Path) -> None:
    """A copy is trusted only by the deployment it names."""
    named = json.loads(text).get(DEPLOYMENT_KEY)
    if named is None:
        raise FlagConfigError(
            f"disk copy {path} names no deployment (kept before copies were kept per "
            "deployment): not trusted"
        )
    if named != deployment(settings):
        raise FlagConfigError(f"disk copy {path} was kept for another deployment ({named})")
