/* For the unit tests of what a process does with no memory to be had:
 * in a child, limits its address space to what it has mapped now, so
 * that any further mapping fails.  Not under ASan, whose allocator stops
 * the process itself once no address space is left. */
#ifndef TB_TEST_ADDRESS_SPACE_H
#define TB_TEST_ADDRESS_SPACE_H

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

/* 0, or -1 if the limit could not be set.  `spare`: bytes allowed above
 * what is mapped. */
static inline int address_space_limit(size_t spare)
{
    struct rlimit rl;
    long pages = 0;
    FILE *statm = fopen("/proc/self/statm", "r");

    if (statm == NULL)
        return -1;
    if (fscanf(statm, "%ld", &pages) != 1)
        pages = -1;
    fclose(statm);
    if (pages < 0)
        return -1;
    rl.rlim_cur = rl.rlim_max =
        (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + spare;
    return setrlimit(RLIMIT_AS, &rl);
}

#endif
