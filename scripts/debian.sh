# Sourced by the scripts whose tests run real components from Debian (not run): redis-server,
# haproxy, prometheus, chromium. Installs with apt-get (as root) the packages not installed yet;
# fails, loudly, when apt-get cannot install them: a test never skips for want of one.
#
#   debian_install PACKAGE...   # the packages missing among these, in one apt-get install
#
# The package lists are updated first (a new machine has none). apt-get waits up to 10 minutes
# for another apt-get or dpkg to finish, so scripts run side by side can each install.

debian_install() {
    local missing=() package
    for package in "$@"; do
        if [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" != "install ok installed" ]; then
            missing+=("$package")
        fi
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    echo "== installing ${missing[*]} (Debian)" >&2
    if ! { apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 \
        && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
            --no-install-recommends "${missing[@]}" >&2; }; then
        echo "FAIL: could not install ${missing[*]} with apt-get" >&2
        return 1
    fi
}
