#!/usr/bin/env bash
# Installs everything benchwright needs on a fresh Debian machine: Debian packages with apt-get,
# Python packages with pip. Idempotent: what is already there is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

# open3d needs libusb at import; LibreOffice is the real client that opens generated .docx files;
# headless Chromium is the real browser the offline validation report is tested in.
DEB_PACKAGES=(libusb-1.0-0 libgl1 libgomp1 libreoffice-writer-nogui fonts-dejavu-core chromium)
# Debian's python3 has no venv/ensurepip without python3-venv.
command -v python3 >/dev/null && python3 -c "import ensurepip" 2>/dev/null || DEB_PACKAGES+=(python3-venv)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The interpreter to install into: $PY (the Makefile passes the active virtual environment's or
# .venv's); .venv is created here when it does not exist yet.
PY=${PY:-.venv/bin/python}
if [ "$PY" = ".venv/bin/python" ] && [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# torch 2.13.0 (CPU) is taken from the local wheel cache where this machine has one; the package
# itself is installed editable so the layer folders map onto benchwright.* (pyproject.toml).
$PY -m pip install -q --disable-pip-version-check -e ".[test,torch,dataflow,dask]"
