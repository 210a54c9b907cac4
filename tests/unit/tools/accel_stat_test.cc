// accel-stat (tools/accel-stat/): the built program run against synthetic
// regions written here by the layout of base/statreg_layout.h, in a
// temporary directory named by ACCEL_STAT_DIR, for this test process's pid
// (and a child's): the process list, the summary, the socket view and its
// filters, --reasons with the /proc fd check, --json and --prometheus
// through Python's parsers, the removal of stale regions, the request for
// the socket table, and -w's rates. A few pure functions of the tool's
// library are called directly.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "ast.h"
}

namespace
{

// The counters of the synthetic regions, in the order of their values.
const char kNames[] = "rx_frames\0tx_frames\0rx_bytes\0tx_bytes\0"
                      "tcp_accept\0tcp_retrans_segs\0sock_accel\0"
                      "sock_kernel\0kernel_why_rule\0kernel_why_dns\0"
                      "udp_rx_drop_full\0tx_drop_full\0";
enum {
    kRxFrames,
    kTxFrames,
    kRxBytes,
    kTxBytes,
    kTcpAccept,
    kRetrans,
    kSockAccel,
    kSockKernel,
    kWhyRule,
    kWhyDns,
    kUdpDropFull,
    kTxDropFull,
    kNStats,
};
const uint64_t kValues[kNStats] = {1000000, 2000, 3000000, 4000, 55, 66,
                                   6,       4,    4,       0,    0,  7};
const char kWhys[] = "not a TCP or UDP socket\0"
                     "a rule of the rules file says kernel\0"
                     "bound to an address that is not the stack's\0";
const int kNWhy = 3;
const uint32_t kSockMax = 8, kKernMax = 8;

uint64_t
mono_ns()
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t
starttime_of(pid_t pid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(f)),
                  std::istreambuf_iterator<char>());
    std::istringstream in(s.substr(s.rfind(')') + 2));
    std::string tok;

    for (int field = 3; field <= 22; field++)
        in >> tok;
    return std::stoull(tok);
}

size_t
align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

// A region file, mapped read-write so a test can change it under the tool.
struct Region {
    std::string path;
    unsigned char *map = nullptr;
    size_t size = 0;

    base_sr_hdr *
    hdr()
    {
        return (base_sr_hdr *)map;
    }
    uint64_t *
    stats()
    {
        return (uint64_t *)(map + hdr()->stats_off);
    }
    base_sr_sock *
    socks()
    {
        return (base_sr_sock *)(map + hdr()->sock_off);
    }
    base_sr_kern *
    kern()
    {
        return (base_sr_kern *)(map + hdr()->kern_off);
    }
    base_sr_port *
    port()
    {
        return (base_sr_port *)(map + hdr()->port_off);
    }
};

struct Spec {
    pid_t pid;
    uint64_t starttime;
    const char *comm = "stat-test";
    const char *cmdline = "stat-test --serve 80";
    uint32_t state = BASE_SR_UP;
    uint32_t version = BASE_SR_VERSION;
    uint64_t magic = BASE_SR_MAGIC;
};

void
set_addr(uint8_t *dst, int family, const char *text)
{
    memset(dst, 0, 16);
    ASSERT_EQ(inet_pton(family, text, dst), 1) << text;
}

void
add_sock(Region &r, int fd, int family, int proto, int state, const char *laddr,
         int lport, const char *raddr, int rport)
{
    base_sr_sock *s = &r.socks()[r.hdr()->nsocks++];

    memset(s, 0, sizeof(*s));
    s->fd = fd;
    s->family = family;
    s->proto = proto;
    s->state = state;
    set_addr(s->laddr, family, laddr);
    set_addr(s->raddr, family, raddr);
    s->lport = htons(lport);
    s->rport = htons(rport);
    r.hdr()->socks_total = r.hdr()->nsocks;
}

void
add_kern(Region &r, uint32_t seq, int fd, uint64_t inode, uint8_t why,
         const char *call, const char *addr, int port)
{
    base_sr_kern *k = &r.kern()[r.hdr()->kern_next++ % kKernMax];

    memset(k, 0, sizeof(*k));
    k->seq = seq;
    k->fd = fd;
    k->inode = inode;
    k->family = AF_INET;
    k->proto = IPPROTO_TCP;
    k->why = why;
    k->port = htons(port);
    set_addr(k->addr, AF_INET, addr);
    strncpy(k->call, call, sizeof(k->call) - 1);
    k->when_ns = (uint64_t)time(nullptr) * 1000000000ull;
}

struct Result {
    int rc = -1;
    std::string out, err;
    double seconds = 0;
};

// Called with the stdout collected so far, after each read of it.
using OnOutput = std::function<void(const std::string &)>;

// Run argv[0] with argv, stdin from in_path (or /dev/null), as uid when
// not -1; stdout and stderr collected.
Result
run_argv(const std::vector<std::string> &args, const char *in_path = nullptr,
         uid_t uid = (uid_t)-1, const OnOutput &on_out = nullptr)
{
    int out[2], err[2];
    Result res;
    uint64_t t0 = mono_ns();

    std::vector<char *> v;
    for (auto &a : args)
        v.push_back(const_cast<char *>(a.c_str()));
    v.push_back(nullptr);
    // Everything allocated before fork: the child of a threaded test only
    // calls async-signal-safe functions.
    int in =
        open(in_path != nullptr ? in_path : "/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        return res;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in, 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        if (uid != (uid_t)-1 && (setgroups(0, nullptr) != 0 ||
                                 setgid(uid) != 0 || setuid(uid) != 0))
            _exit(126);
        execv(v[0], v.data());
        _exit(127);
    }
    close(in);
    close(out[1]);
    close(err[1]);
    struct pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string *dst[2] = {&res.out, &res.err};
    int open_fds = 2;
    while (open_fds > 0 && poll(p, 2, 20000) > 0) {
        for (int i = 0; i < 2; i++) {
            char buf[4096];
            ssize_t n;

            if (p[i].fd < 0 || p[i].revents == 0)
                continue;
            n = read(p[i].fd, buf, sizeof(buf));
            if (n <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
                open_fds--;
            } else {
                dst[i]->append(buf, n);
                if (i == 0 && on_out != nullptr)
                    on_out(res.out);
            }
        }
    }
    int status;
    waitpid(pid, &status, 0);
    res.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    res.seconds = (mono_ns() - t0) / 1e9;
    return res;
}

const char *
stat_bin()
{
    const char *b = getenv("ACCEL_STAT_BIN");

    return b != nullptr ? b : "accel-stat";
}

bool
has_line(const std::string &text, const std::string &re)
{
    return std::regex_search(text, std::regex(re, std::regex::multiline));
}

// A child that sleeps until killed: a second live process for regions.
pid_t
sleeper()
{
    pid_t pid = fork();

    if (pid == 0) {
        for (;;)
            pause();
    }
    return pid;
}

// A pid that no longer exists: a child that exited and was reaped.
pid_t
dead_pid()
{
    pid_t pid = fork();
    int status;

    if (pid == 0)
        _exit(0);
    waitpid(pid, &status, 0);
    return pid;
}

class AccelStat : public ::testing::Test
{
  protected:
    void
    SetUp() override
    {
        char tmpl[] = "/tmp/accel-stat-test.XXXXXX";

        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        ASSERT_EQ(chmod(dir_.c_str(), 0755), 0); // for the other-user test
        setenv("ACCEL_STAT_DIR", dir_.c_str(), 1);
        pid_ = getpid();
        live_fd_ = socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_GE(live_fd_, 0);
    }

    void
    TearDown() override
    {
        stop_responder();
        for (auto &r : regions_)
            munmap(r.map, r.size);
        for (pid_t p : children_) {
            kill(p, SIGKILL);
            waitpid(p, nullptr, 0);
        }
        close(live_fd_);
        if (odd_fd_ >= 0)
            close(odd_fd_);
        std::string cmd = "rm -rf '" + dir_ + "'";
        ASSERT_EQ(system(cmd.c_str()), 0);
        unsetenv("ACCEL_STAT_DIR");
    }

    // Write a region for spec: counters, port, sockets, the kernel ring.
    Region &
    make_region(const Spec &sp, bool with_records = true)
    {
        size_t stats_off = align8(sizeof(base_sr_hdr));
        size_t names_off = stats_off + kNStats * 8;
        size_t why_off = names_off + sizeof(kNames) - 1;
        size_t port_off = align8(why_off + sizeof(kWhys) - 1);
        size_t sock_off = port_off + sizeof(base_sr_port);
        size_t kern_off = align8(sock_off + kSockMax * sizeof(base_sr_sock));
        size_t size = kern_off + kKernMax * sizeof(base_sr_kern);
        Region r;

        r.path = dir_ + "/" BASE_SR_PREFIX + std::to_string(sp.pid);
        int fd = open(r.path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        EXPECT_GE(fd, 0);
        EXPECT_EQ(ftruncate(fd, size), 0);
        r.map = (unsigned char *)mmap(nullptr, size, PROT_READ | PROT_WRITE,
                                      MAP_SHARED, fd, 0);
        close(fd);
        r.size = size;
        base_sr_hdr *h = r.hdr();
        h->magic = sp.magic;
        h->version = sp.version;
        h->hdr_size = sizeof(*h);
        h->size = size;
        h->pid = sp.pid;
        h->ppid = getppid();
        h->uid = getuid();
        h->state = sp.state;
        h->starttime = sp.starttime;
        h->created_ns = (uint64_t)time(nullptr) * 1000000000ull;
        strncpy(h->comm, sp.comm, sizeof(h->comm) - 1);
        strncpy(h->cmdline, sp.cmdline, sizeof(h->cmdline) - 1);
        strcpy(h->datapath, "af_xdp:veth-a queue 0");
        strcpy(h->iface, "veth-a");
        strcpy(h->ip, "10.200.0.2/24");
        strcpy(h->ip6, "fd00::2/64");
        h->port_owner_pid = sp.pid;
        h->nstats = kNStats;
        h->stats_off = stats_off;
        h->names_off = names_off;
        h->names_len = sizeof(kNames) - 1;
        h->nwhy = kNWhy;
        h->why_off = why_off;
        h->why_len = sizeof(kWhys) - 1;
        memcpy(r.map + names_off, kNames, sizeof(kNames) - 1);
        memcpy(r.map + why_off, kWhys, sizeof(kWhys) - 1);
        memcpy(r.stats(), kValues, sizeof(kValues));
        h->snap_seq = 2;
        h->snap_interval_ms = 100;
        h->snap_ns = mono_ns();
        h->port_off = port_off;
        h->sock_off = sock_off;
        h->sock_max = kSockMax;
        h->sock_size = sizeof(base_sr_sock);
        h->kern_off = kern_off;
        h->kern_max = kKernMax;
        h->kern_size = sizeof(base_sr_kern);
        base_sr_port *p = r.port();
        p->ipackets = 1111;
        p->opackets = 2222;
        p->ibytes = 3333;
        p->obytes = 4444;
        p->imissed = 5;
        p->rx_nombuf = 9;
        p->pool_size = 4096;
        p->pool_in_use = 300;
        p->queues = 1;
        p->up = 1;
        if (with_records)
            fill_tables(r);
        regions_.push_back(r);
        return regions_.back();
    }

    // Six sockets and three ring records (one live, one closed, one odd).
    void
    fill_tables(Region &r)
    {
        add_sock(r, 10, AF_INET, IPPROTO_TCP, BASE_SR_TCP_LISTEN, "0.0.0.0", 80,
                 "0.0.0.0", 0);
        r.socks()[0].rcvq = 1;
        r.socks()[0].sndq = 128;
        add_sock(r, 11, AF_INET, IPPROTO_TCP, BASE_SR_TCP_ESTABLISHED,
                 "10.200.0.2", 80, "10.200.0.1", 51000);
        base_sr_sock *e = &r.socks()[1];
        e->rcvq = 5;
        e->sndq = 7;
        e->srtt_us = 1500;
        e->rttvar_us = 500;
        e->rto_us = 204000;
        e->cwnd = 10;
        e->ssthresh = 20;
        e->mss = 1448;
        e->retrans = 3;
        e->bytes_acked = 123456;
        e->bytes_received = 654321;
        add_sock(r, 12, AF_INET6, IPPROTO_TCP, BASE_SR_TCP_ESTABLISHED,
                 "fd00::2", 443, "fd00::1", 52000);
        add_sock(r, 13, AF_INET, IPPROTO_UDP, BASE_SR_TCP_CLOSE, "0.0.0.0",
                 5353, "0.0.0.0", 0);
        add_sock(r, 14, AF_INET, IPPROTO_UDP, BASE_SR_TCP_ESTABLISHED,
                 "10.200.0.2", 40000, "10.200.0.9", 53);
        add_sock(r, 15, AF_INET, IPPROTO_TCP, BASE_SR_TCP_SYN_SENT,
                 "10.200.0.2", 41000, "10.200.0.7", 8080);

        struct stat st;
        int closed = socket(AF_INET, SOCK_DGRAM, 0);
        ASSERT_GE(closed, 0);
        ASSERT_EQ(fstat(closed, &st), 0);
        closed_fd_ = closed;
        add_kern(r, 2, closed, st.st_ino, 1, "connect", "127.0.0.1", 9);
        close(closed);
        ASSERT_EQ(fstat(live_fd_, &st), 0);
        add_kern(r, 4, live_fd_, st.st_ino, 2, "bind", "127.0.0.1", 8080);
        // A record being written (odd count): never shown.
        odd_fd_ = socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_GE(odd_fd_, 0);
        ASSERT_EQ(fstat(odd_fd_, &st), 0);
        add_kern(r, 5, odd_fd_, st.st_ino, 0, "socket", "0.0.0.0", 0);
    }

    Result
    run(std::vector<std::string> args, uid_t uid = (uid_t)-1,
        const OnOutput &on_out = nullptr)
    {
        args.insert(args.begin(), stat_bin());
        return run_argv(args, nullptr, uid, on_out);
    }

    Result
    run(std::vector<std::string> args, const OnOutput &on_out)
    {
        return run(std::move(args), (uid_t)-1, on_out);
    }

    // Python checks the text in a file (stdin).
    Result
    python(const std::string &text, const std::string &code,
           const std::vector<std::string> &argv = {})
    {
        std::string path = dir_ + "/py.in";
        std::ofstream(path) << text;
        std::vector<std::string> args = {"/usr/bin/python3", "-c", code};
        args.insert(args.end(), argv.begin(), argv.end());
        return run_argv(args, path.c_str());
    }

    // Behave like the library: fill the table when a reader asks.
    void
    start_responder()
    {
        stop_ = false;
        responder_ = std::thread([this] {
            while (!stop_) {
                for (auto &r : regions_) {
                    base_sr_hdr *h = r.hdr();
                    uint64_t now = mono_ns();

                    if (__atomic_load_n(&h->want_socks_until_ns,
                                        __ATOMIC_ACQUIRE) <= now)
                        continue;
                    __atomic_fetch_add(&h->snap_seq, 1, __ATOMIC_ACQ_REL);
                    __atomic_store_n(&h->snap_ns, now, __ATOMIC_RELAXED);
                    __atomic_fetch_add(&h->snap_seq, 1, __ATOMIC_ACQ_REL);
                }
                usleep(5000);
            }
        });
    }

    void
    stop_responder()
    {
        stop_ = true;
        if (responder_.joinable())
            responder_.join();
    }

    std::string dir_;
    pid_t pid_;
    int live_fd_ = -1, closed_fd_ = -1, odd_fd_ = -1;
    std::deque<Region> regions_; // references stay valid as it grows
    std::vector<pid_t> children_;
    std::thread responder_;
    std::atomic<bool> stop_{true};
};

std::string
fd_row(int fd)
{
    return ",fd=" + std::to_string(fd) + "$";
}

TEST_F(AccelStat, ListShowsTheProcessIn80Columns)
{
    make_region({pid_, starttime_of(pid_)});
    Result r = run({});

    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "^ *PID USER +COMMAND +STATE +DATA PATH"))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "^ *" + std::to_string(pid_) +
                                    " \\S+ +stat-test +up +af_xdp:ve~ +6/4 "
                                    "+1\\.0M +2000$"))
        << r.out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
        EXPECT_LE(line.size(), 80u) << line;
    EXPECT_EQ(r.err, "");
}

TEST_F(AccelStat, SummaryShowsHeaderPortAndCountersByName)
{
    make_region({pid_, starttime_of(pid_)});
    Result r = run({std::to_string(pid_)});

    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "^command +stat-test --serve 80$")) << r.out;
    EXPECT_TRUE(has_line(r.out, "^state +up$")) << r.out;
    EXPECT_TRUE(has_line(r.out, "^interface +veth-a +ip 10\\.200\\.0\\.2/24 "
                                "+ip6 fd00::2/64$"))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "ipackets +1111 ")) << r.out;
    EXPECT_TRUE(has_line(r.out, "rx_nombuf +9$")) << r.out;
    EXPECT_TRUE(has_line(r.out, "pool: 300 of 4096 mbufs in use")) << r.out;
    EXPECT_TRUE(has_line(r.out, "tcp_accept +55( |$)")) << r.out;
    EXPECT_TRUE(has_line(r.out, "tcp_retrans_segs +66( |$)")) << r.out;
    // Not in the region: "-", never another counter's value.
    EXPECT_TRUE(has_line(r.out, "tcp_connect +-( |$)")) << r.out;
    // drops: the non-zero counters whose names hold "drop".
    EXPECT_TRUE(has_line(r.out, "^drops\n +tx_drop_full +7\\s*$")) << r.out;
    EXPECT_TRUE(has_line(r.out, "sock_accel +6 ")) << r.out;
    EXPECT_FALSE(has_line(r.out, "^counters")) << r.out;

    Result all = run({"-a", std::to_string(pid_)});
    ASSERT_EQ(all.rc, 0) << all.err;
    EXPECT_TRUE(has_line(all.out, "^counters \\(12\\)$")) << all.out;
    EXPECT_TRUE(has_line(all.out, "^  kernel_why_rule +4$")) << all.out;
    EXPECT_TRUE(has_line(all.out, "^  kernel_why_dns +0$")) << all.out;
}

TEST_F(AccelStat, SocketViewSelectsLikeSs)
{
    make_region({pid_, starttime_of(pid_)});
    start_responder();
    struct Case {
        std::vector<std::string> args;
        std::vector<int> fds;
    } cases[] = {
        {{"-t"}, {11, 12, 15}},
        {{"-tl"}, {10}},
        {{"-ta"}, {10, 11, 12, 15}},
        {{"-u"}, {14}},
        {{"-ul"}, {13}},
        {{"-tua"}, {10, 11, 12, 13, 14, 15}},
        {{"-l"}, {10, 13}},
        {{"--port", "443"}, {12}},
        {{"--port", "51000"}, {11}},
        {{"--addr", "10.200.0.2"}, {11, 14, 15}},
        {{"--sport=80"}, {11}},
        {{"-a", "--sport", "80"}, {10, 11}},
        {{"--dport", "53"}, {14}},
        {{"--addr", "fd00::1"}, {12}},
        {{"--addr", "10.200.0.9"}, {14}},
        {{"-ta", "--addr", "0.0.0.0"}, {10}},
        {{"--state", "syn-sent"}, {15}},
        {{"--state", "listening", "--state", "close"}, {10, 13}},
        {{"-t", "--state", "established"}, {11, 12}},
    };

    for (auto &c : cases) {
        std::string what;
        for (auto &a : c.args)
            what += a + " ";
        c.args.push_back(std::to_string(pid_));
        Result r = run(c.args);
        ASSERT_EQ(r.rc, 0) << what << r.err;
        EXPECT_TRUE(has_line(r.out, "^Netid +State +Recv-Q +Send-Q +Local "
                                    "Address:Port +Peer Address:Port +Process"))
            << what << r.out;
        for (int fd = 10; fd <= 15; fd++) {
            bool want =
                std::find(c.fds.begin(), c.fds.end(), fd) != c.fds.end();
            EXPECT_EQ(has_line(r.out, fd_row(fd)), want)
                << what << "fd " << fd << "\n"
                << r.out;
        }
        EXPECT_EQ(r.err, "") << what;
    }

    Result r = run({"-ta", std::to_string(pid_)});
    EXPECT_TRUE(has_line(r.out, "^tcp +LISTEN +1 +128 +0\\.0\\.0\\.0:80 "
                                "+0\\.0\\.0\\.0:\\* +\"stat-test\",pid=" +
                                    std::to_string(pid_) + ",fd=10$"))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "^tcp +ESTAB +5 +7 +10\\.200\\.0\\.2:80 "
                                "+10\\.200\\.0\\.1:51000 "))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "^tcp +ESTAB +0 +0 +\\[fd00::2\\]:443 "
                                "+\\[fd00::1\\]:52000 "))
        << r.out;
    EXPECT_FALSE(has_line(r.out, "rtt:")) << r.out;
    r = run({"-ulai", std::to_string(pid_)});
    EXPECT_TRUE(has_line(r.out, "^udp +UNCONN +0 +0 +0\\.0\\.0\\.0:5353 "))
        << r.out;

    Result info = run({"-ti", "--sport", "80", std::to_string(pid_)});
    EXPECT_TRUE(has_line(info.out, fd_row(11) + "\n\t rto:204 rtt:1\\.500/"
                                                "0\\.500 mss:1448 cwnd:10 "
                                                "ssthresh:20 bytes_acked:123456"
                                                " bytes_received:654321 "
                                                "retrans:3"))
        << info.out;

    Result bad = run({"--state", "nonsense"});
    EXPECT_EQ(bad.rc, 2);
    EXPECT_TRUE(has_line(bad.err, "unknown state")) << bad.err;
}

TEST_F(AccelStat, SocketViewCoversEveryProcessWithoutPid)
{
    pid_t child = sleeper();
    children_.push_back(child);
    make_region({pid_, starttime_of(pid_)});
    Spec other = {child, starttime_of(child)};
    other.comm = "other";
    make_region(other);
    start_responder();

    Result r = run({"-t", "--sport", "80"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "\"stat-test\",pid=" + std::to_string(pid_) +
                                    ",fd=11$"))
        << r.out;
    EXPECT_TRUE(
        has_line(r.out, "\"other\",pid=" + std::to_string(child) + ",fd=11$"))
        << r.out;
}

// The table is asked for through want_socks_until_ns, and the wait for
// the process is bounded; the region is otherwise left as it was.
TEST_F(AccelStat, SocketRequestIsBoundedAndTheOnlyWrite)
{
    Region &reg = make_region({pid_, starttime_of(pid_)});
    std::vector<unsigned char> before(reg.map, reg.map + reg.size);
    uint64_t t0 = mono_ns();
    Result r = run({"-t", std::to_string(pid_)});
    uint64_t t1 = mono_ns();

    ASSERT_EQ(r.rc, 0) << r.err;
    uint64_t want = reg.hdr()->want_socks_until_ns;
    EXPECT_GE(want, t0 + 3000000000ull);
    EXPECT_LE(want, t1 + 3000000000ull);
    EXPECT_GE(r.seconds, 1.4);
    EXPECT_LT(r.seconds, 4.0);
    EXPECT_TRUE(has_line(r.out, "^note: " + std::to_string(pid_) +
                                    " \\(stat-test\\) did not refresh its "
                                    "socket table within 1\\.5 s: shown as of "
                                    "its last snapshot, [0-9.]+ s ago$"))
        << r.out;
    EXPECT_TRUE(has_line(r.out, fd_row(11))) << r.out;
    reg.hdr()->want_socks_until_ns = 0;
    EXPECT_TRUE(memcmp(before.data(), reg.map, reg.size) == 0);

    // A process without a data path is not waited for.
    reg.hdr()->state = BASE_SR_KERNEL_ONLY;
    r = run({"-t", std::to_string(pid_)});
    EXPECT_LT(r.seconds, 1.3);
    EXPECT_EQ(reg.hdr()->want_socks_until_ns, 0u);

    // The library answering: no wait, no note.
    reg.hdr()->state = BASE_SR_UP;
    start_responder();
    r = run({"-t", std::to_string(pid_)});
    EXPECT_LT(r.seconds, 1.3);
    EXPECT_FALSE(has_line(r.out, "^note:")) << r.out;
    EXPECT_TRUE(has_line(r.out, fd_row(11))) << r.out;
}

// A snapshot whose count stays odd (its writer died in the middle) is not
// shown, and not waited for past the bounded retries.
TEST_F(AccelStat, SnapshotBeingWrittenIsSkippedWithoutWaiting)
{
    Region &reg = make_region({pid_, starttime_of(pid_)});
    reg.hdr()->snap_seq = 3;
    reg.hdr()->state = BASE_SR_KERNEL_ONLY; // no wait for a refresh either
    Result r = run({std::to_string(pid_)});

    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_LT(r.seconds, 1.3);
    EXPECT_TRUE(has_line(r.out, "^port +none yet")) << r.out;
    // The counters are not under the snapshot's count: still shown.
    EXPECT_TRUE(has_line(r.out, "tcp_accept +55( |$)")) << r.out;
    r = run({"-ta", std::to_string(pid_)});
    EXPECT_LT(r.seconds, 1.3);
    EXPECT_FALSE(has_line(r.out, ",fd=")) << r.out;
    reg.hdr()->snap_seq = 4;
    r = run({"-ta", std::to_string(pid_)});
    EXPECT_TRUE(has_line(r.out, fd_row(11))) << r.out;
}

TEST_F(AccelStat, ReasonsShowOnlySocketsStillOpen)
{
    make_region({pid_, starttime_of(pid_)});
    Result r = run({"--reasons", std::to_string(pid_)});

    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "^" + std::to_string(pid_) +
                                    " \\(stat-test\\): 1 socket on the kernel "
                                    "now, 4 since start"))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "^ +" + std::to_string(live_fd_) +
                                    " tcp4 +bind +127\\.0\\.0\\.1:8080 +\\S+ "
                                    "+bound to an address that is not the "
                                    "stack's$"))
        << r.out;
    EXPECT_FALSE(has_line(r.out, "^ +" + std::to_string(closed_fd_) + " "))
        << r.out;
    EXPECT_FALSE(has_line(r.out, "^ +" + std::to_string(odd_fd_) + " "))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "kernel_why_rule 4")) << r.out;
    EXPECT_FALSE(has_line(r.out, "kernel_why_dns")) << r.out;

    // The live fd closed: its record goes too.
    close(live_fd_);
    live_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    r = run({"--reasons"});
    EXPECT_TRUE(has_line(r.out, "0 sockets on the kernel now")) << r.out;
}

TEST_F(AccelStat, JsonParsesAndCarriesTheView)
{
    Spec sp = {pid_, starttime_of(pid_)};
    sp.cmdline = "say \"hi\" \\ caf\xc3\xa9 \xff\tend";
    make_region(sp);
    start_responder();
    Result r = run({"--json"});
    ASSERT_EQ(r.rc, 0) << r.err;

    const char *check = R"(
import json, sys
d = json.load(sys.stdin)
pid, live = int(sys.argv[1]), int(sys.argv[2])
p = [x for x in d["processes"] if x["pid"] == pid][0]
assert d["other_users_not_shown"] == 0, d
assert p["comm"] == "stat-test", p["comm"]
assert p["cmdline"] == 'say "hi" \\ caf\u00e9 \ufffd?end', repr(p["cmdline"])
assert p["state"] == "up" and p["iface"] == "veth-a", p
assert p["ip6"] == "fd00::2/64", p
assert p["counters"]["rx_frames"] == 1000000, p["counters"]
assert len(p["counters"]) == 12, p["counters"]
assert p["port"]["ipackets"] == 1111 and p["port"]["pool_in_use"] == 300
assert p["sockets_fresh"] is True, p
assert len(p["sockets"]) == 6, p["sockets"]
s = [s for s in p["sockets"] if s["fd"] == 12][0]
assert s["family"] == "inet6" and s["local"] == "fd00::2", s
assert s["local_port"] == 443 and s["state"] == "established", s
assert [k["fd"] for k in p["kernel_sockets"]] == [live], p["kernel_sockets"]
k = p["kernel_sockets"][0]
assert k["call"] == "bind" and k["address"] == "127.0.0.1", k
assert k["port"] == 8080, k
assert k["reason"] == "bound to an address that is not the stack's", k
print("ok")
)";
    Result py =
        python(r.out, check, {std::to_string(pid_), std::to_string(live_fd_)});
    EXPECT_EQ(py.rc, 0) << py.err << r.out;
    EXPECT_EQ(py.out, "ok\n");

    // The socket view's filter applies to the JSON of that view.
    r = run({"--json", "-tl", std::to_string(pid_)});
    py =
        python(r.out, "import json, sys\n"
                      "d = json.load(sys.stdin)\n"
                      "print([s['fd'] for s in d['processes'][0]['sockets']])");
    EXPECT_EQ(py.out, "[10]\n") << py.err << r.out;
}

TEST_F(AccelStat, PrometheusParsesWithEachFamilyOnce)
{
    pid_t child = sleeper();
    children_.push_back(child);
    make_region({pid_, starttime_of(pid_)});
    Spec other = {child, starttime_of(child)};
    other.comm = "a\"b\\c";
    make_region(other);
    start_responder();
    Result r = run({"--prometheus"});
    ASSERT_EQ(r.rc, 0) << r.err;

    Result parse = python(r.out, "import sys, prometheus_client.parser as p; "
                                 "list(p.text_string_to_metric_families("
                                 "sys.stdin.read()))");
    EXPECT_EQ(parse.rc, 0) << parse.err << r.out;

    std::istringstream in(r.out);
    std::vector<std::string> types;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("# TYPE ", 0) != 0)
            continue;
        EXPECT_EQ(std::count(types.begin(), types.end(), line), 0) << line;
        types.push_back(line);
    }
    EXPECT_GE(types.size(), 12u + 8 + 4);

    const char *check = R"(
import sys, prometheus_client.parser as p
pid, child = sys.argv[1], sys.argv[2]
fam = {f.name: f for f in p.text_string_to_metric_families(sys.stdin.read())}
rx = {s.labels["pid"]: s.value for s in fam["accel_rx_frames"].samples}
assert fam["accel_rx_frames"].type == "counter"
assert rx == {pid: 1000000, child: 1000000}, rx
comms = {s.labels["pid"]: s.labels["comm"] for s in fam["accel_up"].samples}
assert comms == {pid: "stat-test", child: 'a"b\\c'}, comms
assert all(s.value == 1 for s in fam["accel_up"].samples)
est = [s for s in fam["accel_sockets"].samples if s.labels["pid"] == pid and
       s.labels["proto"] == "tcp" and s.labels["state"] == "established"]
assert len(est) == 1 and est[0].value == 2, est
assert fam["accel_sockets"].type == "gauge"
use = {s.labels["pid"]: s.value for s in fam["accel_pool_mbufs_in_use"].samples}
assert use[pid] == 300, use
assert fam["accel_port_ipackets"].type == "counter"
print("ok")
)";
    Result py =
        python(r.out, check, {std::to_string(pid_), std::to_string(child)});
    EXPECT_EQ(py.rc, 0) << py.err << r.out;
    EXPECT_EQ(py.out, "ok\n");
}

TEST_F(AccelStat, StaleRegionsAreRemovedNewerVersionsSkipped)
{
    pid_t gone = dead_pid(), gone2 = dead_pid(), child = sleeper();
    children_.push_back(child);
    Spec dead = {gone, 12345};
    dead.comm = "dead-one";
    std::string dead_path = make_region(dead, false).path;
    Spec reused = {pid_, starttime_of(pid_) + 1000};
    std::string reused_path = make_region(reused, false).path;
    Spec junk = {gone2, 1};
    junk.magic = 0x1234;
    std::string junk_path = make_region(junk, false).path;
    Spec newer = {child, starttime_of(child)};
    newer.version = BASE_SR_VERSION + 1;
    newer.comm = "newer";
    std::string newer_path = make_region(newer, false).path;

    Result r = run({});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.err, "^accel-stat: removed the stale region of "
                                "dead process " +
                                    std::to_string(gone) + " \\(dead-one\\)$"))
        << r.err;
    EXPECT_TRUE(has_line(r.err, "^accel-stat: removed the stale region of "
                                "dead process " +
                                    std::to_string(pid_) + " \\(stat-test\\)$"))
        << r.err;
    EXPECT_TRUE(has_line(r.err, "^accel-stat: removed the stale region of "
                                "dead process " +
                                    std::to_string(gone2) + "$"))
        << r.err;
    EXPECT_TRUE(has_line(r.err, "^accel-stat: process " +
                                    std::to_string(child) +
                                    " \\(newer\\) publishes region version 2; "
                                    ".*older than the library"))
        << r.err;
    EXPECT_NE(access(dead_path.c_str(), F_OK), 0);
    EXPECT_NE(access(reused_path.c_str(), F_OK), 0);
    EXPECT_NE(access(junk_path.c_str(), F_OK), 0);
    EXPECT_EQ(access(newer_path.c_str(), F_OK), 0);
    EXPECT_TRUE(has_line(r.out, "^no accelerated process")) << r.out;

    Result one = run({std::to_string(child)});
    EXPECT_EQ(one.rc, 1);
    EXPECT_TRUE(has_line(one.err, "older than the library")) << one.err;
}

TEST_F(AccelStat, ExitStatusesAndMessages)
{
    Result r = run({"4194303"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "accel-stat: no accel process 4194303 (no " + dir_ +
                         "/accel-stat-4194303: not running under accel-run, "
                         "or it made no socket yet)\n");
    EXPECT_EQ(r.out, "");
    for (auto args :
         std::vector<std::vector<std::string>>{{"--bogus"},
                                               {"-x"},
                                               {"1", "2"},
                                               {"notapid"},
                                               {"--json", "--prometheus"},
                                               {"-c", "2"},
                                               {"-w", "1", "--json"},
                                               {"--reasons", "-t"},
                                               {"--port", "70000"},
                                               {"--addr", "10.0.0"}}) {
        Result u = run(args);
        EXPECT_EQ(u.rc, 2) << args[0];
        EXPECT_TRUE(has_line(u.err, "^accel-stat: .*\\(see accel-stat "
                                    "--help\\)$"))
            << u.err;
    }
    Result h = run({"--help"});
    EXPECT_EQ(h.rc, 0);
    EXPECT_TRUE(has_line(h.out, "^usage: accel-stat")) << h.out;
}

// Another user's region is not readable: counted, not an error.
TEST_F(AccelStat, OtherUsersRegionsAreCounted)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to run accel-stat as another user";
    make_region({pid_, starttime_of(pid_)});
    Result r = run({}, 65534);
    if (r.rc == 127 || r.rc == 126)
        GTEST_SKIP() << "cannot run " << stat_bin() << " as uid 65534";
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "^1 process of other users not shown: run as "
                                "root$"))
        << r.out;
    EXPECT_EQ(r.err, "");
    Result one = run({std::to_string(pid_)}, 65534);
    EXPECT_EQ(one.rc, 1);
    EXPECT_TRUE(has_line(one.err, "run as root or as its user")) << one.err;
}

// -w -c 2: two blocks; the second's rates come from the counters changed
// between the two reads (after the first block is out, before the second
// read a second later).
TEST_F(AccelStat, WatchPrintsRatesBetweenTwoReads)
{
    Region &reg = make_region({pid_, starttime_of(pid_)});
    bool changed = false;
    // Once the first block is out (its last line), the counters move.
    Result r =
        run({"-w", "1", "-c", "2", std::to_string(pid_)},
            [&](const std::string &out) {
                if (changed || out.find("on the kernel\n") == std::string::npos)
                    return;
                uint64_t *ctr = reg.stats();
                __atomic_fetch_add(&ctr[kRxFrames], 5000, __ATOMIC_RELAXED);
                __atomic_fetch_add(&ctr[kTxBytes], 1250000, // 10 Mbit
                                   __ATOMIC_RELAXED);
                __atomic_fetch_add(&ctr[kTcpAccept], 100, __ATOMIC_RELAXED);
                __atomic_fetch_add(&ctr[kTxDropFull], 8, __ATOMIC_RELAXED);
                changed = true;
            });
    ASSERT_EQ(r.rc, 0) << r.err;
    ASSERT_TRUE(changed) << r.out;
    const std::string &text = r.out;

    size_t blank = text.find("\n\n");
    ASSERT_NE(blank, std::string::npos) << text;
    EXPECT_EQ(text.find("\n\n", blank + 1), std::string::npos) << text;
    std::string first = text.substr(0, blank + 1),
                second = text.substr(blank + 2);
    EXPECT_TRUE(has_line(first, "^accel-stat every 1\\.0 s at ")) << text;
    EXPECT_TRUE(has_line(second, "^accel-stat every 1\\.0 s at ")) << text;
    EXPECT_TRUE(has_line(first, "^  rx frames +1000000 +- /s$")) << text;
    EXPECT_EQ(text.find('\033'), std::string::npos); // not a terminal

    std::smatch m;
    auto rate = [&](const std::string &label, uint64_t total) {
        std::regex re("^  " + label + " +" + std::to_string(total) +
                          " +([0-9.]+)",
                      std::regex::multiline);
        if (!std::regex_search(second, m, re))
            return -1.0;
        return std::stod(m[1]);
    };
    // The reads are about a second apart: a little more on a busy
    // machine, or a little less when the first read was the slower one.
    // A rate of the totals, or of nothing, is far outside these bounds.
    double rx = rate("rx frames", 1005000);
    EXPECT_GT(rx, 2500);
    EXPECT_LT(rx, 5000 / 0.9) << second;
    double mbit = rate("tx bytes", 1254000);
    EXPECT_GT(mbit, 5);
    EXPECT_LT(mbit, 10 / 0.9) << second;
    double acc = rate("tcp accepts", 155);
    EXPECT_GT(acc, 50);
    EXPECT_LT(acc, 100 / 0.9) << second;
    double drops = rate("drops", 15);
    EXPECT_GT(drops, 4);
    EXPECT_LT(drops, 8 / 0.9) << second;
    double rtx = rate("tcp retransmits", 66);
    EXPECT_EQ(rtx, 0.0) << second;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        EXPECT_LE(line.size(), 80u) << line;
}

TEST_F(AccelStat, WatchListsEveryProcessWithRates)
{
    make_region({pid_, starttime_of(pid_)});
    Result r = run({"-w", "0.2", "-c", "2"});

    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(has_line(r.out, "^ +PID COMMAND +RX f/s +TX f/s +RX Mb/s "
                                "+TX Mb/s +ACC/s +RTX/s +DROP/s$"))
        << r.out;
    // First block: no previous read; second: no change, rate 0.
    EXPECT_TRUE(has_line(r.out, "^ *" + std::to_string(pid_) +
                                    " stat-test +- +- +- +- +- +- +-$"))
        << r.out;
    EXPECT_TRUE(has_line(r.out, "^ *" + std::to_string(pid_) +
                                    " stat-test +0\\.0 +0\\.0 +0\\.0 +0\\.0 "
                                    "+0\\.0 +0\\.0 +0\\.0$"))
        << r.out;
}

// The library's pure functions.
TEST(AccelStatLib, StateNamesAndFilters)
{
    struct ast_filter f;
    struct base_sr_sock s;

    EXPECT_EQ(ast_sock_state_parse("established"),
              1u << BASE_SR_TCP_ESTABLISHED);
    EXPECT_EQ(ast_sock_state_parse("listening"), 1u << BASE_SR_TCP_LISTEN);
    EXPECT_EQ(ast_sock_state_parse("close"), 1u << BASE_SR_TCP_CLOSE);
    EXPECT_EQ(ast_sock_state_parse("fin-wait-1"), 1u << BASE_SR_TCP_FIN_WAIT1);
    EXPECT_EQ(ast_sock_state_parse("closing"), 1u << BASE_SR_TCP_CLOSING);
    EXPECT_EQ(ast_sock_state_parse("bogus"), 0u);
    EXPECT_STREQ(ast_sock_state_ss(BASE_SR_TCP_ESTABLISHED), "ESTAB");
    EXPECT_STREQ(ast_sock_state_ss(BASE_SR_TCP_CLOSE), "UNCONN");
    EXPECT_STREQ(ast_sock_state_ss(BASE_SR_TCP_TIME_WAIT), "TIME-WAIT");

    memset(&f, 0, sizeof(f));
    f.port = f.sport = f.dport = -1;
    f.states = ast_sock_default_states(false, false);
    memset(&s, 0, sizeof(s));
    s.family = AF_INET;
    s.proto = IPPROTO_TCP;
    s.state = BASE_SR_TCP_TIME_WAIT;
    s.lport = htons(80);
    EXPECT_TRUE(ast_sock_match(&f, &s));
    s.state = BASE_SR_TCP_LISTEN;
    EXPECT_FALSE(ast_sock_match(&f, &s));
    f.states = ast_sock_default_states(true, false);
    EXPECT_TRUE(ast_sock_match(&f, &s));
    f.udp = true;
    EXPECT_FALSE(ast_sock_match(&f, &s));
    f.tcp = true;
    f.dport = 80;
    EXPECT_FALSE(ast_sock_match(&f, &s));
    f.dport = -1;
    f.port = 80;
    EXPECT_TRUE(ast_sock_match(&f, &s));
}

TEST(AccelStatLib, OptionsPickTheView)
{
    struct ast_opts o;
    const char *a1[] = {"accel-stat", "-tlni", "--port=80", nullptr};
    const char *a2[] = {"accel-stat", "-w", "4242", nullptr};
    const char *a3[] = {"accel-stat", "-w", "2.5", "-c3", "99", nullptr};
    const char *a4[] = {"accel-stat", "--reasons", "--json", "7", nullptr};

    ASSERT_EQ(ast_opts_parse(3, (char **)a1, &o), 0);
    EXPECT_EQ(o.view, AST_VIEW_SOCKS);
    EXPECT_TRUE(o.filter.tcp && !o.filter.udp && o.info);
    EXPECT_EQ(o.filter.port, 80);
    EXPECT_EQ(o.filter.states, ast_sock_default_states(false, true));
    // 4242 is past SECONDS' range: the PID, watched every second.
    ASSERT_EQ(ast_opts_parse(3, (char **)a2, &o), 0);
    EXPECT_EQ(o.watch_s, 1.0);
    EXPECT_EQ(o.pid, 4242);
    EXPECT_EQ(o.view, AST_VIEW_SUMMARY);
    ASSERT_EQ(ast_opts_parse(5, (char **)a3, &o), 0);
    EXPECT_EQ(o.watch_s, 2.5);
    EXPECT_EQ(o.count, 3);
    EXPECT_EQ(o.pid, 99);
    ASSERT_EQ(ast_opts_parse(4, (char **)a4, &o), 0);
    EXPECT_EQ(o.view, AST_VIEW_REASONS);
    EXPECT_EQ(o.format, AST_FMT_JSON);
    EXPECT_EQ(o.pid, 7);
}

TEST(AccelStatLib, NumbersAndEscapes)
{
    char buf[32];
    char *text = nullptr;
    size_t len = 0;

    ast_fmt_count(999999, buf, sizeof(buf));
    EXPECT_STREQ(buf, "999999");
    ast_fmt_count(1000000, buf, sizeof(buf));
    EXPECT_STREQ(buf, "1.0M");
    ast_fmt_count(123456789, buf, sizeof(buf));
    EXPECT_STREQ(buf, "123.5M");
    ast_fmt_duration(93784, buf, sizeof(buf));
    EXPECT_STREQ(buf, "1d 02:03:04");

    FILE *f = open_memstream(&text, &len);
    ast_put_escaped(f, "a\"b\\c\nd\x01\xff\xc3\xa9", true);
    fputc('|', f);
    ast_put_escaped(f, "a\"b\\c\nd", false);
    fclose(f);
    EXPECT_EQ(std::string(text),
              "a\\\"b\\\\c\\nd\\u0001\xef\xbf\xbd\xc3\xa9|a\\\"b\\\\c\\nd");
    free(text);
}

} // namespace
