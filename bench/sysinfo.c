/* What the benchmark reads about the server process from /proc: its pid
 * (found from the listening port when not given), resident memory and CPU
 * time; and how busy the whole machine was.  Both servers are measured the
 * same way, from outside, so neither needs to report on itself. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbbench.h"

/* The inode of the socket listening on `port` in a /proc/net/tcp* table,
 * or 0.  State 0A is TCP_LISTEN. */
static unsigned long listen_inode(const char *table, int port)
{
    FILE *f = fopen(table, "r");
    char line[512];
    unsigned long inode = 0;

    if (f == NULL)
        return 0;
    if (fgets(line, sizeof(line), f) == NULL) { /* header */
        fclose(f);
        return 0;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char local[128], remote[128], st[8];
        unsigned long ino;
        const char *colon;
        if (sscanf(line, "%*s %127s %127s %7s %*s %*s %*s %*s %*s %lu", local,
                   remote, st, &ino) != 4)
            continue;
        colon = strrchr(local, ':');
        if (colon == NULL || strtol(colon + 1, NULL, 16) != port)
            continue;
        if (strcmp(st, "0A") == 0) {
            inode = ino;
            break;
        }
    }
    fclose(f);
    return inode;
}

static int pid_has_socket(const char *pid, unsigned long inode)
{
    char dir[64], link[128], target[64], want[64];
    DIR *d;
    struct dirent *e;
    int found = 0;

    snprintf(dir, sizeof(dir), "/proc/%.20s/fd", pid);
    snprintf(want, sizeof(want), "socket:[%lu]", inode);
    d = opendir(dir);
    if (d == NULL)
        return 0;
    while (!found && (e = readdir(d)) != NULL) {
        ssize_t n;
        if (e->d_name[0] == '.')
            continue;
        snprintf(link, sizeof(link), "%s/%.16s", dir, e->d_name);
        n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        found = strcmp(target, want) == 0;
    }
    closedir(d);
    return found;
}

long bn_find_listener_pid(int port)
{
    unsigned long inode = listen_inode("/proc/net/tcp", port);
    DIR *d;
    struct dirent *e;
    long pid = -1;

    if (inode == 0)
        inode = listen_inode("/proc/net/tcp6", port);
    if (inode == 0)
        return -1;
    d = opendir("/proc");
    if (d == NULL)
        return -1;
    while (pid < 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        if (pid_has_socket(e->d_name, inode))
            pid = strtol(e->d_name, NULL, 10);
    }
    closedir(d);
    return pid;
}

static int read_cpu(long pid, uint64_t *ticks)
{
    char path[64], buf[1024];
    FILE *f;
    const char *p;
    unsigned long long ut, st;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* comm may hold spaces or parentheses: fields restart after the last ')' */
    p = strrchr(buf, ')');
    if (p == NULL)
        return -1;
    /* after ')': state(3) ... utime is field 14, stime 15 */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
               &ut, &st) != 2)
        return -1;
    *ticks = (uint64_t)(ut + st);
    return 0;
}

static int read_mem(long pid, uint64_t *rss, uint64_t *hwm)
{
    char path[64], line[256];
    FILE *f;
    int got = 0;

    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long long v;
        if (sscanf(line, "VmRSS: %llu kB", &v) == 1) {
            *rss = v;
            got |= 1;
        } else if (sscanf(line, "VmHWM: %llu kB", &v) == 1) {
            *hwm = v;
            got |= 2;
        }
    }
    fclose(f);
    return got == 3 ? 0 : -1;
}

int bn_proc_sample(long pid, struct bn_proc_sample *s)
{
    memset(s, 0, sizeof(*s));
    if (pid <= 0)
        return -1;
    if (read_cpu(pid, &s->cpu_ticks) != 0 ||
        read_mem(pid, &s->rss_kb, &s->hwm_kb) != 0)
        return -1;
    s->ok = 1;
    return 0;
}

int bn_machine_sample(struct bn_machine_sample *m)
{
    unsigned long long v[8];
    FILE *f = fopen("/proc/stat", "r");
    int n;

    memset(m, 0, sizeof(*m));
    if (f == NULL)
        return -1;
    n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n != 8)
        return -1;
    /* idle (3) and iowait (4) are the CPUs' free time; steal (7) the
     * hypervisor's, given to other machines */
    m->busy = v[0] + v[1] + v[2] + v[5] + v[6];
    m->steal = v[7];
    m->all = m->busy + v[3] + v[4] + v[7];
    m->ok = 1;
    return 0;
}

double bn_machine_cpus(const struct bn_machine_sample *a,
                       const struct bn_machine_sample *b, uint64_t part)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    if (!a->ok || !b->ok || b->all <= a->all)
        return 0.0;
    return (double)(cpus > 0 ? cpus : 1) * (double)part /
           (double)(b->all - a->all);
}

double bn_ticks_to_s(uint64_t ticks)
{
    long hz = sysconf(_SC_CLK_TCK);

    return (double)ticks / (double)(hz > 0 ? hz : 100);
}
