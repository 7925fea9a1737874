/* ZooKeeper's four-letter words from the client side (fourlw.c): one word
 * on a fresh connection to one server of the connection string, and the
 * figures of `srvr`, which tumblerd and Apache ZooKeeper both answer (it
 * is the one word ZooKeeper 3.5+ allows by default).  `tumbler top` and
 * `tumbler status` show them. */
#ifndef TB_CLI_FOURLW_H
#define TB_CLI_FOURLW_H

#include <stddef.h>
#include <stdint.h>

enum { CLI_HOSTPORT_LEN = 300 };

/* The n-th server of HOST[:PORT][,HOST[:PORT]...][/CHROOT] as "host:port"
 * (port 2181 if none; an IPv6 address in brackets keeps them): 0, or -1
 * past the last. */
int cli_4lw_server(const char *hosts, int n, char out[CLI_HOSTPORT_LEN]);

/* Sends `word` to `hostport` and reads the answer until the server closes,
 * all within `timeout_ms`: the answer's length (NUL-terminated in `buf`,
 * cut to cap - 1), or -1 with `why` saying what failed. */
int cli_4lw(const char *hostport, const char *word, int timeout_ms, char *buf,
            size_t cap, char *why, size_t why_cap);

/* srvr's lines (ZooKeeper 3.8's text, which tumblerd writes byte for byte):
 *   Zookeeper version: V
 *   Latency min/avg/max: 0/0.1234/8          milliseconds
 *   Received: N                              requests since start (srst)
 *   Sent: N
 *   Connections: N
 *   Outstanding: N
 *   Zxid: 0x...
 *   Mode: standalone | leader | follower | observer
 *   Node count: N
 * A figure not found stays -1 (mode: ""). */
struct cli_srvr {
    double lat_min, lat_avg, lat_max;
    int64_t received, sent, connections, outstanding, nodes, zxid;
    char mode[32];
};
/* 0, or -1 if `text` has no "Received:" line (not srvr's answer: the
 * server refused the word, or is not serving). */
int cli_srvr_parse(const char *text, struct cli_srvr *out);

/* From cons: the wall-clock time (ms) the server noted when it accepted
 * the connection of session `sid` ("sid=0x..,...,est=MS"): 0 or -1 if that
 * session is not connected there. */
int cli_cons_est(const char *text, int64_t sid, int64_t *est_ms);

#endif
