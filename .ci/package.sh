#!/usr/bin/env bash
# Freeze Hanasu, smoke-test the bundle, build the .deb, install it, smoke-test the installed app
# (CLI self-test and the GUI under Xvfb), uninstall it and check nothing is left.
#
#   pip install -e . && .ci/package.sh          (from the repo root, as root: it runs apt-get)
#
# Needs: pyinstaller, dpkg-deb, apt-get, Xvfb, ImageMagick's `import`. About 4 minutes on two
# cores. Exits non-zero on the first failure. Artifacts: dist/hanasu/, dist/hanasu_*.deb,
# dist/screenshot-installed.png, logs in build/package-logs/.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
LOGS="$ROOT/build/package-logs"
mkdir -p "$LOGS"
started=$(date +%s)
step() { printf '\n=== %s (%ss)\n' "$*" "$(( $(date +%s) - started ))"; }
fail() { echo "package.sh: FAIL: $*" >&2; exit 1; }

# Keep the smoke tests off this machine's user data: an empty data folder means the embedded
# models inside the bundle are what gets tested, never a model downloaded earlier.
SCRATCH="$(mktemp -d /tmp/hanasu-package.XXXXXX)"
export HANASU_DATA_DIR="$SCRATCH/data" HANASU_CONFIG_DIR="$SCRATCH/config" HANASU_LOG_DIR="$SCRATCH/log"
XVFB_PID=""
APP_PID=""
cleanup() {
    [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null || true
    [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

step "check the build environment"
python -c 'import PyInstaller; print("PyInstaller", PyInstaller.__version__)'
python -c 'import importlib.metadata as m; print("hanasu", m.version("hanasu"))' \
    || echo "package.sh: warning: hanasu is not pip-installed; the bundle will carry no version metadata"
if python -c 'import importlib.util as u, sys; sys.exit(u.find_spec("app.ui.main") is None)' 2>/dev/null; then
    HAVE_UI=1
else
    HAVE_UI=0
    echo "package.sh: warning: app.ui.main is not importable yet; the GUI check will be skipped"
fi

step "freeze: pyinstaller build.spec"
build_start=$(date +%s)
python -m PyInstaller --noconfirm --log-level WARN build.spec > "$LOGS/pyinstaller.log" 2>&1 \
    || { tail -n 40 "$LOGS/pyinstaller.log"; fail "pyinstaller"; }
build_seconds=$(( $(date +%s) - build_start ))
[ -x dist/hanasu/hanasu ] || fail "dist/hanasu/hanasu was not built"
# live2d-py (in the dev extra, for the tests) carries Live2D's proprietary Cubism Core: the
# spec excludes it, and the bundle must hold none of it (pyproject.toml's licence note).
if find dist/hanasu -iname '*live2d*' -not -path '*/app/*' | grep -q .; then
    find dist/hanasu -iname '*live2d*' -not -path '*/app/*' | head
    fail "the bundle carries live2d-py (Cubism Core); build.spec must exclude it"
fi
bundle_size="$(du -sh dist/hanasu | cut -f1)"
echo "bundle dist/hanasu: $bundle_size, built in ${build_seconds}s"

step "self-test of the frozen bundle"
if ! (cd "$SCRATCH" && "$ROOT/dist/hanasu/hanasu" --self-test) 2>&1 | tee "$LOGS/selftest-frozen.txt"; then
    fail "frozen self-test"
fi

step "privacy of the frozen bundle: no network, no stray files (strace)"
python3 -m tests.privacy.trace -- "$ROOT/dist/hanasu/hanasu" --self-test \
    > "$LOGS/privacy-frozen.txt" 2>&1 || { cat "$LOGS/privacy-frozen.txt"; fail "frozen privacy"; }
python3 -m tests.privacy.trace --env QT_QPA_PLATFORM=offscreen --env HANASU_EXIT_WHEN_READY=1 \
    -- "$ROOT/dist/hanasu/hanasu" > "$LOGS/privacy-frozen-gui.txt" 2>&1 \
    || { cat "$LOGS/privacy-frozen-gui.txt"; fail "frozen GUI privacy"; }

step "build the .deb"
rm -f dist/hanasu_*.deb
deb="$(assets/packaging/deb/build-deb.sh dist/hanasu dist)"
deb_size="$(du -h "$deb" | cut -f1)"
echo "$deb ($deb_size)"
dpkg-deb --info "$deb" | sed -n '/Package:/,/Description:/p'

step "install the .deb"
if ! apt-get install -y "./$(realpath --relative-to="$ROOT" "$deb")" > "$LOGS/apt-install.log" 2>&1; then
    # A fresh machine may lack package lists for a dependency; refresh once and retry.
    apt-get update > "$LOGS/apt-update.log" 2>&1 || true
    apt-get install -y "./$(realpath --relative-to="$ROOT" "$deb")" > "$LOGS/apt-install.log" 2>&1 \
        || { tail -n 30 "$LOGS/apt-install.log"; fail "apt-get install"; }
fi
[ -x /usr/bin/hanasu ] && [ -x /opt/hanasu/hanasu ] || fail "installed files missing"
[ -f /usr/share/applications/hanasu.desktop ] || fail "desktop entry missing"
[ -f /usr/share/icons/hicolor/256x256/apps/hanasu.png ] || fail "icon missing"

step "self-test of the installed app (/usr/bin/hanasu)"
if ! (cd "$SCRATCH" && /usr/bin/hanasu --self-test) 2>&1 | tee "$LOGS/selftest-installed.txt"; then
    fail "installed self-test"
fi

step "GUI of the installed app under Xvfb"
screenshot="$ROOT/dist/screenshot-installed.png"
rm -f "$screenshot"
if [ "$HAVE_UI" = 1 ]; then
    display=":$(( 90 + RANDOM % 9 ))"
    Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp > "$LOGS/xvfb.log" 2>&1 &
    XVFB_PID=$!
    for _ in $(seq 50); do [ -S "/tmp/.X11-unix/X${display#:}" ] && break; sleep 0.1; done
    kill -0 "$XVFB_PID" 2>/dev/null || fail "Xvfb did not start"
    DISPLAY="$display" HANASU_NO_AUDIO=1 QT_QPA_PLATFORM=xcb /usr/bin/hanasu > "$LOGS/gui-installed.log" 2>&1 &
    APP_PID=$!
    for _ in $(seq 8); do
        sleep 1
        kill -0 "$APP_PID" 2>/dev/null || { cat "$LOGS/gui-installed.log"; fail "the installed GUI exited early"; }
    done
    DISPLAY="$display" import -window root "$screenshot" || fail "screenshot"
    kill -0 "$APP_PID" 2>/dev/null || { cat "$LOGS/gui-installed.log"; fail "the installed GUI exited"; }
    echo "GUI stayed up 8 s; screenshot $screenshot"
    kill "$APP_PID"; wait "$APP_PID" 2>/dev/null || true; APP_PID=""
    kill "$XVFB_PID"; wait "$XVFB_PID" 2>/dev/null || true; XVFB_PID=""
    if grep -E "Traceback|Error" "$LOGS/gui-installed.log"; then
        echo "package.sh: warning: the GUI logged errors (see $LOGS/gui-installed.log)"
    fi
else
    echo "SKIPPED: app.ui.main is not importable yet, no GUI to launch"
fi

step "remove the package"
apt-get remove -y hanasu > "$LOGS/apt-remove.log" 2>&1 || { tail -n 20 "$LOGS/apt-remove.log"; fail "apt-get remove"; }
[ ! -e /opt/hanasu ] || { find /opt/hanasu | head; fail "/opt/hanasu is still there"; }
[ ! -e /usr/bin/hanasu ] || fail "/usr/bin/hanasu is still there"
[ ! -e /usr/share/applications/hanasu.desktop ] || fail "desktop entry is still there"

step "done"
echo "bundle:      dist/hanasu  $bundle_size (pyinstaller ${build_seconds}s)"
echo "package:     $deb  $deb_size"
[ -f "$screenshot" ] && echo "screenshot:  $screenshot"
echo "total time:  $(( $(date +%s) - started ))s"
