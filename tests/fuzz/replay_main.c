/* The main() that fuzz targets link with when they are not built with
 * libFuzzer: it runs every file of the given directories (and the given
 * files) through LLVMFuzzerTestOneInput once, so that the seed corpora and
 * the saved regressions are replayed by ctest on every change, with any
 * compiler.  Without arguments it replays the directories compiled in.
 *
 * Each input is copied into a buffer of exactly its size, so a sanitizer
 * build catches a read one byte past the end as libFuzzer would.  A
 * missing directory is skipped (a target may have no regressions yet). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

#ifndef FUZZ_NAME
#define FUZZ_NAME "fuzz"
#endif

static int run_file(const char *path, unsigned long *count)
{
    FILE *fp = fopen(path, "rb");
    uint8_t *buf = NULL;
    long size;

    if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 || (size = ftell(fp)) < 0 ||
        fseek(fp, 0, SEEK_SET) != 0) {
        fprintf(stderr, "%s: %s: %s\n", FUZZ_NAME, path, strerror(errno));
        if (fp)
            fclose(fp);
        return -1;
    }
    /* malloc(0) may return NULL; an empty input still needs a pointer. */
    buf = malloc(size > 0 ? (size_t)size : 1);
    if (buf == NULL ||
        (size > 0 && fread(buf, 1, (size_t)size, fp) != (size_t)size)) {
        fprintf(stderr, "%s: %s: read failed\n", FUZZ_NAME, path);
        free(buf);
        fclose(fp);
        return -1;
    }
    fclose(fp);
    if (getenv("FUZZ_REPLAY_VERBOSE"))
        fprintf(stderr, "%s: %s (%ld bytes)\n", FUZZ_NAME, path, size);
    LLVMFuzzerTestOneInput(buf, (size_t)size);
    free(buf);
    (*count)++;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of `dir`, in name order so runs are repeatable. */
static int run_dir(const char *dir, unsigned long *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL, **grown, path[4096];
    size_t n = 0, cap = 0, i;
    struct stat st;
    int rv = 0;

    if (d == NULL)
        return errno == ENOENT ? 0 : -1;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            grown = realloc(names, cap * sizeof *names);
            if (grown == NULL) {
                rv = -1;
                break;
            }
            names = grown;
        }
        if ((names[n] = strdup(e->d_name)) == NULL) {
            rv = -1;
            break;
        }
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, cmp_names);
    for (i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (rv == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
            rv = run_file(path, count);
        free(names[i]);
    }
    free(names);
    return rv;
}

static int run_arg(const char *arg, unsigned long *count)
{
    struct stat st;

    if (stat(arg, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    return S_ISDIR(st.st_mode) ? run_dir(arg, count) : run_file(arg, count);
}

int main(int argc, char **argv)
{
#ifdef FUZZ_DIRS
    static const char *defaults[] = {FUZZ_DIRS};
#else
    static const char *defaults[] = {"."};
#endif
    unsigned long count = 0;
    int i;

    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    if (argc > 1) {
        for (i = 1; i < argc; i++)
            if (run_arg(argv[i], &count) != 0)
                return 1;
    } else {
        for (i = 0; i < (int)(sizeof defaults / sizeof defaults[0]); i++)
            if (run_arg(defaults[i], &count) != 0)
                return 1;
    }
    printf("%s: %lu inputs replayed\n", FUZZ_NAME, count);
    /* A corpus that vanished would otherwise pass silently. */
    return count > 0 ? 0 : 1;
}
