"""`hanasu doctor`: a plain-text report of this machine and this install, to paste into an issue.

OS, Python, the app version, GPU and driver, the llama-cpp-python build, audio devices and the
ones in use, every model present with its hash check, disk space, and the tier the app
recommends and why. It never touches the network (the hub is switched off for it, see
app/privacy.py) and holds nothing from conversations; the home folder is written as `~`.
Exit code 1 when a check found a problem (a damaged model, say), else 0.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import sys
from pathlib import Path
from typing import TextIO

from app.gpu import driver_version
from app.models.catalog import ROLES, Catalog, ModelEntry, load_catalog
from app.models.endpoint import ENV, hub_endpoint
from app.models.errors import ModelError
from app.models.hashing import stamp_matches
from app.models.machine import MachineFacts, MachineProbe, SystemProbe
from app.models.recommend import advise
from app.models.resolve import is_present, resolve, search_dirs
from app.models.tiers import GIB
from app.models.units import human
from app.models.verify import entry_location, verify
from app.paths import repo_root
from app.storage.settings import Settings, load_settings


def _home(path: Path | str) -> str:
    text = str(path)
    home = str(Path.home())
    return "~" + text[len(home):] if home and text.startswith(home) else text


def app_version() -> str:
    """The installed version, or the checkout's pyproject version (a clean clone)."""
    try:
        return importlib.metadata.version("hanasu")
    except importlib.metadata.PackageNotFoundError:
        pass
    import tomllib

    try:
        with (repo_root() / "pyproject.toml").open("rb") as fh:
            return f"{tomllib.load(fh)['project']['version']} (checkout, not installed)"
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
        return "unknown"


class _Report:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.problems: list[str] = []

    def section(self, title: str) -> None:
        self.out.write(f"\n== {title}\n")

    def line(self, key: str, value: str) -> None:
        self.out.write(f"{key + ':':<22}{value}\n")

    def problem(self, text: str) -> None:
        self.problems.append(text)
        self.out.write(f"  PROBLEM: {text}\n")


def _system(rep: _Report, facts: MachineFacts) -> None:
    rep.section("System")
    rep.line("app", f"hanasu {app_version()}")
    rep.line("os", facts.system)
    rep.line("python", f"{platform.python_implementation()} {platform.python_version()} "
             f"({_home(sys.executable)})")
    rep.line("cpu cores", str(facts.cores))
    ram = facts.ram_bytes
    # GiB first: the tier lines below count memory as operating systems show it
    rep.line("ram", f"{ram / GIB:.1f} GiB ({human(ram)})" if ram else "unknown")


def _audio(rep: _Report, settings: Settings) -> None:
    rep.section("Audio")
    try:
        from app.adapters.audio_devices import AudioDeviceError, list_devices
    except ImportError as exc:
        rep.line("devices", f"cannot be listed ({exc})")
        return
    try:
        devices = list_devices()
    except AudioDeviceError as exc:
        rep.line("devices", str(exc))
        return
    for kind, items, chosen in (("input", devices.inputs, settings.input_device),
                                ("output", devices.outputs, settings.output_device)):
        default = next((d.name for d in items if d.is_default), None)
        use = chosen or (f"system default ({default})" if default else "system default (none)")
        if chosen and all(d.name != chosen for d in items):
            use += " — not connected now; the system default is used"
        rep.line(f"{kind} in use", use)
        if not items:
            rep.line(f"{kind} devices", "none")
        for d in items:
            mark = " (default)" if d.is_default else ""
            rep.out.write(f"{'':<22}- {d.name}, {d.default_rate} Hz{mark}\n")


def _check_entry(rep: _Report, entry: ModelEntry, root: Path, hash_models: bool) -> None:
    where = f"{entry.role} {entry.variant}"
    if entry.downloadable and all(stamp_matches(root, f.name, f.sha256) for f in entry.files
                                  if f.sha256):
        rep.out.write(f"  {where}: {entry.title} in {_home(root)}: ok "
                      "(hashed before, unchanged since)\n")
        return
    if not hash_models:
        rep.out.write(f"  {where}: {entry.title} in {_home(root)}: not hashed (--no-hash)\n")
        return
    checks = verify(entry, root=root)
    bad = [c for c in checks if c.state not in ("ok", "unverified")]
    unverified = [c for c in checks if c.state == "unverified"]
    verdict = "ok" if not bad and not unverified else "unverified" if not bad else "DAMAGED"
    rep.out.write(f"  {where}: {entry.title} in {_home(root)}: {verdict}\n")
    for check in bad + unverified:
        rep.out.write(f"      {check.name}: {check.state} {check.detail}\n")
    if bad:
        rep.problem(f"{where} is damaged: run `hanasu models verify {entry.role}`")


def _models(rep: _Report, catalog: Catalog, hash_models: bool) -> None:
    rep.section("Models (present ones, each hashed against its expected sha256)")
    for _, base in search_dirs():
        rep.line("models folder", _home(base))
    downloaded = [(entry, base) for role in ROLES for entry in catalog.downloadable(role)
                  for _, base in search_dirs() if is_present(entry, base)]
    if not downloaded:
        rep.line("downloaded", "none yet (the built-in models below ship with the app)")
    for entry, base in downloaded:
        _check_entry(rep, entry, entry_location(entry, base), hash_models)
    for role in ROLES:
        for entry in catalog.roles[role].values():
            if entry.downloadable:
                continue
            try:
                root = entry_location(entry)
            except ModelError as exc:  # the package is not installed
                rep.problem(f"{role} embedded: {exc}")
                continue
            _check_entry(rep, entry, root, hash_models)


def _downloads(rep: _Report, settings: Settings) -> None:
    """Where a download would come from (no request is made)."""
    rep.section("Downloads")
    try:
        mirror = hub_endpoint(settings.model_endpoint)
    except ModelError as exc:
        rep.problem(f"{exc}: fix it in the Models dialog or in {ENV}")
        return
    if mirror is None:
        rep.line("from", "huggingface.co (no mirror set)")
    else:
        where = "the Models dialog" if (settings.model_endpoint or "").strip() else ENV
        rep.line("from", f"the mirror {mirror} (set in {where})")


def _in_use(rep: _Report, catalog: Catalog, settings: Settings) -> None:
    """The tier picked in the Models dialog, and the model each role loads now."""
    chosen = settings.model_tier
    tier = catalog.tiers.get(chosen) if chosen else None
    if chosen is None:
        rep.line("picked", "none: the app loads the best model downloaded")
    elif tier is None:
        rep.line("picked", f"{chosen!r}, which the manifest no longer has (ignored)")
    else:
        rep.line("picked", f"{chosen} (in the Models dialog): its models load first")
    explicit = {"llm": settings.llm_path, "asr": settings.asr_path, "tts": settings.tts_path}
    for role in ("llm", "asr", "tts"):
        if role == "llm" and settings.llm_backend == "server":
            rep.line("llm now", "a language model server (set in Settings)")
            continue
        variant = getattr(tier, role) if tier is not None else None
        given = explicit[role]
        path = Path(given).expanduser() if given else None
        try:
            model = resolve(role, explicit=path, catalog=catalog, variant=variant,
                            verify_hashes=False)
        except ModelError as exc:
            rep.line(f"{role} now", f"none: {exc}")
            continue
        title = model.entry.title if model.entry is not None else _home(model.path)
        rep.line(f"{role} now", f"{title} ({model.source})")


def report(out: TextIO, probe: MachineProbe | None = None, *, hash_models: bool = True,
           catalog: Catalog | None = None) -> int:
    """Write the whole report; 1 when a problem was found."""
    probe = probe or SystemProbe()
    catalog = catalog or load_catalog()
    rep = _Report(out)
    settings = load_settings()
    out.write("Hanasu doctor: paste this into an issue (no conversation text is included)\n")
    advice = advise(catalog, probe)
    facts = advice.facts
    _system(rep, facts)
    rep.section("GPU and language model runtime")
    gpu = facts.gpu
    rep.line("gpu", f"{gpu.name}, {human(gpu.memory_bytes)}" + (
        f", {human(gpu.free_bytes)} free" if gpu.free_bytes is not None else "")
        if gpu else "none found (no nvidia-smi, or it sees no GPU)")
    if gpu is not None:
        rep.line("driver", driver_version() or "unknown")
    llama = facts.llama
    rep.line("llama-cpp-python", f"{llama.version or 'not installed'}, {llama.kind} build, "
             f"GPU offload {'yes' if llama.gpu_offload else 'no'}")
    _audio(rep, settings)
    _models(rep, catalog, hash_models)
    rep.section("Disk")
    base = search_dirs()[-1][1]
    free = facts.disk_free_bytes
    rep.line("free", f"{human(free) if free is not None else 'unknown'} in {_home(base)}")
    _downloads(rep, settings)
    rep.section("Recommended tier")
    rec = advice.recommendation
    rep.line("tier", rec.tier.name)
    rep.line("why", rec.reason)
    rep.line("to download", human(rec.download_bytes) if rec.download_bytes else "nothing")
    for name, why in rec.passed_over:
        rep.out.write(f"{'':<22}not {name}: {why}\n")
    _in_use(rep, catalog, settings)
    for warning in rec.warnings:
        rep.problem(warning)
    out.write(f"\n{len(rep.problems)} problem(s) found\n")
    return 1 if rep.problems else 0


def main(argv: list[str] | None = None, *, out: TextIO | None = None) -> int:
    """Entry point for `hanasu doctor`; argv excludes the word `doctor`."""
    parser = argparse.ArgumentParser(prog="hanasu doctor", description=__doc__.splitlines()[0])
    parser.add_argument("--no-hash", action="store_true",
                        help="do not hash model files that were not checked before (faster)")
    try:
        args = parser.parse_args(argv or [])
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else 1
    return report(out or sys.stdout, hash_models=not args.no_hash)
