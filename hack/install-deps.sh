#!/usr/bin/env bash
# Installs what a fresh machine lacks to build, run and test this project: Debian packages (the
# distribution registry), uv with the locked Python environment, and the pinned binaries (built with
# Go). Safe to run again: each step is skipped when already satisfied.
#
#   hack/install-deps.sh [run|test]   which binaries: `run` (the default), what `make run` starts;
#                                     `test`, those and the test-only tools (otelcol, promtool,
#                                     operator-condition, OLM v0, cosign, Toxiproxy)
set -euo pipefail
BINARY_SET="${1:-run}"
case "$BINARY_SET" in
  run|test) ;;
  *) echo "usage: $0 [run|test]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9
# docker-registry: the local OCI registry. containerd, runc, containernetworking-plugins, iptables,
# conntrack, iproute2: the real kubelet node (olm_testkit.node). mmdebstrap, python3-pip-whl,
# buildah: the OLM image's base layer, its wheels, and the Containerfile build check (hack/image).
# chromium, fonts-dejavu-core: e2e/docs renders the documentation site headless and checks the
# pages are not blank; without a font installed, text renders as nothing.
# tinyproxy, stunnel4: the real HTTP proxy of e2e/httpproxy (each test runs its own instance on
# loopback) and the TLS front that makes it an https:// proxy. busybox-static: the static busybox
# the tests' busybox image is made of, for workloads that really run on the real nodes.
DEBIAN_PACKAGES=(docker-registry containerd runc containernetworking-plugins iptables conntrack iproute2 mmdebstrap python3-pip-whl buildah chromium fonts-dejavu-core tinyproxy stunnel4 busybox-static)

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "error: install the Debian packages ${missing[*]} (no apt-get here)" >&2; exit 1
  fi
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "install-deps: installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

command -v python3 >/dev/null && python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "error: Python >= 3.11 is required" >&2; exit 1; }
command -v go >/dev/null || {
  echo "error: the Go toolchain (>= 1.26) is required to build the pinned control plane: install Go" >&2; exit 1; }

if ! command -v uv >/dev/null || [ "$(uv --version | awk '{print $2}')" != "$UV_VERSION" ]; then
  echo "install-deps: installing uv $UV_VERSION"
  python3 -m pip install --quiet "uv==$UV_VERSION"
fi
export UV_PYTHON_DOWNLOADS=never
uv sync --frozen --quiet
uv run --frozen python -m hack.controlplane build --set "$BINARY_SET" >/dev/null
