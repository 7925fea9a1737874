/* The example program of docs/client.md, compiled with the library so it
 * cannot drift from the API.
 *
 *   tumbler_example HOST:PORT[/chroot]
 *
 * Starts a session on the library's I/O thread, creates an ephemeral node,
 * watches it, changes it, and closes.  Exits 0 on success. */
#include <stdio.h>
#include <string.h>
#include <tumbler/tumbler.h>

static void on_state(struct tb_client *c, int state, void *data)
{
    (void)c;
    (void)data;
    fprintf(stderr, "session: %s\n", tb_session_state_name(state));
}

/* Runs on the I/O thread, exactly once for this one-shot watch. */
static void on_change(struct tb_client *c, const struct tb_event *ev,
                      void *data)
{
    (void)c;
    (void)data;
    if (ev->type == TB_EVENT_NONE) /* the watch ended unfired (close) */
        return;
    printf("event %d on %s\n", ev->type, ev->path);
}

int main(int argc, char **argv)
{
    struct tb_options o;
    struct tb_client *c;
    struct tb_stat st;
    char path[256], *value;
    size_t len;
    int rc;

    memset(&o, 0, sizeof o);
    o.hosts = argc > 1 ? argv[1] : "127.0.0.1:2181";
    o.session_timeout_ms = 10000;
    o.state_cb = on_state;
    if ((rc = tb_client_init(&c, &o)) != 0)
        goto fail;
    if ((rc = tb_client_start(c)) != 0 ||
        (rc = tb_client_wait_connected(c, 10000)) != 0)
        goto fail_close;

    rc = tb_create_sync(c, "/example-", "hello", 5, NULL,
                        TB_EPHEMERAL_SEQUENTIAL, 0, path, sizeof path, &st);
    if (rc != 0)
        goto fail_close;
    printf("created %s (czxid %lld)\n", path, (long long)st.czxid);

    rc = tb_get_data_sync(c, path, on_change, NULL, &value, &len, &st);
    if (rc != 0)
        goto fail_close;
    printf("read %.*s, version %d\n", (int)len, value, st.version);
    tb_free(value);

    rc = tb_set_data_sync(c, path, "world", 5, st.version, &st);
    if (rc != 0)
        goto fail_close;
    tb_client_close(c); /* the ephemeral node goes with the session */
    return 0;

fail_close:
    tb_client_close(c);
fail:
    fprintf(stderr, "error: %s\n", tb_strerror(rc));
    return 1;
}
