#ifndef CLAWRELAY_LWS_SHIM_H
#define CLAWRELAY_LWS_SHIM_H

#include <libwebsockets.h>
#include <linux/sockios.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

/// LWS_PRE is a macro; Swift cannot see it.
static inline size_t relay_lws_pre(void) { return LWS_PRE; }

/// A sorted-usec-list timer with a back pointer to its Swift owner.
/// The `sul` member must stay first: lws hands its address back to the callback.
typedef struct relay_timer {
    lws_sorted_usec_list_t sul;
    void *owner;
} relay_timer_t;

static inline void relay_timer_schedule(struct lws_context *ctx, relay_timer_t *timer, sul_cb_t cb, lws_usec_t us) {
    lws_sul_schedule(ctx, 0, &timer->sul, cb, us);
}

static inline void relay_timer_cancel(struct lws_context *ctx, relay_timer_t *timer) {
    lws_sul_schedule(ctx, 0, &timer->sul, NULL, LWS_SET_TIMER_USEC_CANCEL);
}

static inline void *relay_timer_owner(lws_sorted_usec_list_t *sul) {
    return ((relay_timer_t *)sul)->owner;
}

/// Request that an HTTP transaction ends (keep-alive or close) after the last write.
static inline int relay_http_done(struct lws *wsi) {
    return lws_http_transaction_completed(wsi);
}

/// Bytes the kernel still holds for the peer of `wsi`'s socket (not sent, or not acknowledged);
/// 0 when it cannot tell.
static inline int relay_lws_unsent_bytes(struct lws *wsi) {
    int fd = lws_get_socket_fd(wsi);
    int unsent = 0;
    if (fd < 0 || ioctl(fd, SIOCOUTQ, &unsent) != 0) return 0;
    return unsent;
}

/// Makes the close of `wsi`'s socket reset the connection (SO_LINGER 0): the kernel discards what
/// the peer did not take instead of keeping the socket, and the peer learns at once.
static inline void relay_lws_reset_on_close(struct lws *wsi) {
    int fd = lws_get_socket_fd(wsi);
    struct linger option = {1, 0};
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, sizeof option);
}

#endif
