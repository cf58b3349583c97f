"""What ``--db`` names: a PostgreSQL URL or a SQLite file, and how a URL may be shown."""

from __future__ import annotations

from urllib.parse import urlsplit

POSTGRES_SCHEMES = ("postgresql", "postgres")


def is_postgres_url(db: object) -> bool:
    return isinstance(db, str) and urlsplit(db).scheme in POSTGRES_SCHEMES and "://" in db


def redact_url(url: str) -> str:
    """``url`` with its password (in the authority or a ``password=`` parameter) replaced by ``***``:
    what logs, errors and benchmark reports may show."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user, has_password, _ = userinfo.partition(":")
        netloc = f"{user}:***@{host}" if has_password else f"{user}@{host}"
    query = "&".join("password=***" if p.partition("=")[0].lower() == "password" else p for p in parts.query.split("&"))
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
