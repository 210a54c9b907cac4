/*
 * Kathleen Nichols' windowed min/max filter, as Linux's lib/minmax.c keeps
 * it: the best, second best and third best sample of the window with their
 * times, so the extremum over a sliding window costs three slots and O(1)
 * per sample. The minimum RTT (tcp_rtt.c, 5 minutes) and BBR's maximum
 * delivery rate (tcp_bbr.c, 10 round trips) use it; times are in whatever
 * unit the caller counts its window in.
 */
#include "tcp_snd.h"

uint32_t
stk__minmax_reset(struct stk_minmax *m, uint32_t t, uint32_t v)
{
    for (int i = 0; i < 3; i++) {
        m->s[i].v = v;
        m->s[i].t = t;
    }
    return v;
}

/* The window has moved on: age the kept samples out, keeping the three
 * spread over it. */
static uint32_t
subwin_update(struct stk_minmax *m, uint32_t win, uint32_t t, uint32_t v)
{
    uint32_t dt = t - m->s[0].t;

    if (dt > win) {
        m->s[0] = m->s[1];
        m->s[1] = m->s[2];
        m->s[2].v = v;
        m->s[2].t = t;
        if (t - m->s[0].t > win) {
            m->s[0] = m->s[1];
            m->s[1] = m->s[2];
        }
    } else if (m->s[1].t == m->s[0].t && dt > win / 4) {
        m->s[2].v = m->s[1].v = v;
        m->s[2].t = m->s[1].t = t;
    } else if (m->s[2].t == m->s[1].t && dt > win / 2) {
        m->s[2].v = v;
        m->s[2].t = t;
    }
    return m->s[0].v;
}

uint32_t
stk__minmax_running_max(struct stk_minmax *m, uint32_t win, uint32_t t,
                        uint32_t v)
{
    if (v >= m->s[0].v || t - m->s[2].t > win)
        return stk__minmax_reset(m, t, v);
    if (v >= m->s[1].v) {
        m->s[2].v = m->s[1].v = v;
        m->s[2].t = m->s[1].t = t;
    } else if (v >= m->s[2].v) {
        m->s[2].v = v;
        m->s[2].t = t;
    }
    return subwin_update(m, win, t, v);
}

uint32_t
stk__minmax_running_min(struct stk_minmax *m, uint32_t win, uint32_t t,
                        uint32_t v)
{
    if (v <= m->s[0].v || t - m->s[2].t > win)
        return stk__minmax_reset(m, t, v);
    if (v <= m->s[1].v) {
        m->s[2].v = m->s[1].v = v;
        m->s[2].t = m->s[1].t = t;
    } else if (v <= m->s[2].v) {
        m->s[2].v = v;
        m->s[2].t = t;
    }
    return subwin_update(m, win, t, v);
}
