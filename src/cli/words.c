/* Splitting a shell line into words, as sh would for the simple cases:
 * blanks separate words, '...' is literal, "..." allows \" and \\, and a
 * backslash outside quotes escapes the next character.  No expansions:
 * the words go to the commands as they are. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

void cli_words_free(char **v, int n)
{
    int i;

    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Splits `line` with sh-like quoting: '...' literal, "..." with \" \\,
 * backslash outside quotes.  Returns the word count (argv NULL-ended), or
 * -1 on an unterminated quote or out of memory. */
int cli_words_split(const char *line, char ***out)
{
    size_t cap = 8, len = strlen(line);
    char **v = calloc(cap + 1, sizeof *v), *w = NULL;
    int n = 0;
    size_t wl = 0;
    const char *p = line;

    if (v == NULL)
        return -1;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if ((w = malloc(len + 1)) == NULL)
            goto fail;
        wl = 0;
        while (*p && !isspace((unsigned char)*p)) {
            if (*p == '\'') {
                const char *e = strchr(p + 1, '\'');
                if (e == NULL)
                    goto fail;
                memcpy(w + wl, p + 1, (size_t)(e - p - 1));
                wl += (size_t)(e - p - 1);
                p = e + 1;
            } else if (*p == '"') {
                for (p++; *p && *p != '"'; p++) {
                    if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                        p++;
                    w[wl++] = *p;
                }
                if (*p != '"')
                    goto fail;
                p++;
            } else if (*p == '\\' && p[1]) {
                w[wl++] = p[1];
                p += 2;
            } else {
                w[wl++] = *p++;
            }
        }
        w[wl] = '\0';
        if ((size_t)n == cap) {
            char **nv = realloc(v, (cap * 2 + 1) * sizeof *v);
            if (nv == NULL)
                goto fail;
            v = nv;
            cap *= 2;
        }
        v[n++] = w;
        v[n] = NULL;
        w = NULL;
    }
    *out = v;
    return n;
fail:
    free(w);
    cli_words_free(v, n);
    return -1;
}
