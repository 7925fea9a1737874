/* Crash-test client, using Apache ZooKeeper's own C client:
 *   acked_writer write HOST:PORT PREFIX COUNT   creates PREFIX/n-<i> with
 *       up to 64 requests in flight and prints each path the server
 *       acknowledged, one per line, as soon as it is acknowledged; stops at
 *       COUNT or at the first failure (the server was killed, or refused
 *       the write), whose error code it prints on stderr.
 *       (ACKED_WRITER_DATA=N sets the data size; default 7 bytes)
 *   acked_writer verify HOST:PORT < paths       checks that every listed
 *       path exists; prints the missing ones and exits 1 if any.
 * An acknowledged write must survive kill -9 of the server. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int in_flight, failed, connected, first_error;

static void watcher(zhandle_t *zh, int type, int state, const char *path,
                    void *ctx)
{
    (void)zh, (void)path, (void)ctx;
    if (type != ZOO_SESSION_EVENT)
        return;
    pthread_mutex_lock(&mu);
    if (state == ZOO_CONNECTED_STATE)
        connected = 1;
    else
        failed = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void created(int rc, const char *value, const void *data)
{
    (void)data;
    pthread_mutex_lock(&mu);
    if (rc == ZOK) {
        printf("%s\n", value);
        fflush(stdout);
    } else {
        if (!failed)
            first_error = rc;
        failed = 1;
    }
    in_flight--;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static zhandle_t *open_session(const char *hosts)
{
    zhandle_t *zh;
    int waited = 0;

    zoo_set_debug_level(0);
    zh = zookeeper_init(hosts, watcher, 10000, NULL, NULL, 0);
    if (zh == NULL)
        return NULL;
    pthread_mutex_lock(&mu);
    while (!connected && waited < 100) {
        pthread_mutex_unlock(&mu);
        usleep(100000);
        waited++;
        pthread_mutex_lock(&mu);
    }
    pthread_mutex_unlock(&mu);
    return connected ? zh : NULL;
}

static int do_write(const char *hosts, const char *prefix, int count)
{
    zhandle_t *zh = open_session(hosts);
    const char *size = getenv("ACKED_WRITER_DATA");
    int payload_len = size ? atoi(size) : 7;
    char *payload = calloc(1, (size_t)payload_len + 1);
    char path[512];
    int i;

    if (zh == NULL || payload == NULL) {
        fprintf(stderr, "cannot connect to %s\n", hosts);
        return 2;
    }
    memset(payload, 'p', (size_t)payload_len);
    zoo_create(zh, prefix, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    for (i = 0; i < count; i++) {
        pthread_mutex_lock(&mu);
        while (in_flight >= 64 && !failed)
            pthread_cond_wait(&cv, &mu);
        if (failed) {
            pthread_mutex_unlock(&mu);
            break;
        }
        in_flight++;
        pthread_mutex_unlock(&mu);
        snprintf(path, sizeof path, "%s/n-%d", prefix, i);
        if (zoo_acreate(zh, path, payload, payload_len, &ZOO_OPEN_ACL_UNSAFE,
                        0, created, NULL) != ZOK) {
            pthread_mutex_lock(&mu);
            in_flight--;
            pthread_mutex_unlock(&mu);
            break;
        }
    }
    pthread_mutex_lock(&mu);
    while (in_flight > 0 && !failed)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    /* Pending callbacks of a broken connection fire with an error. */
    zookeeper_close(zh);
    if (first_error != 0)
        fprintf(stderr, "stopped at the first error: %d\n", first_error);
    free(payload);
    return 0;
}

static int do_verify(const char *hosts)
{
    zhandle_t *zh = open_session(hosts);
    char line[512];
    struct Stat st;
    int missing = 0, checked = 0, rc;

    if (zh == NULL) {
        fprintf(stderr, "cannot connect to %s\n", hosts);
        return 2;
    }
    while (fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] != '/')
            continue;
        rc = zoo_exists(zh, line, 0, &st);
        checked++;
        if (rc != ZOK) {
            printf("missing %s (%s)\n", line, zerror(rc));
            missing++;
        }
    }
    zookeeper_close(zh);
    printf("verified %d acknowledged writes, %d missing\n", checked, missing);
    return missing ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "write") == 0)
        return do_write(argv[2], argv[3], atoi(argv[4]));
    if (argc == 3 && strcmp(argv[1], "verify") == 0)
        return do_verify(argv[2]);
    fprintf(stderr, "usage: acked_writer write HOST:PORT PREFIX COUNT\n"
                    "       acked_writer verify HOST:PORT < paths\n");
    return 2;
}
