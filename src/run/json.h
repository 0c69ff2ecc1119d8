/* JSON output of the runtime's tools (courier status --json, the merged trace):
 * one string, quoted and escaped. */
#ifndef COURIER_RUN_JSON_H
#define COURIER_RUN_JSON_H

#include <stdio.h>

/* s as a JSON string (NULL: ""); control characters as \u00XX. */
static inline void cr_json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20)
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

#endif
