/* The heap's new top, populated once per turn of the loop (heap.c). */
#ifndef TB_SERVER_HEAP_H
#define TB_SERVER_HEAP_H

/* Populates what the heap has grown by since the last call, and sizes
 * the pad glibc adds to each growth to the heap.  The first call only
 * marks where the heap starts. */
void tbd_heap_populate(void);

#endif
