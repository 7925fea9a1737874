/* What the log's tests share (wal_fixture.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/capability.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/replog/internal.h"
#include "server/replog/wal.h"

#include "wal_fixture.h"

void seg_name(const struct fx *f, uint64_t seq, char *buf, size_t n)
{
    snprintf(buf, n, "%s/wal-%016llx", f->dir, (unsigned long long)seq);
}

int unwritten_extents(int fd)
{
    union {
        struct fiemap m;
        char raw[sizeof(struct fiemap) + 32 * sizeof(struct fiemap_extent)];
    } u;
    int n = 0;

    memset(&u, 0, sizeof u);
    u.m.fm_length = FIEMAP_MAX_OFFSET;
    u.m.fm_flags = FIEMAP_FLAG_SYNC;
    u.m.fm_extent_count = 32;
    if (ioctl(fd, FS_IOC_FIEMAP, &u.m) != 0)
        return -1;
    for (unsigned i = 0; i < u.m.fm_mapped_extents; i++)
        n += (u.m.fm_extents[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN) != 0;
    return n;
}

int prepared_unwritten(struct fx *f, uint64_t seq)
{
    struct replog_stats s;
    char path[300];
    struct stat st;
    int i, fd, n;

    seg_name(f, seq, path, sizeof path);
    for (i = 0; i < 3000; i++) {
        replog_get_stats(f->l, &s);
        if (s.log_segments_zeroed + s.log_segments_reserved >= seq)
            break;
        run_for(f, 10);
    }
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, REPLOG_SEGMENT_BYTES);
    assert_true(st.st_blocks * 512 >= REPLOG_SEGMENT_BYTES);
    n = unwritten_extents(fd);
    close(fd);
    return n;
}

uint64_t find_spare(const struct fx *f)
{
    DIR *d = opendir(f->dir);
    struct dirent *de;
    unsigned long long seq = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL &&
           sscanf(de->d_name, "wal-spare-%16llx", &seq) != 1)
        seq = 0;
    closedir(d);
    return seq;
}
