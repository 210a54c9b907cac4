/*
 * Collecting what a view needs (the regions of the PID or of every
 * readable process, copied, after asking for the socket table when the
 * view shows sockets) and drawing it in the chosen format. main() and
 * -w's loop both go through here.
 */
#include <stdlib.h>
#include <string.h>

#include "ast.h"

/* Open the PID's region, with the message and status of each failure. */
static int
open_pid(const struct ast_opts *o, struct ast_region_list *l)
{
    const char *dir = ast_dir();
    struct ast_region r;

    memset(l, 0, sizeof(*l));
    switch (ast_region_open(dir, o->pid, true, &r)) {
    case AST_OPEN_OK:
        break;
    case AST_OPEN_NONE:
        fprintf(stderr,
                AST_PROG ": no accel process %d (no %s/" BASE_SR_PREFIX
                         "%d: not running under accel-run, or it made no "
                         "socket yet)\n",
                o->pid, dir, o->pid);
        return AST_EXIT_FAIL;
    case AST_OPEN_EACCES:
        fprintf(stderr,
                AST_PROG ": %s/" BASE_SR_PREFIX "%d: permission denied: "
                         "process %d belongs to another user; run as root or "
                         "as its user\n",
                dir, o->pid, o->pid);
        return AST_EXIT_FAIL;
    default:
        return AST_EXIT_FAIL; /* said by ast_region_open */
    }
    l->v = malloc(sizeof(*l->v));
    if (l->v == NULL) {
        ast_region_close(&r);
        fprintf(stderr, AST_PROG ": out of memory\n");
        return AST_EXIT_FAIL;
    }
    l->v[0] = r;
    l->n = 1;
    return 0;
}

int
ast_collect(const struct ast_opts *o, bool with_socks, struct ast_collect *c)
{
    struct ast_region_list l;
    uint64_t req = 0;
    int rc;

    memset(c, 0, sizeof(*c));
    rc = o->pid != 0 ? open_pid(o, &l) : ast_region_scan(ast_dir(), &l);
    if (rc != 0)
        return rc;
    if (with_socks)
        req = ast_request_socks(l.v, l.n);
    c->others = l.others;
    c->snaps = calloc(l.n != 0 ? l.n : 1, sizeof(*c->snaps));
    if (c->snaps == NULL) {
        ast_region_list_free(&l);
        fprintf(stderr, AST_PROG ": out of memory\n");
        return AST_EXIT_FAIL;
    }
    for (size_t i = 0; i < l.n; i++) {
        struct ast_snap *s = &c->snaps[c->n];

        if (ast_snap_read(&l.v[i], s) != 0) {
            fprintf(stderr, AST_PROG ": out of memory reading %s\n",
                    l.v[i].path);
            continue;
        }
        s->socks_asked = with_socks;
        s->socks_fresh = with_socks && s->have_snap && s->hdr.snap_ns >= req;
        c->n++;
    }
    ast_region_list_free(&l);
    return 0;
}

void
ast_collect_free(struct ast_collect *c)
{
    for (size_t i = 0; i < c->n; i++)
        ast_snap_free(&c->snaps[i]);
    free(c->snaps);
    memset(c, 0, sizeof(*c));
}

/* The text views. */
static void
render_text(FILE *f, const struct ast_opts *o, const struct ast_collect *c)
{
    if (o->pid == 0 && c->n == 0)
        fprintf(f,
                "no accelerated process (no readable %s/" BASE_SR_PREFIX "*)\n",
                ast_dir());
    else if (o->view == AST_VIEW_LIST)
        ast_text_list(f, c->snaps, c->n);
    else if (o->view == AST_VIEW_SUMMARY)
        for (size_t i = 0; i < c->n; i++) {
            if (i > 0)
                fputc('\n', f);
            ast_text_summary(f, &c->snaps[i], o->all);
        }
    else if (o->view == AST_VIEW_SOCKS)
        ast_sock_print(f, c->snaps, c->n, o);
    else
        ast_kern_print(f, c->snaps, c->n);
    ast_text_others(f, c->others);
}

void
ast_render(FILE *f, const struct ast_opts *o, const struct ast_collect *c)
{
    switch (o->format) {
    case AST_FMT_JSON:
        ast_json_print(f, c->snaps, c->n, c->others, o);
        break;
    case AST_FMT_PROM:
        ast_prom_print(f, c->snaps, c->n);
        if (c->others > 0)
            fprintf(f,
                    "# %u process%s of other users not shown: run as "
                    "root\n",
                    c->others, c->others == 1 ? "" : "es");
        break;
    case AST_FMT_TEXT:
        render_text(f, o, c);
        break;
    }
}
