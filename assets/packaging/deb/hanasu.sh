#!/bin/sh
# /usr/bin/hanasu: the frozen app lives in /opt/hanasu (a one-folder PyInstaller bundle).
exec /opt/hanasu/hanasu "$@"
