// The interposition table: every intercept.def row resolves in libc with
// dlsym(RTLD_NEXT) (optional rows may be missing), exports.map lists
// exactly the intercept.def names, and libaccel.so exports exactly those
// dynamic symbols (nothing internal leaks out).
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace
{

struct Row {
    const char *name;
    bool required;
};

const Row kRows[] = {
#define PL_SYM(ret, name, params, args) {#name, true},
#define PL_SYM_BASIC(ret, name, params, args, alias) {#name, true},
#define PL_SYM_OPT(ret, name, params, args) {#name, false},
#define PL_SYM_VA(ret, name, fixed, fparams, fargs) {#name, true},
#include "intercept.def"
#undef PL_SYM
#undef PL_SYM_BASIC
#undef PL_SYM_OPT
#undef PL_SYM_VA
};

std::set<std::string>
def_names()
{
    std::set<std::string> s;
    for (const Row &r : kRows)
        s.insert(r.name);
    return s;
}

std::set<std::string>
map_names()
{
    std::ifstream in(PL_EXPORTS_MAP);
    std::set<std::string> s;
    std::string line;
    std::regex re("^\\s*([A-Za-z_][A-Za-z0-9_]*);\\s*$");
    std::smatch m;

    while (std::getline(in, line))
        if (std::regex_match(line, m, re))
            s.insert(m[1]);
    return s;
}

} // namespace

TEST(Intercept, EveryRowResolvesWithRtldNext)
{
    for (const Row &r : kRows) {
        void *p = dlsym(RTLD_NEXT, r.name);
        if (r.required) {
            EXPECT_NE(p, nullptr) << r.name << " missing in libc";
        }
    }
}

TEST(Intercept, RowsAreUnique)
{
    EXPECT_EQ(def_names().size(), sizeof(kRows) / sizeof(kRows[0]));
}

TEST(Intercept, IssueSymbolsAreAllListed)
{
    const char *must[] = {
        "socket",     "bind",       "listen",       "accept",
        "accept4",    "connect",    "shutdown",     "close",
        "read",       "write",      "readv",        "writev",
        "recv",       "recvfrom",   "recvmsg",      "recvmmsg",
        "send",       "sendto",     "sendmsg",      "sendmmsg",
        "getsockopt", "setsockopt", "getsockname",  "getpeername",
        "fcntl",      "fcntl64",    "ioctl",        "dup",
        "dup2",       "dup3",       "poll",         "ppoll",
        "select",     "pselect",    "epoll_create", "epoll_create1",
        "epoll_ctl",  "epoll_wait", "epoll_pwait",  "sendfile",
        "sendfile64", "__read_chk", "__recv_chk",   "__recvfrom_chk",
        "__poll_chk", "__ppoll_chk"};
    std::set<std::string> names = def_names();

    for (const char *n : must)
        EXPECT_TRUE(names.count(n)) << n;
}

TEST(Intercept, ExportsMapAgreesWithInterceptDef)
{
    std::set<std::string> m = map_names();

    ASSERT_FALSE(m.empty()) << PL_EXPORTS_MAP;
    EXPECT_EQ(m, def_names());
}

TEST(Intercept, LibraryExportsExactlyTheInterposedNames)
{
    // RTLD_LOCAL: the library's symbols do not interpose in this process.
    // RTLD_NODELETE: DPDK's constructors keep allocations in globals of
    // libraries that must stay mapped, or LeakSanitizer reports them.
    void *h = dlopen(PL_LIBACCEL, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    ASSERT_NE(h, nullptr) << dlerror();
    for (const Row &r : kRows) {
        void *p = dlsym(h, r.name);
        void *libc = dlsym(RTLD_DEFAULT, r.name);
        EXPECT_NE(p, nullptr) << r.name << " not exported";
        if (libc != nullptr) {
            EXPECT_NE(p, libc) << r.name << " is libc's, not ours";
        }
    }
    // Internal names stay hidden.
    for (const char *n : {"pl_fdt_get", "pl_sock_bind", "rt_start",
                          "stk_sock_create", "pl_libc", "base_in_lib"})
        EXPECT_EQ(dlsym(h, n), nullptr) << n << " leaks out";
    dlclose(h);
}
