/* The data directory's LOCK, taken by a start (replog.c) and by a
 * recovery (recover.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server/replog/internal.h"

/* One server per data directory: a second one would write the same log
 * files, and each would lose the other's acknowledged writes at the next
 * start.  The lock is a POSIX record lock on LOCK, held until the process
 * ends (the kernel drops it with the process, so a crash leaves no stale
 * lock), and not inherited by the snapshot child.  The file also holds
 * the owner's pid, for people. */
int replog__lock_dir(struct replog *l)
{
    char path[PATH_MAX], pid[24];
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int n;

    snprintf(path, sizeof path, "%s/LOCK", l->dir);
    l->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (l->lock_fd < 0 && errno == ENOTDIR) {
        replog__logf(l, REPLOG_LOG_ERROR,
                     "data directory %s is not a directory", l->dir);
        return TB_EIO;
    }
    if (l->lock_fd < 0) {
        replog__logf(l, REPLOG_LOG_ERROR, "open %s: %s", path, strerror(errno));
        return TB_EIO;
    }
    if (fcntl(l->lock_fd, F_SETLK, &fl) != 0) {
        if (errno != EACCES && errno != EAGAIN) {
            replog__logf(l, REPLOG_LOG_ERROR, "lock %s: %s", path,
                         strerror(errno));
            return TB_EIO;
        }
        fl = (struct flock){.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fcntl(l->lock_fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK)
            fl.l_pid = 0;
        replog__logf(l, REPLOG_LOG_ERROR,
                     "data directory %s is in use by another server (pid "
                     "%ld holds %s): two servers on one log lose each "
                     "other's writes; stop it, or give this one its own "
                     "dataDir",
                     l->dir, (long)fl.l_pid, path);
        return TB_ESYSTEM;
    }
    n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(l->lock_fd, 0) != 0 || write(l->lock_fd, pid, (size_t)n) != n)
        replog__logf(l, REPLOG_LOG_WARN, "write %s: %s", path, strerror(errno));
    return 0;
}
