/* A full-terminal view with plain ANSI escapes (screen.c), for `tumbler
 * top`: the alternate screen, so the shell's screen comes back on exit;
 * keys read one at a time, not echoed; each frame drawn over the last
 * one, cut to the terminal's size as it is at that moment, so a resize
 * needs only a redraw (SIGWINCH). */
#ifndef TB_CLI_SCREEN_H
#define TB_CLI_SCREEN_H

#include <stddef.h>
#include <termios.h>

/* At all times, while `on` and not `away`: the terminal shows the
 * alternate screen with the cursor hidden, and if `raw` the input is in
 * `saved`'s mode less ICANON and ECHO.  While `away` (suspended), the
 * terminal is as it was before screen_open. */
struct screen {
    int on;
    int away;
    int raw;
    struct termios saved;
};

/* Enters the view: 0, or -1 if stdout is not a terminal. */
int screen_open(struct screen *s);
/* Draws `text` (lines ended by '\n') from the top left: each line cut to
 * the width, lines past the height left out but for a last "(N more
 * lines)". */
void screen_draw(struct screen *s, const char *text, size_t len);
/* Leaves the view, giving the terminal back as it was. */
void screen_close(struct screen *s);
/* For job control: screen_suspend gives the terminal back as screen_close
 * does, before the process stops (SIGTSTP); screen_resume takes it again
 * once continued (SIGCONT), the input's mode set again even if the view
 * was not left (a SIGSTOP, after which the shell may have changed it).
 * The caller then draws a frame. */
void screen_suspend(struct screen *s);
void screen_resume(struct screen *s);

#endif
