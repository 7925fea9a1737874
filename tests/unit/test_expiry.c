/* Unit tests of session expiry (src/server/proc/expiry.c) on virtual time:
 * a session is closed at the first tick at or past its deadline and not a
 * millisecond before; a touch, a reconnect's new timeout, a restart and a
 * stalled loop each move the deadline by exactly what they should; a close
 * is proposed once, and asked again while the log refuses it.
 *
 * The ticks are driven as session.c drives them (expiry_lost, then
 * expiry_tick), every `period` ms: tumblerd ticks every half tickTime, so
 * period 1000 is ZooKeeper's default tickTime of 2000.  Linked with
 * --wrap=calloc to fail an allocation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/common.h"
#include "server/proc/expiry.h"

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

static long fail_in = -1; /* fail the calloc after this many; -1: never */

void *__wrap_calloc(size_t n, size_t size)
{
    if (fail_in >= 0 && fail_in-- == 0)
        return NULL;
    return __real_calloc(n, size);
}

/* Far from 0, which expiry_lost takes for "no tick yet". */
#define T0 1000000u

struct close_rec {
    int64_t id;
    uint64_t at;
};

struct fx {
    struct tb_map m;
    uint64_t period, last, next; /* the ticker: period, last tick, next */
    uint64_t now;                /* the time of the tick running */
    int refuse;                  /* what close answers */
    int fail_at_once;            /* close reports the failure itself */
    struct close_rec closes[16];
    size_t n;
    size_t asked; /* close calls, refused ones included */
};

static int on_close(void *arg, const struct sess *se)
{
    struct fx *f = arg;

    f->asked++;
    if (f->refuse != 0)
        return f->refuse;
    if (f->fail_at_once) { /* taken, and failed before it returns */
        expiry_close_failed(&f->m, se->id);
        return 0;
    }
    assert_true(f->n < sizeof f->closes / sizeof f->closes[0]);
    f->closes[f->n++] = (struct close_rec){se->id, f->now};
    return 0;
}

/* One tick of `m` at `now`, as session_tick runs it. */
static void tick(struct fx *f, struct tb_map *m, uint64_t now)
{
    uint64_t lost = expiry_lost(f->period, &f->last, now);

    f->now = now;
    expiry_tick(m, now, lost, on_close, f);
}

/* Every regular tick up to `until`, each at its time. */
static void ticks_until(struct fx *f, uint64_t until)
{
    while (f->next <= until) {
        tick(f, &f->m, f->next);
        f->next += f->period;
    }
}

/* The regular ticks before `now`, then one at `now`: a tick at any time,
 * never late enough to count as a stall. */
static void tick_at(struct fx *f, uint64_t now)
{
    ticks_until(f, now - 1);
    tick(f, &f->m, now);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);

    assert_non_null(f);
    tb_map_init(&f->m);
    f->period = 1000;
    f->next = T0 + f->period;
    fail_in = -1;
    *state = f;
    return 0;
}

static void free_sessions(struct tb_map *m)
{
    uint64_t key;
    void *v;
    size_t i;

    for (i = 0; tb_map_next(m, &i, &key, &v);)
        free(v);
    tb_map_free(m);
}

static int teardown(void **state)
{
    struct fx *f = *state;

    free_sessions(&f->m);
    free(f);
    return 0;
}

static void assert_closes(const struct fx *f, size_t n)
{
    assert_int_equal(f->n, n);
}

/* Due at the deadline itself, not before: a tick 1 ms short leaves it. */
static void due_at_deadline(void **state)
{
    struct fx *f = *state;

    assert_non_null(expiry_open(&f->m, 1, 4000, T0));
    tick_at(f, T0 + 3000);
    tick_at(f, T0 + 3999);
    assert_closes(f, 0);
    tick_at(f, T0 + 4000);
    assert_closes(f, 1);
    assert_int_equal(f->closes[0].id, 1);
    assert_int_equal(f->closes[0].at, T0 + 4000);
}

/* With ticks out of phase with the touch, the first tick past the deadline
 * closes it: between timeout and timeout + one period after the touch. */
static void due_at_first_tick_past_deadline(void **state)
{
    struct fx *f = *state;

    f->next = T0 + 250;
    assert_non_null(expiry_open(&f->m, 7, 4000, T0));
    ticks_until(f, T0 + 4000); /* the last at T0 + 3250 */
    assert_closes(f, 0);
    ticks_until(f, T0 + 4250);
    assert_closes(f, 1);
    assert_int_equal(f->closes[0].at, T0 + 4250);
}

static void sessions_due_each_at_its_own(void **state)
{
    struct fx *f = *state;

    assert_non_null(expiry_open(&f->m, 3, 10000, T0));
    assert_non_null(expiry_open(&f->m, 1, 4000, T0));
    assert_non_null(expiry_open(&f->m, 2, 6000, T0 + 500));
    ticks_until(f, T0 + 20000);
    assert_closes(f, 3);
    assert_int_equal(f->closes[0].id, 1);
    assert_int_equal(f->closes[0].at, T0 + 4000);
    assert_int_equal(f->closes[1].id, 2);
    assert_int_equal(f->closes[1].at, T0 + 7000);
    assert_int_equal(f->closes[2].id, 3);
    assert_int_equal(f->closes[2].at, T0 + 10000);
}

/* Every request touches: the deadline counts from the last one. */
static void touch_moves_deadline(void **state)
{
    struct fx *f = *state;

    assert_non_null(expiry_open(&f->m, 1, 4000, T0));
    expiry_touch(&f->m, 1, T0 + 3000);
    expiry_touch(&f->m, 99, T0 + 3000); /* unknown: ignored */
    assert_int_equal(f->m.count, 1);
    tick_at(f, T0 + 4000);
    tick_at(f, T0 + 6999);
    assert_closes(f, 0);
    tick_at(f, T0 + 7000);
    assert_closes(f, 1);
    assert_int_equal(f->closes[0].at, T0 + 7000);
}

/* A client that pings every third of its timeout is never due. */
static void pings_keep_alive(void **state)
{
    struct fx *f = *state;
    uint64_t t, last = T0;

    assert_non_null(expiry_open(&f->m, 1, 3000, T0));
    for (t = T0 + 1000; t <= T0 + 60000; t += 1000) {
        ticks_until(f, t);
        expiry_touch(&f->m, 1, t);
        last = t;
    }
    assert_closes(f, 0);
    tick_at(f, last + 2999);
    assert_closes(f, 0);
    tick_at(f, last + 3000);
    assert_closes(f, 1);
}

/* A reconnect negotiates a timeout anew: it counts from the reconnect, and
 * every later touch uses it. */
static void attach_takes_new_timeout(void **state)
{
    struct fx *f = *state;

    assert_non_null(expiry_open(&f->m, 1, 4000, T0));
    expiry_attach(&f->m, 1, 10000, T0 + 1000);
    expiry_attach(&f->m, 99, 10000, T0 + 1000); /* unknown: ignored */
    assert_int_equal(f->m.count, 1);
    tick_at(f, T0 + 10999);
    assert_closes(f, 0);
    expiry_touch(&f->m, 1, T0 + 10999);
    tick_at(f, T0 + 20998);
    assert_closes(f, 0);
    tick_at(f, T0 + 20999);
    assert_closes(f, 1);
}

/* The close is proposed once; later ticks leave the session alone until
 * the close is applied and forgets it. */
static void close_proposed_once(void **state)
{
    struct fx *f = *state;

    assert_non_null(expiry_open(&f->m, 1, 4000, T0));
    ticks_until(f, T0 + 30000);
    assert_closes(f, 1);
    assert_int_equal(f->asked, 1);
    assert_int_equal(f->closes[0].at, T0 + 4000);
    expiry_forget(&f->m, 1);
    expiry_forget(&f->m, 1); /* twice: nothing left to forget */
    assert_int_equal(f->m.count, 0);
    ticks_until(f, T0 + 40000);
    assert_int_equal(f->asked, 1);
}

/* A close the log refuses (this server is not the leader, the log is
 * failing) is asked again at every tick until one is taken. */
static void refused_close_asked_again(void **state)
{
    struct fx *f = *state;

    assert_non_null(expiry_open(&f->m, 1, 4000, T0));
    f->refuse = TB_ESYSTEM;
    ticks_until(f, T0 + 6000);
    assert_int_equal(f->asked, 3); /* T0 + 4000, 5000, 6000 */
    assert_closes(f, 0);
    f->refuse = 0;
    ticks_until(f, T0 + 10000);
    assert_int_equal(f->asked, 4);
    assert_closes(f, 1);
    assert_int_equal(f->closes[0].at, T0 + 7000);
}

/* A close the log took and then failed (a write error, leadership lost)
 * is proposed again at the next tick, also when the failure is told
 * before the proposal returns; left closing, the session would never
 * expire and its ephemeral nodes (its locks) would stay. */
static void failed_close_asked_again(void **state)
{
    struct fx *f = *state;

    assert_non_null(expiry_open(&f->m, 1, 4000, T0));
    ticks_until(f, T0 + 4000);
    assert_closes(f, 1);
    expiry_close_failed(&f->m, 1); /* the proposal's failure, told later */
    ticks_until(f, T0 + 5000);
    assert_closes(f, 2);
    assert_int_equal(f->closes[1].at, T0 + 5000);
    f->fail_at_once = 1;
    expiry_close_failed(&f->m, 1);
    ticks_until(f, T0 + 7000);
    assert_int_equal(f->asked, 4); /* T0 + 6000 and 7000: failed at once */
    f->fail_at_once = 0;
    ticks_until(f, T0 + 8000);
    assert_closes(f, 3);
    ticks_until(f, T0 + 10000);
    assert_closes(f, 3);            /* proposed once since */
    expiry_close_failed(&f->m, 99); /* an unknown id: nothing */
}

/* After a restart the sessions in the fsm are opened again from the
 * restart's time, however long the server was down.  Opening again a
 * session whose close was proposed (as a new leader must: the close may
 * be lost with the old one) starts it afresh too. */
static void fresh_timeout_after_restart(void **state)
{
    struct fx *f = *state;
    struct tb_map after;
    struct sess *se;
    const uint64_t r = T0 + 100000;

    assert_non_null(expiry_open(&f->m, 1, 4000, T0));
    assert_non_null(expiry_open(&f->m, 2, 4000, T0 + 2000));
    ticks_until(f, T0 + 4000);
    assert_closes(f, 1);

    /* A restarted server: a new table, a new ticker. */
    tb_map_init(&after);
    assert_non_null(expiry_open(&after, 1, 4000, r));
    assert_non_null(expiry_open(&after, 2, 4000, r));
    f->last = 0;
    tick(f, &after, r + 3999);
    assert_closes(f, 1);
    tick(f, &after, r + 4000);
    assert_closes(f, 3);
    assert_int_equal(f->closes[1].at, r + 4000);
    assert_int_equal(f->closes[2].at, r + 4000);
    free_sessions(&after);

    /* The same table, opened again. */
    se = expiry_open(&f->m, 1, 4000, r);
    assert_non_null(se);
    assert_false(se->closing);
    assert_int_equal(se->deadline_ms, r + 4000);
    assert_int_equal(f->m.count, 2);
}

/* A tick more than two periods late: the time past one period counts
 * against no session, whether its deadline fell in the gap or after it. */
static void stall_moves_deadlines(void **state)
{
    struct fx *f = *state;

    ticks_until(f, T0 + 2000);
    assert_non_null(expiry_open(&f->m, 1, 4000, T0 + 2000));
    assert_non_null(expiry_open(&f->m, 2, 30000, T0 + 2000));
    /* Stopped from T0 + 2000 to T0 + 9000: 6000 ms lost. */
    tick(f, &f->m, T0 + 9000);
    assert_int_equal(f->last, T0 + 9000);
    assert_closes(f, 0);
    f->next = T0 + 10000;
    ticks_until(f, T0 + 11999);
    assert_closes(f, 0);
    ticks_until(f, T0 + 12000);
    assert_closes(f, 1);
    assert_int_equal(f->closes[0].id, 1);
    ticks_until(f, T0 + 37999);
    assert_closes(f, 1);
    ticks_until(f, T0 + 38000);
    assert_closes(f, 2);
}

/* What counts as a stall, to the millisecond. */
static void lost_time(void **state)
{
    uint64_t last = 0;

    (void)state;
    /* The first tick has nothing to compare with. */
    assert_int_equal(expiry_lost(1000, &last, T0 + 50000), 0);
    assert_int_equal(last, T0 + 50000);
    /* Late, but within two periods: the loop was busy, not stopped. */
    assert_int_equal(expiry_lost(1000, &last, T0 + 52000), 0);
    assert_int_equal(expiry_lost(1000, &last, T0 + 54001), 1001);
    assert_int_equal(last, T0 + 54001);
    assert_int_equal(expiry_lost(1000, &last, T0 + 55000), 0);
    /* A period of 1 ms (tickTime 1 or 2). */
    assert_int_equal(expiry_lost(1, &last, T0 + 55002), 0);
    assert_int_equal(expiry_lost(1, &last, T0 + 55005), 2);
}

/* Out of memory, a session is not tracked (the caller says so), nothing
 * leaks, and the sessions already tracked are untouched. */
static void open_out_of_memory(void **state)
{
    struct fx *f = *state;

    fail_in = 1; /* the empty table's first growth */
    assert_null(expiry_open(&f->m, 1, 4000, T0));
    assert_int_equal(f->m.count, 0);
    fail_in = -1;
    assert_non_null(expiry_open(&f->m, 1, 4000, T0));
    fail_in = 0; /* the session itself */
    assert_null(expiry_open(&f->m, 2, 4000, T0));
    fail_in = -1;
    assert_int_equal(f->m.count, 1);
    assert_null(tb_map_get(&f->m, 2));
    tick_at(f, T0 + 4000);
    assert_closes(f, 1);
    assert_int_equal(f->closes[0].id, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(due_at_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(due_at_first_tick_past_deadline, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(sessions_due_each_at_its_own, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(touch_moves_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(pings_keep_alive, setup, teardown),
        cmocka_unit_test_setup_teardown(attach_takes_new_timeout, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(close_proposed_once, setup, teardown),
        cmocka_unit_test_setup_teardown(refused_close_asked_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(failed_close_asked_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(fresh_timeout_after_restart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stall_moves_deadlines, setup, teardown),
        cmocka_unit_test(lost_time),
        cmocka_unit_test_setup_teardown(open_out_of_memory, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
