/* libmicrohttpd driven from the libuv loop (see httpd.h for why and the
 * limits).  MHD_USE_EPOLL without MHD_USE_INTERNAL_POLLING_THREAD is
 * libmicrohttpd's "external event loop" mode with one descriptor to watch:
 * its epoll set, readable whenever the listener or a connection has
 * something for it.  After each MHD_run() the timer is set to what
 * MHD_get_timeout() says: 0 while it has work left it could not finish
 * (data already read), else the nearest idle timeout, and at most
 * RUN_EVERY_MS: at its connection limit (or out of descriptors)
 * libmicrohttpd takes the listener out of its epoll set and puts it back
 * only at the start of a later MHD_run(), and once every connection has
 * closed in one run, nothing else would call it again: the port would
 * accept nothing for good.
 *
 * libmicrohttpd's timeout is an idle one, reset by every byte: a client
 * sending a byte of its request now and then would keep its connection,
 * and HTTPD_MAX_CONNS such clients the whole port, for ever.  So each
 * connection also has a deadline: a request must come whole within the
 * idle timeout of the connection's start or of its last answer.  One past
 * it is shut down (shutdown(2)), which libmicrohttpd sees as the client
 * gone.  An idle connection reaches the deadline as its idle timeout
 * ends, so for those nothing changes.  An answer on its way has none:
 * a large one read at the client's pace (every byte taken resets the
 * idle timeout) goes whole. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "server/http/httpd.h"
#include "server/logging/log.h"

struct httpd {
    struct MHD_Daemon *mhd;
    uv_poll_t poll;
    uv_timer_t timer;
    int handles;     /* uv handles still open */
    int started;     /* serving: libmicrohttpd's own lines go to debug */
    char name[32];
    httpd_handler handler;
    void *data;
    uv_loop_t *loop;
    unsigned idle_ms;
    struct tb_queue conns; /* struct hconn, oldest deadline first */
};

/* A connection, for its deadline (libmicrohttpd's socket context). */
struct hconn {
    struct tb_queue link;
    struct MHD_Connection *conn;
    uint64_t since; /* the loop's ms at its start or its last answer */
    int answering;  /* its request came whole: no deadline until answered */
    int cut;        /* shut down */
};

static void rearm(struct httpd *h);

enum { RUN_EVERY_MS = 1000 };

/* Shuts down the connections past their deadline (see the top). */
static void cut_late(struct httpd *h)
{
    uint64_t now = uv_now(h->loop);
    const union MHD_ConnectionInfo *fd;
    struct tb_queue *q;
    struct hconn *c;

    TB_QUEUE_FOREACH(q, &h->conns)
    {
        c = TB_CONTAINER_OF(q, struct hconn, link);
        if (now - c->since < h->idle_ms)
            break;
        if (c->cut || c->answering)
            continue;
        c->cut = 1;
        fd =
            MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (fd != NULL)
            shutdown(fd->connect_fd, SHUT_RDWR);
    }
}

static void run(struct httpd *h)
{
    cut_late(h);
    MHD_run(h->mhd);
    rearm(h);
}

static void on_connection(void *cls, struct MHD_Connection *conn,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct httpd *h = cls;
    struct hconn *c = *socket_context;

    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (c != NULL)
            tb_queue_remove(&c->link);
        free(c);
        return;
    }
    /* Not tracked if out of memory: it keeps libmicrohttpd's timeout. */
    if ((c = calloc(1, sizeof *c)) == NULL)
        return;
    c->conn = conn;
    c->since = uv_now(h->loop);
    tb_queue_insert_tail(&h->conns, &c->link);
    *socket_context = c;
}

/* Answered: the next request's deadline runs from now. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct httpd *h = cls;
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct hconn *c = info != NULL ? info->socket_context : NULL;

    (void)req_cls;
    (void)toe;
    if (c == NULL)
        return;
    c->answering = 0;
    c->since = uv_now(h->loop);
    tb_queue_remove(&c->link);
    tb_queue_insert_tail(&h->conns, &c->link);
}

static void on_timer(uv_timer_t *t)
{
    run(t->data);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    run(p->data);
}

static void rearm(struct httpd *h)
{
    MHD_UNSIGNED_LONG_LONG ms;

    if (MHD_get_timeout(h->mhd, &ms) != MHD_YES || ms > RUN_EVERY_MS)
        ms = RUN_EVERY_MS;
    uv_timer_start(&h->timer, on_timer, (uint64_t)ms, 0);
}

/* Before the start, libmicrohttpd's messages say why it failed (a port
 * taken); after it, what one bad client did, which is not the operator's
 * news: debug. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct httpd *h = cls;
    char line[256];
    size_t n;

    vsnprintf(line, sizeof line, fmt, ap);
    n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    tb_log(h->started ? TB_LOG_DEBUG : TB_LOG_WARN, "%s: %s", h->name, line);
}

const char *httpd_arg(const struct httpd_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result answer(struct MHD_Connection *conn, int status,
                              const char *type, const void *body, size_t len,
                              const char *allow)
{
    struct MHD_Response *r;
    enum MHD_Result rv;

    r = MHD_create_response_from_buffer(len, (void *)body,
                                        MHD_RESPMEM_MUST_COPY);
    if (r == NULL)
        return MHD_NO; /* closes the connection */
    if (type != NULL)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (allow != NULL)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    rv = MHD_queue_response(conn, (unsigned)status, r);
    MHD_destroy_response(r);
    return rv;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_len, void **req_cls)
{
    static const char bad_method[] = "only GET and HEAD are served\n";
    static const char no_memory[] = "out of memory\n";
    struct httpd *h = cls;
    struct httpd_req req = {method, url, conn};
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct httpd_resp resp;
    enum MHD_Result rv;

    (void)version;
    (void)upload;
    (void)upload_len;
    (void)req_cls;
    if (info != NULL && info->socket_context != NULL)
        ((struct hconn *)info->socket_context)->answering = 1;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
        strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
                      bad_method, sizeof bad_method - 1, "GET, HEAD");
    memset(&resp, 0, sizeof resp);
    tb_wbuf_init(&resp.body);
    h->handler(h->data, &req, &resp);
    if (resp.status == 0 || resp.body.oom)
        rv = answer(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain",
                    no_memory, sizeof no_memory - 1, NULL);
    else
        rv = answer(conn, resp.status, resp.content_type, resp.body.base,
                    resp.body.len, NULL);
    tb_wbuf_free(&resp.body);
    return rv;
}

static int sockaddr_of(const char *addr, int port, struct sockaddr_storage *ss,
                       int *v6)
{
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

    memset(ss, 0, sizeof *ss);
    *v6 = 0;
    if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        return 0;
    }
    if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *v6 = 1;
        return 0;
    }
    return TB_EINVAL;
}

static void on_closed(uv_handle_t *handle)
{
    struct httpd *h = handle->data;

    if (--h->handles > 0)
        return;
    MHD_stop_daemon(h->mhd);
    free(h);
}

int httpd_start(struct httpd **out, uv_loop_t *loop,
                const struct httpd_config *cfg, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    const union MHD_DaemonInfo *info;
    unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    struct httpd *h;
    int v6;

    if (sockaddr_of(cfg->address, cfg->port, &ss, &v6) != 0) {
        snprintf(err, errlen, "%s: not an IP address: %s", cfg->name,
                 cfg->address);
        return TB_EINVAL;
    }
    if ((h = calloc(1, sizeof *h)) == NULL) {
        snprintf(err, errlen, "%s: out of memory", cfg->name);
        return TB_ENOMEM;
    }
    snprintf(h->name, sizeof h->name, "%s", cfg->name);
    h->handler = cfg->handler;
    h->data = cfg->data;
    /* As libmicrohttpd rounds it, in whole seconds. */
    h->idle_ms = ((cfg->idle_ms ? cfg->idle_ms : 30000) + 999) / 1000 * 1000;
    tb_queue_init(&h->conns);
    h->loop = loop;
    /* On "::" IPv4 clients too, as the client port (libuv) and ZooKeeper's
     * Jetty take them. */
    if (v6)
        flags |= MHD_USE_DUAL_STACK;
    errno = 0;
    h->mhd = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_request, h,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)HTTPD_MAX_CONNS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)HTTPD_MAX_PER_IP, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)HTTPD_MEMORY, MHD_OPTION_CONNECTION_TIMEOUT, h->idle_ms / 1000,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
    if (h->mhd == NULL) {
        snprintf(err, errlen, "%s: cannot listen on %s:%d%s%s", cfg->name,
                 cfg->address, cfg->port, errno ? ": " : "",
                 errno ? strerror(errno) : "");
        free(h);
        return TB_ESYSTEM;
    }
    info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
    if (info == NULL || uv_poll_init(loop, &h->poll, info->epoll_fd) != 0) {
        snprintf(err, errlen, "%s: cannot watch libmicrohttpd's descriptor",
                 cfg->name);
        MHD_stop_daemon(h->mhd);
        free(h);
        return TB_ESYSTEM;
    }
    uv_timer_init(loop, &h->timer);
    h->poll.data = h->timer.data = h;
    h->handles = 2;
    uv_poll_start(&h->poll, UV_READABLE, on_poll);
    h->started = 1;
    rearm(h);
    *out = h;
    return 0;
}

int httpd_port(const struct httpd *h)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_BIND_PORT);

    return info != NULL ? info->port : -1;
}

void httpd_stop(struct httpd *h)
{
    if (h == NULL)
        return;
    uv_close((uv_handle_t *)&h->poll, on_closed);
    uv_close((uv_handle_t *)&h->timer, on_closed);
}
