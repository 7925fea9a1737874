/* Drives a tumbler handle from a libuv loop (header-only adapter).
 *
 *   struct tb_client *c;   tb_client_init(&c, &opts);
 *   tb_libuv_attach(c, loop);        instead of tb_client_start
 *   ... uv_run(loop, UV_RUN_DEFAULT) ...
 *   tb_client_close(c);              on the loop's thread; detaches itself
 *
 * The handle's socket is watched with a uv_poll_t (a new one whenever the
 * handle reconnects: libuv forbids reusing one for another descriptor) and
 * its timers with one uv_timer_t.  Everything runs on the loop's thread,
 * callbacks included.  The handles stay referenced while the client is
 * open, so uv_run keeps running until tb_client_close. */
#ifndef TUMBLER_ADAPTERS_LIBUV_H
#define TUMBLER_ADAPTERS_LIBUV_H

#include <stdlib.h>
#include <tumbler/tumbler.h>
#include <uv.h>

struct tb__uv {
    uv_timer_t timer; /* first: freeing the timer frees the adapter */
    struct tb_client *c;
    uv_loop_t *loop;
    uv_poll_t *poll; /* NULL when no socket */
    int fd;
};

static void tb__uv_close_free(uv_handle_t *h)
{
    free(h);
}

static void tb__uv_on_timer(uv_timer_t *t)
{
    struct tb__uv *a = (struct tb__uv *)t->data;

    (void)tb_client_process(a->c, 0); /* may free the handle */
}

static void tb__uv_on_poll(uv_poll_t *p, int status, int events)
{
    struct tb__uv *a = (struct tb__uv *)p->data;
    int ev = 0;

    if (status < 0)
        ev = TB_EV_READ | TB_EV_WRITE; /* let the handle find the error */
    if (events & (UV_READABLE | UV_DISCONNECT))
        ev |= TB_EV_READ;
    if (events & UV_WRITABLE)
        ev |= TB_EV_WRITE;
    (void)tb_client_process(a->c, ev);
}

static void tb__uv_drop_poll(struct tb__uv *a)
{
    if (a->poll == NULL)
        return;
    uv_poll_stop(a->poll);
    uv_close((uv_handle_t *)a->poll, tb__uv_close_free);
    a->poll = NULL;
    a->fd = -1;
}

static void tb__uv_update(void *data, const struct tb_interest *in)
{
    struct tb__uv *a = (struct tb__uv *)data;
    int ev = 0;

    if (in->fd != a->fd)
        tb__uv_drop_poll(a);
    if (in->fd >= 0 && a->poll == NULL) {
        a->poll = (uv_poll_t *)malloc(sizeof *a->poll);
        if (a->poll == NULL ||
            uv_poll_init_socket(a->loop, a->poll, in->fd) != 0) {
            free(a->poll);
            a->poll = NULL;
        } else {
            a->poll->data = a;
            a->fd = in->fd;
        }
    }
    if (a->poll != NULL) {
        if (in->events & TB_EV_READ)
            ev |= UV_READABLE;
        if (in->events & TB_EV_WRITE)
            ev |= UV_WRITABLE;
        if (ev)
            uv_poll_start(a->poll, ev, tb__uv_on_poll);
        else
            uv_poll_stop(a->poll);
    }
    if (in->timeout_ms >= 0)
        uv_timer_start(&a->timer, tb__uv_on_timer, (uint64_t)in->timeout_ms,
                       0);
    else
        uv_timer_stop(&a->timer);
}

static void tb__uv_detach(void *data)
{
    struct tb__uv *a = (struct tb__uv *)data;

    tb__uv_drop_poll(a);
    uv_timer_stop(&a->timer);
    /* The adapter's memory goes with its timer handle. */
    uv_close((uv_handle_t *)&a->timer, tb__uv_close_free);
}

/* Attaches `c` (fresh from tb_client_init) to `loop` and starts it.
 * Returns 0, TB_ENOMEM, or TB_EINVAL if `c` is already driven. */
static inline int tb_libuv_attach(struct tb_client *c, uv_loop_t *loop)
{
    struct tb__uv *a = (struct tb__uv *)calloc(1, sizeof *a);
    struct tb_ev ev;
    int rv;

    if (a == NULL)
        return TB_ENOMEM;
    a->c = c;
    a->loop = loop;
    a->fd = -1;
    uv_timer_init(loop, &a->timer);
    a->timer.data = a;
    ev.data = a;
    ev.update = tb__uv_update;
    ev.detach = tb__uv_detach;
    rv = tb_client_set_ev(c, &ev);
    if (rv != 0)
        uv_close((uv_handle_t *)&a->timer, tb__uv_close_free);
    return rv;
}

#endif
