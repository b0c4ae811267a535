#!/usr/bin/env bash
# Builds the Debian package: the program alone (no tests) as a Release build
# in build-release/ with the prefix /usr, then CPack, which strips the binary
# and asks dpkg-shlibdeps for the runtime dependencies. Prints the package's
# path and size and the stripped binary's size.
#   JOBS=N  parallel compile jobs (default: the number of cores)
# scripts/package-test.sh then installs the package in a bookworm chroot.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="$ROOT/build-release"

# Building needs what scripts/setup.sh installs; CPack's Debian generator
# needs dpkg-shlibdeps (dpkg-dev), fakeroot and file.
DEPS_ONLY=1 "$ROOT/scripts/setup.sh"
missing=()
for p in dpkg-dev fakeroot file; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "package: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DSKILLRUNNER_BUILD_TESTS=OFF >&2
cmake --build "$BUILD_DIR" -j"${JOBS:-$(nproc)}" >&2
rm -f "$BUILD_DIR"/skillrunner_*.deb
(cd "$BUILD_DIR" && cpack -G DEB >&2)

deb="$(ls "$BUILD_DIR"/skillrunner_*_"$(dpkg --print-architecture)".deb)"
binary_bytes="$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/bin/skillrunner | wc -c)"
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
echo "package: $deb"
echo "package: $(mib "$(stat -c %s "$deb")") ($(stat -c %s "$deb") bytes); /usr/bin/skillrunner stripped: $(mib "$binary_bytes") ($binary_bytes bytes)"
echo "package: Depends: $(dpkg-deb -f "$deb" Depends)"
