#!/usr/bin/env bash
# Build dist/hanasu_<version>_amd64.deb from the PyInstaller bundle in dist/hanasu.
#
#   assets/packaging/deb/build-deb.sh [BUNDLE_DIR] [OUT_DIR]     (run from anywhere)
#
# Layout: /opt/hanasu/ (the bundle), /usr/bin/hanasu (launcher script),
# /usr/share/applications/hanasu.desktop, hicolor icons, /usr/share/doc/hanasu/copyright.
# HANASU_VERSION overrides the version (default: the bundle's hanasu dist-info, else pyproject).
# DEB_COMPRESSION picks dpkg-deb's compressor (default gzip: readable by every dpkg; xz is
# smaller but takes minutes for the ~850 MB bundle on two cores; zstd needs dpkg >= 1.21.18).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
BUNDLE="$(realpath "${1:-$ROOT/dist/hanasu}")"
OUT="$(realpath "${2:-$ROOT/dist}")"
COMPRESSION="${DEB_COMPRESSION:-gzip}"

[ -x "$BUNDLE/hanasu" ] || { echo "build-deb: no bundle at $BUNDLE (run pyinstaller build.spec)" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "build-deb: dpkg-deb not found" >&2; exit 1; }

version="${HANASU_VERSION:-}"
if [ -z "$version" ]; then
    meta="$(ls -d "$BUNDLE"/_internal/hanasu-*.dist-info 2>/dev/null | head -n1 || true)"
    if [ -n "$meta" ] && [ -f "$meta/METADATA" ]; then
        version="$(sed -n 's/^Version: //p' "$meta/METADATA" | head -n1)"
    else
        version="$(python3 -c 'import sys,tomllib;print(tomllib.load(open(sys.argv[1],"rb"))["project"]["version"])' "$ROOT/pyproject.toml")"
    fi
fi
# Debian versions may not contain "-" unless there is a revision; PEP 440 local parts use "+".
deb_version="${version//-/\~}"

stage="$(mktemp -d "${TMPDIR:-/tmp}/hanasu-deb.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
pkg="$stage/hanasu"
install -d "$pkg/DEBIAN" "$pkg/opt" "$pkg/usr/bin" "$pkg/usr/share/applications" \
    "$pkg/usr/share/icons/hicolor/256x256/apps" "$pkg/usr/share/icons/hicolor/scalable/apps" \
    "$pkg/usr/share/doc/hanasu"

cp -a "$BUNDLE" "$pkg/opt/hanasu"
find "$pkg/opt/hanasu" -type d -name __pycache__ -prune -exec rm -rf {} +
chmod -R u+rwX,go+rX,go-w "$pkg/opt/hanasu"
install -m 755 "$HERE/hanasu.sh" "$pkg/usr/bin/hanasu"
install -m 644 "$HERE/hanasu.desktop" "$pkg/usr/share/applications/hanasu.desktop"
install -m 644 "$ROOT/assets/icons/hanasu.png" "$pkg/usr/share/icons/hicolor/256x256/apps/hanasu.png"
install -m 644 "$ROOT/assets/icons/hanasu.svg" "$pkg/usr/share/icons/hicolor/scalable/apps/hanasu.svg"
install -m 644 "$HERE/copyright" "$pkg/usr/share/doc/hanasu/copyright"
install -m 755 "$HERE/postinst" "$HERE/postrm" "$pkg/DEBIAN/"

installed_kb="$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)"
# The newest glibc symbol version any bundled binary references (it follows the build host).
libc_min="2.36"
if command -v objdump >/dev/null; then
    found="$(find "$pkg/opt/hanasu" -type f \( -name '*.so*' -o -name hanasu \) -exec objdump -T {} + 2>/dev/null \
        | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1 || true)"
    [ -n "$found" ] && libc_min="$found"
fi
sed -e "s/@VERSION@/$deb_version/" -e "s/@INSTALLED_SIZE@/$installed_kb/" \
    -e "s/@LIBC_MIN@/$libc_min/" "$HERE/control.in" > "$pkg/DEBIAN/control"

mkdir -p "$OUT"
deb="$OUT/hanasu_${deb_version}_amd64.deb"
dpkg-deb --root-owner-group -Z"$COMPRESSION" --build "$pkg" "$deb" >/dev/null
echo "$deb"
