/* A set of servers (server.N lines), as reconfig reads, changes and
 * checks it: from zoo.cfg or /zookeeper/config's text, a reconfig's
 * joining and leaving lists, and ZooKeeper's duplicate-address check. */
#ifndef TB_PROC_MEMBERS_H
#define TB_PROC_MEMBERS_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "server/config/config.h"

/* A set of servers in ascending id order, as ZooKeeper's text lists them,
 * owned (tb_config_server_free each). */
struct members {
    struct tb_config_server *v;
    size_t n;
    int64_t version; /* /zookeeper/config's, 0 for the server.N lines */
};

void members_free(struct members *m);
struct tb_config_server *members_find(const struct members *m, int id);
/* Puts (or replaces) server.id=spec, in id order; TB_EINVAL with `err`. */
int members_put(struct members *m, int id, const char *spec, char *err,
                size_t errlen);
void members_del(struct members *m, int id);
/* "server.N=spec" items split at any of `seps`; "version=..." items are
 * skipped when skip_version.  Each must have a client part when
 * need_client, as ZooKeeper's joiners must.  0, TB_EINVAL with `err`, or
 * TB_ENOMEM. */
int parse_lines(struct members *m, struct tb_str text, const char *seps,
                int skip_version, int need_client, char *err, size_t errlen);
int voter(const struct tb_config_server *s);
/* s without its leading and trailing blanks (cut in place). */
char *members_trim(char *s);
/* ZooKeeper's checkAddressDuplicate over `next` (`cur` the servers before:
 * a line unchanged is not looked at): 0, or TB_EINVAL with `err`. */
int duplicate_address(const struct members *next, const struct members *cur,
                      char *err, size_t errlen);

#endif
