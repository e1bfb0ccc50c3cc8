"""URLs as the program prints them: never with the user and password a URL may carry
(``http://user:secret@host/api`` is printed ``http://host/api``), in a message or in an error
text that quotes the URL."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["redacted", "without_secrets"]


def _userinfo(url: str) -> str:
    """The ``user:password@`` part of a URL's authority, or ``""``."""
    try:
        netloc = urlsplit(url.strip()).netloc
    except ValueError:  # not a URL (an unclosed "[" of an IPv6 host): read it by hand
        _, _, rest = url.partition("://")
        netloc = rest.split("/", 1)[0]
    user, at, _ = netloc.rpartition("@")
    return f"{user}{at}" if at else ""


def redacted(url: str) -> str:
    """``url`` without its user and password."""
    userinfo = _userinfo(url)
    return url.replace(userinfo, "", 1) if userinfo else url


def without_secrets(text: str, url: str) -> str:
    """``text`` (an error message that may quote ``url``) with ``url``'s user and password gone
    wherever they appear."""
    userinfo = _userinfo(url)
    if not userinfo:
        return text
    text = text.replace(userinfo, "")
    _, colon, password = userinfo[:-1].partition(":")
    return text.replace(password, "***") if colon and password else text
