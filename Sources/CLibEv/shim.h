#ifndef CLAWRELAY_EV_SHIM_H
#define CLAWRELAY_EV_SHIM_H

#include <ev.h>

/// A loop on the epoll backend only (no select/poll fallback, no LIBEV_FLAGS from the environment).
static inline struct ev_loop *relay_ev_epoll_loop_new(void) {
    return ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV);
}

/// `ev_timer_init` is a macro; Swift cannot see it. `data` is handed back to `cb` in `timer->data`.
static inline void relay_ev_timer_init(ev_timer *timer, void (*cb)(struct ev_loop *, ev_timer *, int), void *data) {
    ev_timer_init(timer, cb, 0., 0.);
    timer->data = data;
}

/// Fires `timer` once, `seconds` from now, whether or not it was armed (libev ignores a start on
/// an active watcher, so it is stopped first). The loop's cached time is refreshed first: it is
/// the time the last iteration began, which may be a while ago when a callback ran long.
static inline void relay_ev_timer_arm(struct ev_loop *loop, ev_timer *timer, double seconds) {
    ev_timer_stop(loop, timer);
    ev_now_update(loop);
    ev_timer_set(timer, seconds, 0.);
    ev_timer_start(loop, timer);
}

static inline void *relay_ev_timer_data(ev_timer *timer) { return timer->data; }

#endif
