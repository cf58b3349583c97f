"""``afm-local``: pack a history, classify messages, manage models and API keys, serve.

Errors are one line on stderr and exit code 2, naming the fix where there is one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from pydantic import ValidationError

from .core.config import CALL_OPTIONS, AFMConfig, check_budget
from .core.errors import AFMError, InvalidInput, missing_extra
from .core.turns import Turn, as_turn

if TYPE_CHECKING:
    from .server.settings import ServerSettings

MAX_INPUT_BYTES = 64 * 1024 * 1024
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CONVENTIONAL_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")  # named in an error; anything else may be a key


class UsageError(AFMError):
    """Bad command-line input: printed as one line, exit code 2."""


def _fail(message: str) -> NoReturn:
    print(f"afm-local: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _read_text(source: str) -> str:
    if source == "-":
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        path = Path(source)
        if not path.is_file():
            raise UsageError(f"no such file: {source}")
        if path.stat().st_size > MAX_INPUT_BYTES:
            raise UsageError(f"{source} is larger than {MAX_INPUT_BYTES} bytes")
        data = path.read_bytes()
    if len(data) > MAX_INPUT_BYTES:
        raise UsageError(f"input is larger than {MAX_INPUT_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{source}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def load_history(source: str) -> tuple[list[Turn], dict[str, Any]]:
    """A JSON list of ``{"role","content"}``, or an object with ``"messages"`` (and optional extras); the
    messages become ``Turn`` records (``core.turns.as_turn``). A content may be OpenAI content parts:
    text, image_url (base64 data: URLs; http(s) URLs are kept, never fetched) and file (file_data)."""
    try:
        data = json.loads(_read_text(source))
    except json.JSONDecodeError as exc:
        raise UsageError(f"{source}: malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    extras: dict[str, Any] = {}
    if isinstance(data, dict):
        extras = data
        data = data.get("messages")
    if not isinstance(data, list):
        raise UsageError(f'{source}: expected a list of messages or an object with "messages"')
    turns = []
    for i, row in enumerate(data):
        try:
            turns.append(as_turn(row))
        except InvalidInput as exc:
            raise UsageError(f"{source}: message {i}: {exc}") from None
    return turns, extras


def _cmd_pack(args: argparse.Namespace) -> int:
    from .engine.manager import FocusManager
    from .local.components import local_components

    check_budget(args.budget, name="--budget")
    history, extras = load_history(args.history)
    query = args.query if args.query is not None else extras.get("query")
    if not isinstance(query, str) or not query.strip():
        raise UsageError('--query is required (or a "query" field in the history file)')
    preamble = args.preamble if args.preamble is not None else extras.get("preamble")
    chosen = {k: getattr(args, k) for k in ("render", "packing", "fill", "spend", "overflow") if getattr(args, k)}
    config = AFMConfig.paper(**chosen) if args.preset == "paper" else AFMConfig(**chosen)
    # One-shot packing cannot wait for a background model: the extractive forms are used.
    with FocusManager(config, components=local_components(config, threads=args.threads)) as fm:
        fm.add_messages(history)
        ctx = fm.build_context(query, args.budget, preamble)
    if args.format == "json":
        out = ctx.to_dict()
        json.dump(
            {k: out[k] for k in ("messages", "items", "tokens_used", "budget_tokens")},
            sys.stdout,
            ensure_ascii=False,
            indent=2,
        )
        print()
    else:
        _print_text(ctx)
    return 0


def _print_text(ctx: Any) -> None:
    from .core.accounting import content_text

    print(f"tokens used {ctx.tokens_used} of {ctx.budget_tokens} · render {ctx.render} · packing {ctx.packing}")
    print(
        f"{'#':>4}  {'role':<9} {'importance':<10} {'score':>6}  {'intended':<11} {'fidelity':<11} {'tok':>4}  "
        f"{'text':<48}  reason"
    )
    for it in ctx.items:
        text = " ".join(it.text.split())
        print(
            f"{it.index:>4}  {it.role:<9} {it.importance.value:<10} {it.score:>6.3f}  {it.intended.value:<11} "
            f"{it.fidelity.value:<11} {it.tokens:>4}  {text[:48]:<48}  {it.reason}"
        )
    print()
    for msg in ctx.messages:
        content = msg.get("content") or ""  # None: an assistant message that only calls tools
        print(f"--- {msg['role']}")
        print(content_text(content))
        for call in msg.get("tool_calls") or ():
            print(f"[calls {call['function']['name']}({call['function']['arguments']})]")
        if not isinstance(content, str):
            for part in content:
                if part.get("type") == "image_url":
                    url, detail = part["image_url"]["url"], part["image_url"]["detail"]
                    print(f"[image part, detail {detail}: {url[:48]}{'…' if len(url) > 48 else ''}]")


def _cmd_classify(args: argparse.Namespace) -> int:
    from .core.tags import parse_tag
    from .core.types import Utterance
    from .core.vocabulary import ROLES
    from .local.components import local_classifier

    rows = []
    for n, line in enumerate(_read_text(args.file).splitlines(), 1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"line {n}: malformed JSON: {exc.msg}") from None
            if not isinstance(row, dict) or not isinstance(row.get("text"), str):
                raise UsageError(f'line {n}: a JSON line needs a string "text" (and optionally "role")')
            if row.get("role", "user") not in ROLES:
                raise UsageError(f"line {n}: unknown role {row.get('role')!r}; expected one of {', '.join(ROLES)}")
            rows.append((row["text"], row.get("role", "user")))
        else:
            rows.append((line, "user"))
    classifier = local_classifier(threads=args.threads)
    split = [(parse_tag(text), role) for text, role in rows]
    verdicts = classifier.classify([Utterance(body, role) for (_, body), role in split])
    for (text, role), ((tag, _), _), verdict in zip(rows, split, verdicts):
        label = tag.value if tag is not None else verdict.label.value
        source = "tag" if tag is not None else verdict.source
        print(
            json.dumps(
                {"text": text, "role": role, "label": label, "scores": verdict.scores, "source": source},
                ensure_ascii=False,
            )
        )
    return 0


def _cmd_models(args: argparse.Namespace) -> int:
    from .local import model_files as models

    if args.action == "list":
        for spec in models.load_manifest().values():
            found = {status.state for status in models.verify(names=[spec.name])}
            state = "ok" if found == {"ok"} else "missing" if "missing" in found else "corrupt"
            size = sum(f.size or 0 for f in spec.files) / 1e6
            flag = " (optional)" if spec.optional else ""
            print(f"{spec.name:<30} {spec.kind:<10} {size:>8.1f} MB  {state}{flag}  {spec.description[:70]}")
        return 0
    if args.action == "verify":
        statuses = models.verify(names=args.names or None)
        bad = [status for status in statuses if status.state != "ok"]
        for status in statuses:
            print(f"{status.state:<8} {status.name:<30} {status.path}")
        if bad:
            names = " ".join(sorted({status.name for status in bad}))
            raise UsageError(f"{len(bad)} model file(s) missing or corrupt; run `afm-local models install {names}`")
        return 0
    local = {}
    for item in args.from_ or []:
        name, _, path = item.partition("=")
        if not path:
            raise UsageError(f"--from expects NAME=PATH, got {item!r}")
        local[name] = Path(path)
    results = models.install(names=args.names or None, include_optional=args.optional, local=local)
    models.clean_wheels()  # downloaded wheels were only the transport of their members
    for status in results:
        print(f"{status.state:<9} {status.name:<30} {status.path}")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    from .server import run_server
    from .server.store import is_postgres_url, redact_url

    settings = server_settings(args)
    db = str(settings.db)
    if is_postgres_url(db) and db != os.environ.get("AFM_DB") and redact_url(db) != db:
        print(
            "afm-local: warning: the --db password is visible to every local user in `ps`; "
            "use PGPASSWORD, ~/.pgpass or $AFM_DB instead",
            file=sys.stderr,
        )
    run_server(settings)
    return 0


def _cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from .server.mcp import run_stdio
    except ImportError as exc:
        if not missing_extra(exc, "mcp"):
            raise
        raise UsageError("afm-local mcp needs the MCP SDK: pip install 'afm-local[mcp]'") from None
    from .server import ServerSettings

    db_key = _key_from(args.db_key_env, "--db-key-env")
    run_stdio(ServerSettings(db=args.db, db_key=db_key, threads=args.threads))
    return 0


def server_settings(args: argparse.Namespace) -> ServerSettings:
    """The one ``ServerSettings`` of ``afm-local serve``: the flags that were given, the settings' own
    defaults for the rest, the API keys read from the environment variables the flags name."""
    from dataclasses import fields

    from .server import ServerSettings

    given = {f.name: getattr(args, f.name) for f in fields(ServerSettings) if hasattr(args, f.name)}
    return ServerSettings(
        **given,
        api_key=_key_from(args.api_key_env, "--api-key-env"),
        db_key=_key_from(args.db_key_env, "--db-key-env"),
        upstream_api_key=_key_from(args.upstream_api_key_env, None),
        config=AFMConfig(compressor_model=args.compressor_model),
    )


def _cmd_keys(args: argparse.Namespace) -> int:
    """Create, list or revoke the API keys of tenants, straight in the store (no server needed)."""
    from .server.auth import create_key
    from .server.store import open_store

    if args.action != "list" and not args.tenant:
        raise UsageError(f"keys {args.action} needs --tenant NAME")
    store = open_store(args.db, pool_size=1, encryption_key=_key_from(args.db_key_env, "--db-key-env"))
    try:
        if args.action == "create":
            record, key = create_key(store.keys, args.tenant)
            print(key)  # shown once: only its digest is stored
            print(f"created key {record.key_id} for tenant {record.tenant}; it is not shown again", file=sys.stderr)
        elif args.action == "revoke":
            count = store.keys.revoke(args.tenant, args.key_id)
            print(f"revoked {count} key(s) of tenant {args.tenant}", file=sys.stderr)
            if not count:
                raise UsageError(f"tenant {args.tenant} has no active key{' ' + args.key_id if args.key_id else ''}")
        else:
            for k in store.keys.list(args.tenant):
                state = "revoked" if k.revoked is not None else "active"
                created = time.strftime("%Y-%m-%d %H:%M", time.gmtime(k.created))
                print(f"{k.key_id}  {k.tenant:<24} {state:<8} created {created}")
    finally:
        store.close()
    return 0


def _limit(text: str) -> int | None:
    """A positive limit; 0 is none."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (no limit) or positive")
    return value or None


def _key_from(variable: str | None, flag: str | None) -> str | None:
    """The key in environment variable ``variable``; a variable named by ``flag`` must be set (the server
    refuses to start open by mistake). The error never repeats what was given: a key pasted in place of
    the variable's name would be printed."""
    if not variable:
        return None
    if not ENV_NAME.fullmatch(variable):
        raise UsageError(f"{flag or 'the flag'} takes the name of an environment variable (A-Z, 0-9, _), not a key")
    key = os.environ.get(variable)
    if flag and not key:
        named = variable if CONVENTIONAL_ENV_NAME.fullmatch(variable) else "the environment variable it names"
        raise UsageError(f"{flag} {named}: that environment variable is not set or empty")
    return key or None


class _RefusedKey(argparse.Action):
    """A key given on the command line (where ``ps`` shows it to every local user): refused, never echoed."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: str | None = None) -> None:
        parser.error(
            f"{option} is not accepted: keys never go on the command line; put the key in an "
            f"environment variable and name it with {option}-env"
        )


def _refuse_keys(parser: argparse.ArgumentParser, *flags: str) -> None:
    for flag in flags:
        dest = "refused_" + flag.strip("-").replace("-", "_")
        parser.add_argument(flag, nargs="?", dest=dest, action=_RefusedKey, default=None, help=argparse.SUPPRESS)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="afm-local", description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument(
        "--threads",
        type=int,
        default=int(os.environ.get("AFM_THREADS", "1")),
        help="threads for local models (default 1, or $AFM_THREADS)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _add_pack(sub)
    _add_classify_and_models(sub)
    _add_serve(sub)
    _add_mcp(sub)
    _add_keys(sub)
    return parser


def _add_keys(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from .server.settings import ServerSettings

    k = sub.add_parser("keys", allow_abbrev=False, help="create, list or revoke tenants' API keys (stored hashed)")
    k.add_argument("action", choices=["create", "list", "revoke"])
    k.add_argument("--tenant", help="the tenant (a-z 0-9 _ . -; 'default' is --api-key-env's tenant)")
    k.add_argument("--key-id", default=None, help="revoke only this key (default: every key of the tenant)")
    k.add_argument("--db", default=str(ServerSettings().db), help="as for serve")
    k.add_argument("--db-key-env", default=None, help="as for serve: the encrypted store's key")
    _refuse_keys(k, "--db-key")
    k.set_defaults(func=_cmd_keys)


def _add_pack(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("pack", allow_abbrev=False, help="pack a conversation into a token budget")
    p.add_argument("history", help='JSON list of {role, content}, an object with "messages", or - for stdin')
    p.add_argument("--query", help='the current user query (default: the file\'s "query")')
    p.add_argument("--budget", type=int, required=True, help="token budget for everything sent")
    p.add_argument("--preamble", help='system preamble (default: the file\'s "preamble")')
    p.add_argument(
        "--preset",
        choices=["default", "paper"],
        default="default",
        help="default: the best measured configuration; paper: the AFM paper exactly",
    )
    for name, allowed in CALL_OPTIONS.items():
        field = AFMConfig.model_fields[name]
        p.add_argument(
            f"--{name}",
            choices=list(allowed),
            help=f"{field.description} (default: the preset's, {field.default} in the default one)",
        )
    p.add_argument("--format", choices=["json", "text"], default="text")
    p.set_defaults(func=_cmd_pack)


def _add_classify_and_models(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    c = sub.add_parser("classify", allow_abbrev=False, help="label messages CRITICAL / RELEVANT / TRIVIAL (JSONL out)")
    c.add_argument(
        "file",
        nargs="?",
        default="-",
        help='one message per line (role user), or JSONL with "text" and "role"; - for stdin',
    )
    c.set_defaults(func=_cmd_classify)

    m = sub.add_parser("models", allow_abbrev=False, help="install, list or verify local model files")
    m.add_argument("action", choices=["install", "list", "verify"])
    m.add_argument("names", nargs="*", help="model names from models/manifest.json (default: all)")
    m.add_argument("--no-optional", dest="optional", action="store_false", help="skip optional models")
    m.add_argument("--from", dest="from_", action="append", metavar="NAME=PATH", help="install NAME from a local file")
    m.set_defaults(func=_cmd_models)


def _add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Every flag defaults to "not given", so that ``server_settings`` leaves it to ``ServerSettings``."""
    from .server.settings import DEFAULT_DB, SYNCHRONOUS, ServerSettings

    s = sub.add_parser(
        "serve",
        allow_abbrev=False,
        help="run the local memory service (HTTP)",
        argument_default=argparse.SUPPRESS,
        description="Flags left out take ServerSettings' defaults (afm_local/server/settings.py).",
    )
    d = ServerSettings()
    s.add_argument("--host", help=f"address to listen on (default {d.host})")
    s.add_argument("--port", type=int, help=f"port (default {d.port})")
    s.add_argument(
        "--db",
        help=f"SQLite database path, or postgresql://USER@HOST/DB shared by several workers "
        f"(default $AFM_DB, else {DEFAULT_DB}; keep a password out of the command line, where ps "
        "shows it: PGPASSWORD, ~/.pgpass or $AFM_DB)",
    )
    _add_serve_access(s, d)
    s.add_argument("--budget", type=int, help=f"default token budget for proxied chats (default {d.budget})")
    s.add_argument(
        "--workers",
        type=int,
        help=f"worker processes sharing the port (default {d.workers}); more than one wants a "
        "postgresql:// --db or a SQLite file on a local disk",
    )
    s.add_argument(
        "--concurrency",
        type=int,
        help=f"requests doing model or store work at once in each worker (default {d.concurrency})",
    )
    s.add_argument(
        "--synchronous",
        choices=SYNCHRONOUS,
        help=f"SQLite durability (default {d.synchronous}): NORMAL survives a process kill, FULL also "
        "a power loss (PostgreSQL commits are always flushed)",
    )
    s.add_argument(
        "--compressor-model",
        metavar="NAME",
        default=None,
        help="background GGUF model (manifest name or .gguf path) that names topics; none by default",
    )
    s.add_argument(
        "--no-abstractive",
        dest="abstractive",
        action="store_false",
        help="extractive compression only (no background GGUF model)",
    )
    s.add_argument(
        "--otel",
        action="store_true",
        help="OpenTelemetry spans of every ingest and build (the otel extra; OTLP where OTEL_EXPORTER_OTLP_* say)",
    )
    s.add_argument("--threads", type=int, help="threads for local models")
    s.set_defaults(func=_cmd_serve)


def _add_serve_access(s: argparse.ArgumentParser, d: ServerSettings) -> None:
    """serve's upstreams, keys, store encryption, rate limits and quotas."""
    s.add_argument("--upstream", help="OpenAI-compatible upstream base URL for /v1/chat/completions and /v1/responses")
    s.add_argument(
        "--anthropic-upstream", help="Anthropic Messages upstream base URL for /v1/messages (default: --upstream)"
    )
    s.add_argument("--api-key-env", default=None, help="name of the environment variable holding the API key")
    s.add_argument("--upstream-api-key-env", default=None, help="environment variable with the upstream's own API key")
    s.add_argument(
        "--db-key-env",
        default=None,
        help="environment variable holding the key of an encrypted SQLite store (SQLCipher, the encryption extra)",
    )
    s.add_argument(
        "--rate-limit", type=float, help=f"requests/s per key and worker, 0: none (default {d.rate_limit:g})"
    )
    s.add_argument("--rate-burst", type=int, help=f"requests a key may make at once (default {d.rate_burst})")
    _refuse_keys(s, "--api-key", "--db-key", "--upstream-api-key")
    s.add_argument(
        "--allowed-host",
        dest="allowed_hosts",
        action="append",
        metavar="NAME",
        help="a Host name this server answers besides the loopback names and --host (repeatable; '*': any)",
    )
    s.add_argument(
        "--allowed-origin",
        dest="allowed_origins",
        action="append",
        metavar="ORIGIN",
        help="a web origin (https://app.example) whose pages may call the API, CORS included (repeatable; "
        "default: none)",
    )
    s.add_argument(
        "--tenant-concurrency",
        type=int,
        help="requests of one tenant in flight at once per worker (default: --concurrency minus 1, at least 1)",
    )
    s.add_argument(
        "--tenant-queue",
        type=int,
        help=f"requests of one tenant waiting for their turn before it gets 429s (default {d.tenant_queue})",
    )
    s.add_argument(
        "--header-timeout",
        dest="header_timeout_s",
        type=float,
        help=f"seconds a client has to send a request's headers (default {d.header_timeout_s:g})",
    )
    s.add_argument(
        "--body-timeout",
        dest="body_timeout_s",
        type=float,
        help=f"seconds a request's body has to arrive after its headers (default {d.body_timeout_s:g})",
    )
    s.add_argument(
        "--max-connections",
        type=int,
        help=f"open connections per worker before requests are answered 503 (default {d.max_connections})",
    )
    s.add_argument(
        "--auth-failures-per-minute",
        type=int,
        help=f"wrong keys from one address a minute before it gets 429s (default {d.auth_failures_per_minute})",
    )
    s.add_argument(
        "--max-body-bytes",
        type=int,
        help=f"largest request body, base64 images and tool results included (default {d.max_body_bytes:,}; "
        "larger: 413)",
    )
    for what in ("sessions", "messages", "bytes"):
        default = getattr(d, f"quota_{what}")
        s.add_argument(
            f"--quota-{what}", type=_limit, help=f"{what} stored per tenant, 0: no limit (default {default})"
        )


def _add_mcp(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from .server.settings import ServerSettings

    m = sub.add_parser(
        "mcp", allow_abbrev=False, help="serve the memory tools over MCP on stdin/stdout, as the default tenant"
    )
    m.add_argument(
        "--db",
        default=str(ServerSettings().db),
        help="the session store, as for serve (default $AFM_DB, else afm-local.db)",
    )
    m.add_argument("--db-key-env", default=None, help="as for serve: the encrypted store's key")
    _refuse_keys(m, "--db-key")
    m.set_defaults(func=_cmd_mcp)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except AFMError as exc:
        _fail(str(exc).splitlines()[0])
    except ValidationError as exc:  # an AFMConfig built from bad flags
        _fail(str(exc).splitlines()[0])


if __name__ == "__main__":
    raise SystemExit(main())
