/* bindsrc.c: a preload for tests/lab/netns-calib.sh (NICS=rank).  Every
 * rank of an emulated node shares the node's network namespace but owns
 * one of its NICs; UCX's TCP transport connects without binding, so the
 * kernel would pick one source address, and with it one NIC, for every
 * rank of the node.  This binds each unbound IPv4 TCP socket to the
 * rank's own address (SKCAL_BIND_ADDR) before it connects, so that the
 * namespace's policy routing (from that address, out of its NIC) holds.
 *   cc -shared -fPIC -o bindsrc.so bindsrc.c -ldl */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    static int (*real_connect)(int, const struct sockaddr *, socklen_t);
    if (!real_connect)
        real_connect = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
    const char *want = getenv("SKCAL_BIND_ADDR");
    if (want && addr && addr->sa_family == AF_INET) {
        struct sockaddr_in cur;
        socklen_t cl = sizeof cur;
        int type = 0;
        socklen_t tl = sizeof type;
        /* Only TCP sockets still unbound: leave the MPI library's own
         * choices (and loopback PMI connections) alone. */
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_STREAM &&
            getsockname(fd, (struct sockaddr *)&cur, &cl) == 0 && cur.sin_port == 0 &&
            ((const struct sockaddr_in *)addr)->sin_addr.s_addr != htonl(INADDR_LOOPBACK)) {
            struct sockaddr_in me;
            memset(&me, 0, sizeof me);
            me.sin_family = AF_INET;
            if (inet_pton(AF_INET, want, &me.sin_addr) == 1)
                (void)bind(fd, (struct sockaddr *)&me, sizeof me);
        }
    }
    return real_connect(fd, addr, len);
}
