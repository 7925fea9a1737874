/* What test_wal.c and test_wal_damage.c share: a segment's file name, how
 * far a prepared segment is written, and a spare's number
 * (raft_fixture.h's struct fx underneath). */
#ifndef TB_TEST_WAL_FIXTURE_H
#define TB_TEST_WAL_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "raft_fixture.h"

/* The path of segment `seq` of f's log, into buf. */
void seg_name(const struct fx *f, uint64_t seq, char *buf, size_t n);

/* Extents of `fd` flagged unwritten, or -1 if the file system cannot say
 * (tmpfs has no FIEMAP). */
int unwritten_extents(int fd);

/* Waits for segment `seq` to be prepared: all its blocks allocated; how
 * many of its extents are unwritten (-1: the file system cannot say). */
int prepared_unwritten(struct fx *f, uint64_t seq);

/* The sequence number in the name of a wal-spare-* file of the log, or 0. */
uint64_t find_spare(const struct fx *f);

#endif
