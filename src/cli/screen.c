/* The terminal side of `tumbler top`.  Escapes used (ECMA-48 and xterm's,
 * which every terminal emulator in use and tmux understand):
 *   ESC [?1049h / l   enter / leave the alternate screen
 *   ESC [?25l / h     hide / show the cursor
 *   ESC [H            cursor to the top left
 *   ESC [K            erase to the end of the line
 *   ESC [J            erase below the cursor
 * A frame is drawn over the previous one and goes out in one write, so
 * there is no flicker; lines are cut to the width read with TIOCGWINSZ
 * before each frame, so after a resize the next frame fits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/screen.h"

static void put(const char *s)
{
    ssize_t r = write(STDOUT_FILENO, s, strlen(s));

    (void)r; /* a terminal gone away: nothing more to show */
}

/* The input without ICANON and ECHO (ISIG kept: ^C is SIGINT, ^Z
 * SIGTSTP); 1 if set. */
static int set_raw(const struct screen *s)
{
    struct termios t = s->saved;

    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    return tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
}

int screen_open(struct screen *s)
{
    memset(s, 0, sizeof *s);
    if (!isatty(STDOUT_FILENO))
        return -1;
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &s->saved) == 0)
        s->raw = set_raw(s);
    fflush(stdout);
    put("\033[?1049h\033[?25l\033[H\033[J");
    s->on = 1;
    return 0;
}

static void size_of(int *rows, int *cols)
{
    struct winsize w;

    *rows = 24;
    *cols = 80;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_row > 0 &&
        w.ws_col > 0) {
        *rows = w.ws_row;
        *cols = w.ws_col;
    }
}

/* Bytes of `p` (up to `n`) that fill at most `cols` columns: one column a
 * character, a UTF-8 continuation byte none. */
static size_t fit(const char *p, size_t n, int cols)
{
    size_t i;
    int used = 0;

    for (i = 0; i < n; i++) {
        if (((unsigned char)p[i] & 0xc0) == 0x80)
            continue;
        if (used == cols)
            break;
        used++;
    }
    return i;
}

void screen_draw(struct screen *s, const char *text, size_t len)
{
    const char *p = text, *end = text + len, *nl;
    size_t out = 0, k;
    int rows, cols, row = 0, lines = 0;
    char *buf, more[64];

    size_of(&rows, &cols);
    /* the text, 5 bytes of escapes a row, 6 around, the last row's note */
    if (!s->on || s->away ||
        (buf = malloc(len + 5 * (size_t)rows + 6 + 64)) == NULL)
        return;
    for (nl = text; nl < end; nl++)
        lines += *nl == '\n';
    memcpy(buf, "\033[H", 3);
    out = 3;
    for (; p < end && row < rows; p = nl + 1, row++) {
        if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
            nl = end;
        if (row == rows - 1 && lines > rows) {
            snprintf(more, sizeof more, "(%d more lines)", lines - row);
            p = more;
            nl = more + strlen(more);
        }
        k = fit(p, (size_t)(nl - p), cols);
        memcpy(buf + out, p, k);
        out += k;
        /* no newline after the last row: it would scroll the screen */
        memcpy(buf + out, "\033[K\r\n", 5);
        out += row < rows - 1 ? 5 : 3;
        if (p == more)
            break;
    }
    memcpy(buf + out, "\033[J", 3);
    out += 3;
    if (write(STDOUT_FILENO, buf, out) < 0) {
        /* nothing to do: the terminal went away */
    }
    free(buf);
}

void screen_suspend(struct screen *s)
{
    if (!s->on || s->away)
        return;
    put("\033[?25h\033[?1049l");
    if (s->raw)
        (void)tcsetattr(STDIN_FILENO, TCSANOW, &s->saved);
    s->away = 1;
}

void screen_resume(struct screen *s)
{
    if (!s->on)
        return;
    if (s->raw)
        (void)set_raw(s);
    if (s->away)
        put("\033[?1049h\033[?25l\033[H\033[J");
    s->away = 0;
}

void screen_close(struct screen *s)
{
    screen_suspend(s);
    s->on = 0;
    s->away = 0;
}
