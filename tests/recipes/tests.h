/* The tests of recipes_it; argv holds the test's own arguments. */
#ifndef TB_RT_TESTS_H
#define TB_RT_TESTS_H

int t_basic(int argc, char **argv);
int t_nonfair(int argc, char **argv);
int t_threads(int argc, char **argv);
int t_worker(int argc, char **argv);
int t_checklog(int argc, char **argv);
int t_herd(int argc, char **argv);
int t_holder(int argc, char **argv);
int t_waiter(int argc, char **argv);
int t_connloss(int argc, char **argv);
int t_token_before(int argc, char **argv);
int t_token_after(int argc, char **argv);
int t_rwlock(int argc, char **argv);
int t_semaphore(int argc, char **argv);
int t_multilock(int argc, char **argv);
int t_election(int argc, char **argv);
int t_candidate(int argc, char **argv);
int t_interop_hold(int argc, char **argv);
int t_children(int argc, char **argv);
int t_loop(int argc, char **argv);
int t_mixed(int argc, char **argv);
int t_try(int argc, char **argv);
int t_hold(int argc, char **argv);
int t_fence(int argc, char **argv);
int t_fence_holder(int argc, char **argv);
int t_fence_taker(int argc, char **argv);
int t_check_token(int argc, char **argv);
int t_get(int argc, char **argv);
int t_counter(int argc, char **argv);
int t_counter_op(int argc, char **argv);
int t_barrier(int argc, char **argv);
int t_dmember(int argc, char **argv);
int t_barrier_op(int argc, char **argv);
int t_queue(int argc, char **argv);
int t_qop(int argc, char **argv);
int t_articles(int argc, char **argv);
int t_latch(int argc, char **argv);
int t_delay(int argc, char **argv);
int t_ldhold(int argc, char **argv);
int t_ldwait(int argc, char **argv);
int t_queue_connloss(int argc, char **argv);
int t_cbarrier(int argc, char **argv);
int t_cparty(int argc, char **argv);
int t_toolbox_connloss(int argc, char **argv);
int t_latch_op(int argc, char **argv);
int t_fence_recipes(int argc, char **argv);
int t_reaped(int argc, char **argv);

#endif
