/* Server addresses for the benchmark tools: "host:port" to a socket
 * address, as tbbench's --server and tbfail's --servers give them. */
#include "addr.h"

#include <netdb.h>
#include <string.h>

#include "common/common.h"

int bn_resolve(const char *hostport, struct sockaddr_storage *ss, unsigned *len)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    struct addrinfo hints = {0}, *ai = NULL;
    size_t hl;
    int rc;

    if (colon == NULL || colon == hostport)
        return TB_EBADARGUMENTS;
    hl = (size_t)(colon - hostport);
    if (hostport[0] == '[' && hl >= 2 && hostport[hl - 1] == ']') {
        hostport++;
        hl -= 2;
    }
    if (hl >= sizeof(host))
        return TB_EBADARGUMENTS;
    memcpy(host, hostport, hl);
    host[hl] = '\0';
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(host, colon + 1, &hints, &ai);
    if (rc != 0 || ai == NULL)
        return TB_EBADARGUMENTS;
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len = (unsigned)ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}
