#!/usr/bin/env bash
# The installed units: systemd-analyze verify accepts them without a word,
# their exposure (systemd-analyze security) stays below 2.0 of 10, the
# template has the same [Service] lines as tumblerd.service but those that
# name its instance, and both restart as README.md says.
set -euo pipefail
units=/lib/systemd/system
bad=0
no() { echo "units: $*" >&2; bad=1; }

for u in "$units/tumblerd.service" tumblerd@ci.service; do
    out=$(systemd-analyze verify "$u" 2>&1) || no "verify $u failed"
    [ -z "$out" ] || no "verify $u says: $out"
done
# --threshold is in tenths: 20 is an exposure of 2.0, systemd's "OK".
for u in tumblerd.service tumblerd@.service; do
    systemd-analyze security --offline=true --threshold=20 "$units/$u" \
        >"$TB_PKG_TMP/security" 2>&1 ||
        no "$u is exposed: $(grep 'Overall exposure' "$TB_PKG_TMP/security")"
done

service_lines() {
    sed -n '/^\[Service\]/,/^\[/p' "$1" |
        grep -Ev '^(ExecStart|StateDirectory|WorkingDirectory)='
}
diff <(service_lines "$units/tumblerd.service") \
     <(service_lines "$units/tumblerd@.service") >&2 ||
    no "tumblerd@.service's [Service] lines differ from tumblerd.service's"
grep -qx 'User=tumbler' "$units/tumblerd.service" || no "not run as tumbler"
grep -qx 'Restart=on-failure' "$units/tumblerd.service" || no "no Restart=on-failure"
# Retried for minutes, not given up within a second (the default 100 ms,
# five times in 10 s).
grep -qx 'RestartSec=5s' "$units/tumblerd.service" || no "no RestartSec=5s"
for u in tumblerd.service tumblerd@.service; do
    grep -qx 'StartLimitBurst=100' "$units/$u" || no "$u: no StartLimitBurst=100"
    # LogsDirectory= would give /var/log/tumbler to group tumbler at each
    # start, not adm's as postinst makes it (files.sh).
    ! grep -q '^LogsDirectory=' "$units/$u" || no "$u has LogsDirectory="
done
exit $bad
