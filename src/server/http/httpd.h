/* A small HTTP/1.1 server on the server's own libuv loop, for the
 * Prometheus endpoint and the AdminServer.
 *
 * HTTP itself is GNU libmicrohttpd's (Debian's libmicrohttpd-dev): parsing,
 * keep-alive, limits and error answers.  It runs without a thread of its
 * own: its epoll descriptor is watched by a uv_poll and its timeouts by a
 * uv_timer, and MHD_run() is called from them, so every handler runs on the
 * loop thread and may read the server's state as anything else on the loop
 * does.  A handler answers at once (nothing here waits on the log).
 *
 * Limits, each answered by libmicrohttpd itself: a request whose line and
 * headers do not fit HTTPD_MEMORY bytes gets 414/431 and the connection
 * closes; at most HTTPD_MAX_CONNS connections (HTTPD_MAX_PER_IP from one
 * address), more are closed at accept; a connection idle for `idle_ms` is
 * closed, and so is one whose request has not come whole within `idle_ms`
 * of its start or of its last answer (httpd.c).  Methods other than GET and
 * HEAD get 405, a request body is never read (413 past the memory limit). */
#ifndef TB_HTTPD_H
#define TB_HTTPD_H

#include <uv.h>

#include "common/common.h"

#define HTTPD_MEMORY (32 * 1024)
#define HTTPD_MAX_CONNS 64
#define HTTPD_MAX_PER_IP 32

struct httpd;

/* A request as the handler sees it: valid during the call. */
struct httpd_req {
    const char *method; /* "GET" or "HEAD" */
    const char *path;   /* decoded, without the query */
    void *conn;         /* libmicrohttpd's, for httpd_arg */
};

/* The query argument `name` ("?traceMask=5"), or NULL. */
const char *httpd_arg(const struct httpd_req *r, const char *name);

/* What the handler fills: the body is freed by httpd.  status 0 or a body
 * that ran out of memory answers 500. */
struct httpd_resp {
    int status;
    const char *content_type;
    struct tb_wbuf body;
};

typedef void (*httpd_handler)(void *data, const struct httpd_req *req,
                              struct httpd_resp *resp);

struct httpd_config {
    const char *name;    /* for log lines: "metrics", "admin server" */
    const char *address; /* an IP literal */
    int port;
    unsigned idle_ms;    /* 0: 30 s */
    httpd_handler handler;
    void *data;
};

/* Listens and serves on `loop`.  0, or a negative TB_E* code with the reason
 * in err (the port taken, say). */
int httpd_start(struct httpd **out, uv_loop_t *loop,
                const struct httpd_config *cfg, char *err, size_t errlen);
/* The port it listens on (what port 0 became). */
int httpd_port(const struct httpd *h);
/* Closes the listener and every connection; `h` is freed once the loop has
 * closed its handles.  NULL is ignored. */
void httpd_stop(struct httpd *h);

#endif
