#include "tests.h"
#define S(n) int n(int argc, char **argv) { (void)argc; (void)argv; return 77; }
S(t_rwlock) S(t_semaphore) S(t_multilock) S(t_election) S(t_candidate) S(t_leader_watch) S(t_interop_hold)
