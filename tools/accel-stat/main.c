/*
 * accel-stat: what accelerated processes are doing, read from the regions
 * they publish (base/statreg_layout.h). With no PID, one line per process;
 * with a PID, its summary; -t/-u/-l the sockets like ss; --reasons the
 * sockets left on the kernel; -w redraws with rates; --json and
 * --prometheus for programs. It only reads, and never waits for the
 * process (ast.h lists the files). Output on stdout, messages on stderr;
 * exit status 0, 1 when the PID has no region or it cannot be read, 2 for
 * usage errors.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ast.h"

int
main(int argc, char **argv)
{
    struct ast_collect c;
    struct ast_opts o;
    int rc;

    rc = ast_opts_parse(argc, argv, &o);
    if (rc != 0)
        return rc;
    if (o.help) {
        ast_usage(stdout);
        return AST_EXIT_OK;
    }
    if (o.watch_s > 0)
        return ast_watch(&o);
    /* The sockets are asked for when shown: the socket view, and the
     * formats for programs, which carry everything. */
    rc = ast_collect(&o, o.view == AST_VIEW_SOCKS || o.format != AST_FMT_TEXT,
                     &c);
    if (rc != 0)
        return rc;
    ast_render(stdout, &o, &c);
    ast_collect_free(&c);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, AST_PROG ": writing the output: %s\n", strerror(errno));
        return AST_EXIT_FAIL;
    }
    return AST_EXIT_OK;
}
