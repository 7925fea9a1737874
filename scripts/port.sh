# Free loopback ports for the scripts that start servers (sourced).

# port_in_use PORT: true if a local TCP socket (any state, v4 or v6) has that
# port.  Reads the kernel's tables rather than connecting, so a port held as
# the local end of an outgoing connection counts too.
port_in_use()
{
    local hex
    hex=$(printf ':%04X' "$1")
    awk -v h="$hex" 'NR > 1 && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# free_port: print a port nothing uses now and no other caller was handed
# lately.  It comes from below the kernel's ephemeral range, so no outgoing
# connection takes it between this check and the server's bind, nor while a
# server restarts on it.  A test picks all its members' ports before it
# starts the first, and tests run side by side, so the kernel's tables alone
# would hand one port out twice; each port handed out is claimed by a file
# in $FREE_PORT_CLAIMS (created with noclobber, which is atomic), and a
# claim lapses after 30 minutes, longer than any test.
FREE_PORT_CLAIMS=${FREE_PORT_CLAIMS:-${TMPDIR:-/tmp}/tumbler-ports}

# claim_port PORT: true if PORT is free and now claimed by this caller.
claim_port()
{
    ! port_in_use "$1" && (set -C && : > "$FREE_PORT_CLAIMS/$1") 2>/dev/null
}

free_port()
{
    local lo=20000 hi=32000 eph p
    read -r eph _ < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || eph=32768
    [ "$eph" -le "$hi" ] && hi=$((eph - 1))
    mkdir -p "$FREE_PORT_CLAIMS" || return 1
    find "$FREE_PORT_CLAIMS" -type f -mmin +30 -delete 2>/dev/null
    for _ in $(seq 1 200); do
        p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo)))
        claim_port "$p" || continue
        echo "$p"
        return 0
    done
    echo "no free port" >&2
    return 1
}

# free_port_pair: a port P, as free_port, whose P + 1 is free and claimed
# too: a server's plain and TLS ports side by side (bench/servers.sh gives
# the TLS port as P + 1).
free_port_pair()
{
    local p
    for _ in $(seq 1 50); do
        p=$(free_port) || return 1
        claim_port $((p + 1)) || continue
        echo "$p"
        return 0
    done
    echo "no free pair of ports" >&2
    return 1
}
