#!/usr/bin/env bash
# Runs pytest on the newest Python Debian ships, installed the way a user gets it: Debian's own
# python3.N package in a chroot built with debootstrap from Debian's archive (sid: python3.14 today;
# trixie's python3.13 if sid cannot be built). A chroot, not a copied binary: sid's Python links a
# newer glibc than the host (Debian 12), and the tests start subprocesses with sys.executable.
#
#   .ci/debian-python.sh [PYTEST-ARGS...]      e.g. .ci/debian-python.sh -m "not slow and not interop"
#
# Needs root (debootstrap, chroot, mounts) and Debian's archive; pip in the chroot needs PyPI.
# Idempotent and cached: the tree is kept in $CODEX_MCP_CHROOT (default .tools/debian-sid,
# gitignored); a second run only refreshes the editable install when pyproject.toml changed.
# Servers the tests start (redis-server, nginx) come from the chroot's suite; Chromium and the
# npm peers are not installed there (the browser test and the interop tests skip and say why).
# pytest runs with -q from the checkout's root; more arguments go after it.
# Each step says how long it took. Measured from nothing on our shared 2-core machine
# (2026-11-28): debootstrap on the host 33 s, the sid tree 166 s, the packages 30 s, the venv
# 33 s (about 4.5 min in all; 0 s when cached), then the fast inner loop (1,159 tests) 17 min
# at a load average of 20 (4.5 min of CPU; expect well under 10 min on an idle machine).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
chroot_dir="${CODEX_MCP_CHROOT:-$root/.tools/debian-sid}"
suite="${DEBIAN_SUITE:-sid}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
venv=/opt/codex-mcp-venv    # inside the chroot; -3.N added below
src=/src                   # the checkout, bind-mounted inside the chroot

step() {  # step "what it does" COMMAND...: runs COMMAND, then says how long it took
  local what="$1" started=$SECONDS; shift
  echo "debian-python: $what ..." >&2
  "$@"
  echo "debian-python:   done in $((SECONDS - started)) s" >&2
}

if [ "$(id -u)" != 0 ]; then
  echo "debian-python: needs root (debootstrap, chroot and bind mounts); run it as root or skip it" >&2
  exit 2
fi

mounted_under() {  # prints the mount points at or under the chroot, deepest first
  findmnt -rn -o TARGET | awk -v d="$chroot_dir" '$0 == d || index($0, d "/") == 1' | sort -r
}
unmount_all() {
  local target
  for target in $(mounted_under); do umount -l "$target" 2>/dev/null || true; done
}
in_chroot() { chroot "$chroot_dir" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  CI="${CI:-}" PIP_CERT=/etc/ssl/certs/host-ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1 "$@"; }

mkdir -p "$(dirname "$chroot_dir")"
exec 9>"$chroot_dir.lock"
flock 9   # one run at a time per tree: the mounts below are shared
unmount_all   # left over from a run that was killed
trap unmount_all EXIT

if ! command -v debootstrap >/dev/null 2>&1; then
  step "installing debootstrap on the host" \
    sh -c 'apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null'
fi

build_base() {  # build_base SUITE: a minimal Debian tree of SUITE in $chroot_dir
  # --one-file-system: nothing is mounted here now (unmount_all), and this never crosses a mount.
  rm -rf --one-file-system "$chroot_dir"
  debootstrap --variant=minbase --include=ca-certificates "$1" "$chroot_dir" "$mirror" >"$chroot_dir.log" 2>&1
}
if [ ! -f "$chroot_dir/.codex-mcp-base" ]; then
  if step "building a Debian $suite tree with debootstrap in $chroot_dir (log: $chroot_dir.log)" build_base "$suite"; then
    echo "$suite" >"$chroot_dir/.codex-mcp-base"
  elif [ "$suite" = sid ]; then
    echo "debian-python: debootstrap of sid failed (see $chroot_dir.log); trying trixie" >&2
    suite=trixie
    step "building a Debian trixie tree with debootstrap in $chroot_dir" build_base trixie
    echo trixie >"$chroot_dir/.codex-mcp-base"
  else
    exit 1
  fi
fi
suite="$(cat "$chroot_dir/.codex-mcp-base")"

# What the tree needs from the host at every run: name resolution and the host's CA bundle
# (the network may inspect TLS), apt that accepts an archive whose Release is past Valid-Until
# (sid's often is), and no service started by a package's postinst.
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$chroot_dir/etc/ssl/certs/host-ca-certificates.crt"
grep -q '::1' "$chroot_dir/etc/hosts" 2>/dev/null || printf '127.0.0.1 localhost\n::1 localhost ip6-localhost\n' >>"$chroot_dir/etc/hosts"
printf 'Acquire::Check-Valid-Until "false";\nAcquire::Check-Date "false";\n' >"$chroot_dir/etc/apt/apt.conf.d/99codex-mcp"
printf '#!/bin/sh\nexit 101\n' >"$chroot_dir/usr/sbin/policy-rc.d"
chmod +x "$chroot_dir/usr/sbin/policy-rc.d"

mkdir -p "$chroot_dir/proc" "$chroot_dir/sys" "$chroot_dir/dev" "$chroot_dir$src"
mount -t proc proc "$chroot_dir/proc"
mount --rbind /dev "$chroot_dir/dev"
mount --make-rslave "$chroot_dir/dev"
mount --bind "$root" "$chroot_dir$src"

# Debian's default python3 (what `apt install python3` gives a user: 3.14 in sid today), or
# the python3.N named in $DEBIAN_PYTHON (sid also carries the next one, e.g. python3.15).
wanted="${DEBIAN_PYTHON:-python3}"
# nginx-light: the reverse-proxy tests; procps: tests that look at processes.
packages="$wanted $wanted-venv redis-server nginx-light procps"
installed="$chroot_dir/.codex-mcp-$(echo "$packages" | sha256sum | cut -c1-12)"
if [ ! -f "$installed" ]; then
  install_packages() {
    in_chroot apt-get update -qq >/dev/null
    # shellcheck disable=SC2086  # one word a package
    in_chroot apt-get install -y -qq --no-install-recommends $packages >/dev/null
    # python3 is a symlink to the python3.N it depends on.
    basename "$(readlink -f "$chroot_dir/usr/bin/$wanted")" >"$installed"
  }
  step "installing $packages from $suite" install_packages
fi
python_pkg="$(cat "$installed")"
venv="$venv-${python_pkg#python}"
stamp="$(sha256sum "$root/pyproject.toml" | cut -c1-16)"
if [ "$(cat "$chroot_dir/.codex-mcp-venv-$python_pkg" 2>/dev/null)" != "$stamp" ]; then
  install_venv() {
    in_chroot rm -rf "$venv"
    in_chroot "/usr/bin/$python_pkg" -m venv "$venv"
    in_chroot "$venv/bin/python" -m pip install --quiet -e "$src[dev]"
    echo "$stamp" >"$chroot_dir/.codex-mcp-venv-$python_pkg"
  }
  step "creating $venv with codex-mcp (editable) and its test tools" install_venv
fi

echo "debian-python: $(in_chroot "$venv/bin/python" -VV) (Debian $suite)" >&2
started=$SECONDS
status=0
in_chroot sh -c 'cd "$1" && python="$2/bin/python" && shift 2 && exec "$python" -m pytest "$@"' \
  sh "$src" "$venv" -q "$@" || status=$?
echo "debian-python: pytest on $python_pkg done in $((SECONDS - started)) s (exit $status)" >&2
exit "$status"
