#!/usr/bin/env bash
# Installs what benchwright needs on a fresh Debian machine, for one purpose:
#   scripts/setup.sh build   what building the datasets needs (make setup, make build-all)
#   scripts/setup.sh test    that, and what the tests need besides (make test)
# Debian packages with apt-get; Python packages with pip, at the versions in constraints.txt (so pip
# resolves at once), into the active virtual environment or .venv (made here). Idempotent: what is
# already there is skipped. SETUP_PLAN=1 only prints what it would install.
set -euo pipefail
cd "$(dirname "$0")/.."
purpose=${1:-build}

# build: open3d needs libusb, libGL and libgomp at import; LibreOffice is the real client WordEval's
# gate opens every generated .docx with; FreeMonoBold (fonts-freefont-ttf) is the font FigStep renders
# with (vlm_unlearning's image-only view). test adds headless Chromium, the real browser the offline
# reports are tested in.
DEB_PACKAGES=(libusb-1.0-0 libgl1 libgomp1 libreoffice-writer-nogui fonts-dejavu-core fonts-freefont-ttf)
# build: the package, torch (CPU; the VLM unlearning routing head and baselines) and dask.distributed
# (--runner dask). test adds the test tools (pytest, moto's S3 server) and Beam's GCP extra (the
# DataflowRunner dry run).
EXTRAS=torch,dask
case "$purpose" in
  build) ;;
  test) DEB_PACKAGES+=(chromium); EXTRAS=torch,dask,test,dataflow ;;
  *) echo "usage: scripts/setup.sh build|test" >&2; exit 2 ;;
esac
# Debian's python3 has no venv/ensurepip without python3-venv.
command -v python3 >/dev/null && python3 -c "import ensurepip" 2>/dev/null || DEB_PACKAGES+=(python3-venv)

# The interpreter to install into: $PY (the Makefile passes the active virtual environment's or
# .venv's); .venv is created here when it does not exist yet.
PY=${PY:-.venv/bin/python}
CONSTRAINTS=${CONSTRAINTS-constraints.txt}   # empty: let pip resolve (another Python than constraints.txt's)

missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# pip runs again only when what it installs changed: a stamp in the environment holds the hash of the
# extras, pyproject.toml and the constraints it last installed.
stamp_of() { sha256sum pyproject.toml ${CONSTRAINTS:+"$CONSTRAINTS"} | sha256sum | cut -c1-16; }
want="$EXTRAS $(stamp_of)"
stamp=""
if [ -x "$PY" ]; then
  stamp="$("$PY" -c 'import sys; print(sys.prefix)')/.benchwright-setup"
fi
python_done=false
[ -n "$stamp" ] && [ -f "$stamp" ] && grep -qxF "$want" "$stamp" && python_done=true

if [ ${#missing[@]} -eq 0 ] && $python_done; then
  echo "setup ($purpose): everything is installed"
  exit 0
fi
echo "setup ($purpose) installs what is missing of:"
echo "  Debian packages: ${DEB_PACKAGES[*]} (missing: ${missing[*]:-none})"
echo "  Python packages into ${PY%/bin/python}: benchwright (editable) with [$EXTRAS]${CONSTRAINTS:+, at the versions in $CONSTRAINTS} ($($python_done && echo installed || echo "to install"))"
case "$purpose" in
  build) echo "  first time: 2.7 GB in the environment, 32 minutes measured on a busy 2-core machine (README)" ;;
  test) echo "  first time: 0.4 GB more than make setup (3.1 GB in all), 23 minutes more measured on a busy 2-core machine" ;;
esac
[ "${SETUP_PLAN:-}" = 1 ] && exit 0

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ! $python_done; then
  if [ "$PY" = ".venv/bin/python" ] && [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  # torch 2.13.0 (CPU) is taken from the local wheel cache where this machine has one; the package
  # itself is installed editable so the layer folders map onto benchwright.* (pyproject.toml).
  "$PY" -m pip install -q --disable-pip-version-check ${CONSTRAINTS:+-c "$CONSTRAINTS"} -e ".[$EXTRAS]"
  prefix="$("$PY" -c 'import sys; print(sys.prefix)')"
  # the stamp of what is installed now: a test install covers a build's too
  echo "$want" > "$prefix/.benchwright-setup"
  if [ "$purpose" = test ]; then echo "torch $(stamp_of)" >> "$prefix/.benchwright-setup"; fi
fi
