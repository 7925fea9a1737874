/* A JSON writer for the AdminServer's answers and the server's JSON log
 * lines: values appended to a tb_wbuf, commas and nesting tracked here so
 * callers only say what comes next.  Strings are always valid UTF-8 (json.c
 * says how).  Writing only; nothing here reads JSON.
 *
 * At all times `depth` is the number of open objects and arrays, and
 * `more[d]` says whether the container at depth d already holds a value
 * (the next one needs a comma).  Nesting deeper than JSON_MAX_DEPTH is a
 * bug of the caller: the buffer is marked oom, and the answer refused. */
#ifndef TB_JSON_H
#define TB_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

#define JSON_MAX_DEPTH 16

struct json {
    struct tb_wbuf *out;
    int depth;
    unsigned char more[JSON_MAX_DEPTH];
    char closer[JSON_MAX_DEPTH];       /* '}' or ']' */
    int after_key; /* a key was written: its value needs no comma */
};

void json_init(struct json *j, struct tb_wbuf *out);
void json_object(struct json *j); /* { */
void json_array(struct json *j);  /* [ */
void json_end(struct json *j);    /* } or ], whichever is open */
void json_key(struct json *j, const char *key);
void json_keyn(struct json *j, const char *key, size_t len);
void json_str(struct json *j, const char *s);
void json_strn(struct json *j, const char *s, size_t len);
/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or 0. */
size_t json_utf8_len(const unsigned char *p, size_t left);
void json_int(struct json *j, int64_t v);
/* The shortest digits that read back as v, always with a '.' or an
 * exponent (0.0, as Java writes a double); null for NaN and infinities. */
void json_double(struct json *j, double v);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* A value already written as JSON text (a number from a text rendering). */
void json_raw(struct json *j, const char *text, size_t len);

#endif
