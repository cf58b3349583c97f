"""The HTTP server: real processes on loopback, real SQLite and PostgreSQL, a real browser."""
