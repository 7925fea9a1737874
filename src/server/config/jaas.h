/* The users of a JAAS login configuration's section, as ZooKeeper's
 * DIGEST-MD5 login reads them.  ZooKeeper takes its SASL users from the
 * section `Server` of the file named by the JVM property
 * java.security.auth.login.config: every option `user_<name>="<password>"`
 * of every login module in it.  A Kerberos module there means GSSAPI,
 * which tumblerd does not offer, so it is refused rather than ignored. */
#ifndef TB_JAAS_H
#define TB_JAAS_H

#include <stddef.h>

struct jaas_user {
    char *name;
    char *password;
};

/* Reads `path` and returns the users of `section`, in file order (a later
 * option for the same user replaces the earlier).  0, or TB_EIO / TB_EINVAL
 * / TB_ENOMEM with a message naming the file and line in err.  A section
 * without users is an error too: no client could log in. */
int jaas_load_users(const char *path, const char *section,
                    struct jaas_user **users, size_t *n, char *err,
                    size_t errlen);
void jaas_free_users(struct jaas_user *users, size_t n);

#endif
