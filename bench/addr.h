/* Server addresses for the benchmark tools (addr.c). */
#ifndef BN_ADDR_H
#define BN_ADDR_H

#include <sys/socket.h>

/* Resolves "host:port" (numeric or by name, [v6]:port) for IPv4/IPv6.
 * 0, or TB_EBADARGUMENTS. */
int bn_resolve(const char *hostport, struct sockaddr_storage *ss,
               unsigned *len);

#endif
