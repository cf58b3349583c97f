#!/usr/bin/env python
"""Install, verify and list the model files of ``models/manifest.json``.

A thin entry over ``afm_local.models`` (``install``, ``verify``, ``load_manifest``); all logic lives
there. Every file is checked against its pinned sha256; files already in place and verified are left
alone, so a re-run does nothing.

    python scripts/download_models.py install                    # everything, optional models too
    python scripts/download_models.py install --no-optional      # required models only
    python scripts/download_models.py install qwen2.5-coder-0.5b-instruct
    python scripts/download_models.py install --from qwen2.5-coder-0.5b-instruct=/path/file.gguf
    python scripts/download_models.py verify                     # exit 2 if a file is missing/corrupt
    python scripts/download_models.py list

Exit status: 0 when everything asked for is in place and verified, 2 when a file is missing or
corrupt or cannot be installed (the message names the command that fixes it), 1 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from afm_local import models  # noqa: E402

FIX = "python scripts/download_models.py install"


def _parse_from(values: list[str]) -> dict[str, Path]:
    out = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"--from expects NAME=PATH, got {value!r}")
        out[name] = Path(path).expanduser()
    return out


def cmd_install(args: argparse.Namespace) -> int:
    local = _parse_from(args.from_ or [])
    names = list(args.names) or None
    try:
        results = models.install(
            root=args.root, names=names, include_optional=not args.no_optional, local=local or None
        )
    except models.ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(f"fix: check the network / the --from path, then re-run `{FIX}`", file=sys.stderr)
        return 2
    done = sum(r.state == "installed" for r in results)
    for r in results:
        print(f"{r.state:<9} {r.name:<30} {r.path}")
    print(f"{done} file(s) installed, {len(results) - done} already verified")
    # Confirm: every file asked for now verifies.
    return _report(models.verify(args.root, names=[r.name for r in results] or None), quiet=True)


def _report(statuses: list[models.FileStatus], quiet: bool = False) -> int:
    bad = [s for s in statuses if s.state != "ok"]
    if not quiet:
        for s in statuses:
            print(f"{s.state:<8} {s.name:<30} {s.path}")
    if bad:
        names = sorted({s.name for s in bad})
        for s in bad:
            print(f"error: {s.path} is {s.state}", file=sys.stderr)
        print(f"fix: run `{FIX} {' '.join(names)}`", file=sys.stderr)
        return 2
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    specs = models.load_manifest(args.root)
    names = list(args.names) or None
    unknown = set(names or []) - set(specs)
    if unknown:
        print(f"error: unknown model(s) {sorted(unknown)}; known: {sorted(specs)}", file=sys.stderr)
        return 1
    statuses = models.verify(args.root, names=names)
    if names is None and not args.all:
        # Optional models that were never installed are not an error; a corrupt one is.
        optional = {n for n, s in specs.items() if s.optional}
        statuses = [s for s in statuses if not (s.name in optional and s.state == "missing")]
    code = _report(statuses)
    if code == 0:
        print(f"{len(statuses)} file(s) verified")
    return code


def cmd_list(args: argparse.Namespace) -> int:
    specs = models.load_manifest(args.root)
    states: dict[str, list[str]] = {}
    for s in models.verify(args.root):
        states.setdefault(s.name, []).append(s.state)
    for name, spec in specs.items():
        st = states.get(name, [])
        state = "ok" if st and all(x == "ok" for x in st) else ("corrupt" if "corrupt" in st else "missing")
        size = sum(f.size or 0 for f in spec.files)
        flag = "optional" if spec.optional else "required"
        print(f"{name:<30} {spec.kind:<10} {flag:<9} {state:<8} {size / 1e6:8.1f} MB  {spec.description[:70]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=None, help="models folder (default $AFM_MODELS_DIR or models/)")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("install", help="install (or the named) models; verified files are left alone")
    p.add_argument("names", nargs="*")
    p.add_argument("--no-optional", action="store_true", help="skip models marked optional")
    p.add_argument("--from", dest="from_", action="append", metavar="NAME=PATH",
                   help="use a local file for a model (still sha256-checked); repeatable")
    p.set_defaults(func=cmd_install)
    p = sub.add_parser("verify", help="check every installed file's sha256; exit 2 if missing or corrupt")
    p.add_argument("names", nargs="*")
    p.add_argument("--all", action="store_true", help="also fail on optional models that are not installed")
    p.set_defaults(func=cmd_verify)
    p = sub.add_parser("list", help="list the manifest's models and their state")
    p.set_defaults(func=cmd_list)
    args = ap.parse_args(argv)
    try:
        return args.func(args)
    except models.ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
