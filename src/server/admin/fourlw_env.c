/* What `envi` and mntr's descriptor counts read from the system.  Kept
 * apart from the renderers, which only format what they are given, so
 * those stay testable on fixed data. */
#include <dirent.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "server/admin/fourlw.h"

static void copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src != NULL ? src : "");
}

/* Resident set size from /proc/self/statm (pages). */
static uint64_t resident_bytes(void)
{
    unsigned long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    long page = sysconf(_SC_PAGESIZE);

    if (f == NULL)
        return 0;
    if (fscanf(f, "%lu %lu", &size, &resident) != 2)
        resident = 0;
    fclose(f);
    return page > 0 ? (uint64_t)resident * (uint64_t)page : 0;
}

/* MemAvailable (free plus what the kernel can reclaim), in bytes; 0 if
 * the kernel does not say. */
static uint64_t available_bytes(void)
{
    unsigned long long kb = 0;
    char line[256];
    FILE *f = fopen("/proc/meminfo", "r");

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024;
}

static void collect_memory(struct fourlw_env *env)
{
    struct sysinfo si;
    struct rlimit rl;

    if (sysinfo(&si) == 0) {
        env->mem_free = (uint64_t)si.freeram * si.mem_unit;
        env->mem_max = (uint64_t)si.totalram * si.mem_unit;
    }
    if (available_bytes() > 0)
        env->mem_free = available_bytes();
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (env->mem_max == 0 || (uint64_t)rl.rlim_cur < env->mem_max))
        env->mem_max = (uint64_t)rl.rlim_cur;
    env->mem_total = resident_bytes();
}

void fourlw_env_collect(struct fourlw_env *env)
{
    struct passwd pw, *found = NULL;
    struct utsname u;
    char pwbuf[4096];

    memset(env, 0, sizeof *env);
    if (gethostname(env->host_name, sizeof env->host_name - 1) != 0)
        env->host_name[0] = '\0';
    if (uname(&u) == 0) {
        copy(env->os_name, sizeof env->os_name, u.sysname);
        copy(env->os_arch, sizeof env->os_arch, u.machine);
        copy(env->os_version, sizeof env->os_version, u.release);
    }
    if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof pwbuf, &found) == 0 &&
        found != NULL) {
        copy(env->user_name, sizeof env->user_name, pw.pw_name);
        copy(env->user_home, sizeof env->user_home, pw.pw_dir);
    }
    if (getcwd(env->user_dir, sizeof env->user_dir) == NULL)
        env->user_dir[0] = '\0';
    collect_memory(env);
}

void fourlw_fd_counts(uint64_t *open_fds, uint64_t *max_fds)
{
    struct rlimit rl;
    struct dirent *d;
    DIR *dir;

    *open_fds = 0;
    *max_fds = 0;
    if ((dir = opendir("/proc/self/fd")) != NULL) {
        while ((d = readdir(dir)) != NULL)
            if (d->d_name[0] != '.')
                (*open_fds)++;
        closedir(dir);
        if (*open_fds > 0)
            (*open_fds)--; /* the descriptor opendir itself holds */
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        *max_fds = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX
                                                : (uint64_t)rl.rlim_cur;
}
