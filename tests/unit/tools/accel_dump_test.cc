// accel-dump (tools/accel-dump/): the built program against a synthetic
// live state region in a temporary directory (ACCEL_STAT_DIR), with a
// thread of this test acting as the data path: it writes capture records
// exactly as base/statreg_cap.c does (room from cap_tail, wrap markers,
// cap_head published with release, cap_drops when the ring is full).
// The files accel-dump writes are read back with libpcap and, for pcapng,
// parsed block by block. The ring reader and the one-line printer are
// also checked directly (accel_dump_core).
#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pcap/pcap.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "adp_print.h"
#include "adp_region.h"
#include "adp_ring.h"
#include "adp_write.h"
#include "statreg_layout.h"
}

#ifndef ADP_BIN
#error "ADP_BIN (the accel-dump program) must be defined by the build"
#endif

extern char **environ;

namespace
{

using Bytes = std::vector<uint8_t>;

const uint64_t kTs0 = 1700000000123456789ull;

// --- frames ---

void
put16(Bytes &b, size_t at, uint16_t v)
{
    b[at] = (uint8_t)(v >> 8);
    b[at + 1] = (uint8_t)v;
}

void
put_ip(Bytes &b, size_t at, const char *ip)
{
    in_addr a;

    inet_pton(AF_INET, ip, &a);
    memcpy(&b[at], &a, 4);
}

Bytes
eth(uint16_t type, size_t payload)
{
    Bytes b(14 + payload, 0);

    for (int i = 0; i < 6; i++) {
        b[i] = (uint8_t)(0x02 + (i == 5));
        b[6 + i] = (uint8_t)(0x02 + 2 * (i == 5));
    }
    put16(b, 12, type);
    return b;
}

// Ethernet + IPv4 + TCP or UDP, with pay bytes of a pattern after them.
Bytes
ip4(uint8_t proto, const char *src, uint16_t sport, const char *dst,
    uint16_t dport, size_t pay, uint8_t seed = 0)
{
    size_t l4 = proto == 6 ? 20 : 8;
    Bytes b = eth(0x0800, 20 + l4 + pay);

    b[14] = 0x45;
    put16(b, 16, (uint16_t)(20 + l4 + pay));
    b[22] = 64;
    b[23] = proto;
    put_ip(b, 26, src);
    put_ip(b, 30, dst);
    put16(b, 34, sport);
    put16(b, 36, dport);
    if (proto == 6) {
        b[34 + 12] = 5 << 4;
        b[34 + 13] = 0x02; // SYN
        put16(b, 34 + 14, 65535);
        b[34 + 7] = 1; // seq 1
    } else {
        put16(b, 34 + 4, (uint16_t)(8 + pay));
    }
    for (size_t i = 0; i < pay; i++)
        b[14 + 20 + l4 + i] = (uint8_t)(seed + i * 7);
    return b;
}

Bytes
tcp(uint16_t sport, uint16_t dport, size_t pay = 0, uint8_t seed = 0)
{
    return ip4(6, "10.0.0.1", sport, "10.0.0.2", dport, pay, seed);
}

Bytes
udp(uint16_t sport, uint16_t dport, size_t pay = 0)
{
    return ip4(17, "10.0.0.1", sport, "10.0.0.2", dport, pay);
}

Bytes
arp_request()
{
    Bytes b = eth(0x0806, 28);

    put16(b, 14, 1);
    put16(b, 16, 0x0800);
    b[18] = 6;
    b[19] = 4;
    put16(b, 20, 1);
    put_ip(b, 28, "10.0.0.1");
    put_ip(b, 38, "10.0.0.2");
    return b;
}

struct Frame {
    Bytes data;
    uint8_t dir = BASE_SR_CAP_RX;
    uint8_t drop = BASE_SR_CAP_KEPT;
    uint64_t ts = 0;
};

// --- the region ---

const uint32_t kCapOff = 4096;

class Region
{
  public:
    explicit Region(pid_t pid, uint32_t cap_size = 16384,
                    uint32_t hdr_size = sizeof(base_sr_hdr))
        : pid_(pid)
    {
        char tmpl[] = "/tmp/accel_dump_test.XXXXXX";

        dir_ = mkdtemp(tmpl);
        chmod(dir_.c_str(), 0755); // the file's mode decides, not the dir
        path_ = dir_ + "/" BASE_SR_PREFIX + std::to_string(pid);
        len_ = kCapOff + cap_size;
        int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
        EXPECT_GE(fd, 0);
        EXPECT_EQ(ftruncate(fd, (off_t)len_), 0);
        map_ = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        h = static_cast<base_sr_hdr *>(map_);
        h->version = BASE_SR_VERSION;
        h->hdr_size = hdr_size;
        h->size = len_;
        h->pid = pid;
        h->ppid = getppid();
        h->uid = getuid();
        h->state = BASE_SR_UP;
        strcpy(h->comm, "synthetic");
        strcpy(h->iface, "veth-t");
        h->cap_off = kCapOff;
        h->cap_size = cap_size;
        __atomic_store_n(&h->magic, BASE_SR_MAGIC, __ATOMIC_RELEASE);
    }
    ~Region()
    {
        munmap(map_, len_);
        unlink(path_.c_str());
        rmdir(dir_.c_str());
    }
    uint8_t *
    ring() const
    {
        return static_cast<uint8_t *>(map_) + kCapOff;
    }
    uint32_t
    cap_on() const
    {
        return __atomic_load_n(&h->cap_on, __ATOMIC_ACQUIRE);
    }
    uint64_t
    load(uint64_t *p) const
    {
        return __atomic_load_n(p, __ATOMIC_ACQUIRE);
    }
    const std::string &
    dir() const
    {
        return dir_;
    }
    const std::string &
    path() const
    {
        return path_;
    }
    pid_t
    pid() const
    {
        return pid_;
    }

    base_sr_hdr *h;

  private:
    pid_t pid_;
    std::string dir_, path_;
    size_t len_;
    void *map_;
};

bool
wait_for(const std::function<bool()> &ok, int ms = 5000)
{
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);

    while (!ok()) {
        if (std::chrono::steady_clock::now() > end)
            return false;
        usleep(1000);
    }
    return true;
}

// The data path's side, as base/statreg_cap.c writes it.
class Producer
{
  public:
    explicit Producer(Region &r) : r_(r)
    {
    }

    // Once cap_on is set, as the data path's tick does.
    void
    start()
    {
        snaplen_ = r_.h->cap_snaplen;
        head_ = r_.load(&r_.h->cap_head);
    }

    // Write one record; no room: wait for the consumer when wait, else
    // count it in cap_drops as the data path does. True when written.
    bool
    put(const Frame &f, bool wait = true)
    {
        uint32_t size = r_.h->cap_size, orig = (uint32_t)f.data.size();
        uint32_t cl = snaplen_ != 0 && orig > snaplen_ ? snaplen_ : orig;
        uint32_t rec = (uint32_t)((sizeof(base_sr_cap) + cl + 7u) & ~7u);
        uint32_t off = (uint32_t)(head_ & (size - 1u));
        uint64_t need = rec <= size - off ? rec : (uint64_t)(size - off) + rec;

        if (!wait_for([&] {
                uint64_t tail = r_.load(&r_.h->cap_tail);
                return head_ + need - tail <= size || !wait;
            })) {
            ADD_FAILURE() << "the consumer never made room";
            return false;
        }
        if (rec > size / 2 || head_ + need - r_.load(&r_.h->cap_tail) > size) {
            __atomic_fetch_add(&r_.h->cap_drops, 1, __ATOMIC_RELAXED);
            drops++;
            return false;
        }
        if (rec > size - off) {
            uint32_t wrap = BASE_SR_CAP_WRAP;

            memcpy(r_.ring() + off, &wrap, 4);
            head_ += size - off;
            off = 0;
            wraps++;
        }
        base_sr_cap c = {rec, cl, orig, f.dir, f.drop, 0, f.ts};
        memcpy(r_.ring() + off, &c, sizeof(c));
        memcpy(r_.ring() + off + sizeof(c), f.data.data(), cl);
        head_ += rec;
        __atomic_fetch_add(&r_.h->cap_frames, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&r_.h->cap_head, head_, __ATOMIC_RELEASE);
        return true;
    }

    // A bad record (rec_len), published.
    void
    put_corrupt(uint32_t rec_len)
    {
        uint32_t off = (uint32_t)(head_ & (r_.h->cap_size - 1u));
        base_sr_cap c = {rec_len, 0, 0, BASE_SR_CAP_RX, 0, 0, kTs0};

        memcpy(r_.ring() + off, &c, sizeof(c));
        head_ += 64;
        __atomic_store_n(&r_.h->cap_head, head_, __ATOMIC_RELEASE);
    }

    bool
    drained() const
    {
        return r_.load(&r_.h->cap_tail) == head_;
    }

    unsigned wraps = 0;
    uint64_t drops = 0;

  private:
    Region &r_;
    uint32_t snaplen_ = 0;
    uint64_t head_ = 0;
};

// --- running accel-dump ---

class Dump
{
  public:
    // Start accel-dump with args; env entries replace or add variables;
    // uid >= 0: as that user (root only).
    Dump(const Region &r, std::vector<std::string> args,
         std::vector<std::string> env = {}, int uid = -1)
    {
        std::vector<std::string> envs;
        std::vector<char *> argv, envp;
        int o[2], e[2];

        envs.push_back(std::string(ADP_DIR_ENV "=") + r.dir());
        for (auto &s : env)
            envs.push_back(s);
        for (char **p = environ; *p != nullptr; p++) {
            std::string v = *p, name = v.substr(0, v.find('='));
            bool replaced = false;

            for (auto &s : envs)
                replaced |= s.substr(0, s.find('=')) == name;
            if (!replaced)
                envs.push_back(v);
        }
        args.insert(args.begin(), ADP_BIN);
        for (auto &a : args)
            argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        for (auto &s : envs)
            envp.push_back(const_cast<char *>(s.c_str()));
        envp.push_back(nullptr);
        EXPECT_EQ(pipe2(o, O_CLOEXEC), 0);
        EXPECT_EQ(pipe2(e, O_CLOEXEC), 0);
        pid = fork();
        if (pid == 0) {
            int devnull = open("/dev/null", O_RDONLY);

            dup2(devnull, 0);
            dup2(o[1], 1);
            dup2(e[1], 2);
            if (uid >= 0 && (setgroups(0, nullptr) != 0 ||
                             setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) ||
                             setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid)))
                _exit(126);
            execve(argv[0], argv.data(), envp.data());
            _exit(127);
        }
        close(o[1]);
        close(e[1]);
        out_fd_ = o[0];
        err_fd_ = e[0];
    }
    ~Dump()
    {
        if (!done_) {
            kill(pid, SIGKILL);
            wait();
        }
    }

    // Read its output to the end and reap it; false on a timeout.
    bool
    wait(int ms = 10000)
    {
        auto end =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
        char buf[65536];

        while (out_fd_ >= 0 || err_fd_ >= 0) {
            pollfd p[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};

            if (std::chrono::steady_clock::now() > end) {
                kill(pid, SIGKILL);
                ADD_FAILURE() << "accel-dump did not end; stderr: " << err;
                end += std::chrono::seconds(5);
            }
            if (poll(p, 2, 100) <= 0)
                continue;
            for (int i = 0; i < 2; i++) {
                int &fd = i == 0 ? out_fd_ : err_fd_;
                std::string &s = i == 0 ? out : err;
                ssize_t n;

                if (fd < 0 || p[i].revents == 0)
                    continue;
                n = read(fd, buf, sizeof(buf));
                if (n > 0) {
                    s.append(buf, (size_t)n);
                } else {
                    close(fd);
                    fd = -1;
                }
            }
        }
        waitpid(pid, &status, 0);
        done_ = true;
        return WIFEXITED(status);
    }

    int
    exit_code() const
    {
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    pid_t pid;
    int status = 0;
    std::string out, err;

  private:
    int out_fd_ = -1, err_fd_ = -1;
    bool done_ = false;
};

// The producer's thread: wait for d's claim, then write frames.
std::thread
produce(Region &r, Producer &p, pid_t claimer, std::vector<Frame> frames,
        bool wait_room = true)
{
    return std::thread([&r, &p, claimer, frames, wait_room] {
        if (!wait_for([&] { return r.cap_on() == (uint32_t)claimer; })) {
            ADD_FAILURE() << "accel-dump never set cap_on";
            return;
        }
        p.start();
        for (auto &f : frames)
            p.put(f, wait_room);
    });
}

// A varied set: TCP to and from port 80, UDP, ARP, sizes up to 1500.
std::vector<Frame>
mixed(size_t n)
{
    std::vector<Frame> v;

    for (size_t i = 0; i < n; i++) {
        Frame f;

        switch (i % 4) {
        case 0:
            f.data = tcp(40000, 80, (i * 97) % 1400, (uint8_t)i);
            break;
        case 1:
            f.data = tcp(80, 40000, (i * 131) % 1200, (uint8_t)i);
            f.dir = BASE_SR_CAP_TX;
            break;
        case 2:
            f.data = udp(5353, 53, (i * 53) % 900);
            break;
        default:
            f.data = arp_request();
            f.dir = BASE_SR_CAP_TX;
        }
        f.ts = kTs0 + i * 1000003ull;
        v.push_back(f);
    }
    return v;
}

struct Packet {
    Bytes data;
    uint32_t len;
    uint64_t ts;
};

std::vector<Packet>
read_pcap(const std::string &path, std::string *err = nullptr)
{
    char eb[PCAP_ERRBUF_SIZE];
    std::vector<Packet> v;
    pcap_t *p = pcap_open_offline_with_tstamp_precision(
        path.c_str(), PCAP_TSTAMP_PRECISION_NANO, eb);
    pcap_pkthdr *h;
    const u_char *d;

    if (p == nullptr) {
        if (err != nullptr)
            *err = eb;
        ADD_FAILURE() << "libpcap cannot read " << path << ": " << eb;
        return v;
    }
    while (pcap_next_ex(p, &h, &d) == 1)
        v.push_back(
            {Bytes(d, d + h->caplen), h->len,
             (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec});
    pcap_close(p);
    return v;
}

std::string
slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;

    s << f.rdbuf();
    return s.str();
}

void
expect_same(const std::vector<Frame> &want, const std::vector<Packet> &got)
{
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); i++) {
        EXPECT_EQ(got[i].data, want[i].data) << "frame " << i;
        EXPECT_EQ(got[i].len, want[i].data.size()) << "frame " << i;
        EXPECT_EQ(got[i].ts, want[i].ts) << "frame " << i;
    }
}

bool
has(const std::string &s, const std::string &what)
{
    return s.find(what) != std::string::npos;
}

// --- the pcap file ---

TEST(AccelDump, WritesPcapWithNanosecondsAcrossWraps)
{
    Region r(getpid());
    Producer p(r);
    std::string file = r.dir() + "/out.pcap";
    auto frames = mixed(80);

    frames[5].drop = BASE_SR_CAP_DROP_STACK;
    Dump d(r, {"-w", file, "-c", "80", std::to_string(r.pid())});
    std::thread t = produce(r, p, d.pid, frames);

    ASSERT_TRUE(d.wait());
    t.join();
    EXPECT_EQ(d.exit_code(), 0) << d.err;
    EXPECT_GE(p.wraps, 2u) << "the ring did not wrap: the test proves less";
    EXPECT_EQ(r.h->cap_snaplen, 0u) << "default: whole frames";
    EXPECT_EQ(r.cap_on(), 0u) << "the capture is given back";
    EXPECT_TRUE(has(d.err, "\n80 frames captured\n")) << d.err;
    EXPECT_TRUE(has(d.err, "\n0 frames dropped by the ring")) << d.err;
    EXPECT_TRUE(has(d.err, "\n1 frame the stack dropped (marked)\n")) << d.err;

    std::string raw = slurp(file);
    uint32_t magic;
    ASSERT_GE(raw.size(), 24u);
    memcpy(&magic, raw.data(), 4);
    EXPECT_EQ(magic, 0xa1b23c4du) << "nanosecond pcap";
    expect_same(frames, read_pcap(file));
}

TEST(AccelDump, WritesPcapToStdout)
{
    Region r(getpid());
    Producer p(r);
    auto frames = mixed(30);
    Dump d(r, {"-c", "30", "-w", "-", std::to_string(r.pid())});
    std::thread t = produce(r, p, d.pid, frames);

    ASSERT_TRUE(d.wait());
    t.join();
    ASSERT_EQ(d.exit_code(), 0) << d.err;
    std::string file = r.dir() + "/stdout.pcap";
    std::ofstream(file, std::ios::binary) << d.out;
    expect_same(frames, read_pcap(file));
    unlink(file.c_str());
}

TEST(AccelDump, SnaplenReachesTheDataPathAndTheFile)
{
    Region r(getpid());
    Producer p(r);
    std::string file = r.dir() + "/cut.pcap";
    std::vector<Frame> frames = {
        {tcp(40000, 80, 1000), BASE_SR_CAP_RX, BASE_SR_CAP_KEPT, kTs0}};
    Dump d(r, {"-s", "100", "-c", "1", "-w", file, std::to_string(r.pid())});
    std::thread t = produce(r, p, d.pid, frames);

    ASSERT_TRUE(d.wait());
    t.join();
    ASSERT_EQ(d.exit_code(), 0) << d.err;
    EXPECT_EQ(r.h->cap_snaplen, 100u);
    auto got = read_pcap(file);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].data,
              Bytes(frames[0].data.begin(), frames[0].data.begin() + 100));
    EXPECT_EQ(got[0].len, frames[0].data.size());
    uint32_t snap;
    memcpy(&snap, slurp(file).data() + 16, 4);
    EXPECT_EQ(snap, 100u);
}

// --- pcapng ---

struct NgBlock {
    uint32_t type;
    std::string body; // after type and length, before the trailing length
};

std::vector<NgBlock>
ng_blocks(const std::string &raw)
{
    std::vector<NgBlock> v;
    size_t at = 0;

    while (at + 12 <= raw.size()) {
        uint32_t type, len, len2;

        memcpy(&type, raw.data() + at, 4);
        memcpy(&len, raw.data() + at + 4, 4);
        if (len < 12 || len % 4 != 0 || at + len > raw.size()) {
            ADD_FAILURE() << "bad block length " << len << " at " << at;
            break;
        }
        memcpy(&len2, raw.data() + at + len - 4, 4);
        EXPECT_EQ(len, len2) << "block at " << at;
        v.push_back({type, raw.substr(at + 8, len - 12)});
        at += len;
    }
    EXPECT_EQ(at, raw.size());
    return v;
}

// The options of a block from byte at: code -> value (the last of a code).
std::map<uint16_t, std::string>
ng_options(const std::string &b, size_t at)
{
    std::map<uint16_t, std::string> m;

    while (at + 4 <= b.size()) {
        uint16_t code, len;

        memcpy(&code, b.data() + at, 2);
        memcpy(&len, b.data() + at + 2, 2);
        if (code == 0)
            break;
        m[code] = b.substr(at + 4, len);
        at += 4 + ((len + 3u) & ~3u);
    }
    return m;
}

TEST(AccelDump, PcapngCarriesDirectionAndWhyTheStackDropped)
{
    Region r(getpid());
    Producer p(r);
    std::string file = r.dir() + "/out.pcapng"; // pcapng by its name
    std::vector<Frame> frames = mixed(5);

    frames[0].drop = BASE_SR_CAP_KEPT;
    frames[1].drop = BASE_SR_CAP_DROP_SHARE;
    frames[1].dir = BASE_SR_CAP_RX;
    frames[2].drop = BASE_SR_CAP_DROP_STACK;
    frames[3].drop = BASE_SR_CAP_DROP_TXBUF;
    frames[4].drop = BASE_SR_CAP_DROP_NOBUF;
    frames[4].dir = BASE_SR_CAP_RX;
    Dump d(r, {std::to_string(r.pid()), "-w", file, "-c", "5"});
    std::thread t = produce(r, p, d.pid, frames);

    ASSERT_TRUE(d.wait());
    t.join();
    ASSERT_EQ(d.exit_code(), 0) << d.err;
    EXPECT_TRUE(has(d.err, "\n4 frames the stack dropped (marked)\n")) << d.err;
    expect_same(frames, read_pcap(file)); // libpcap reads pcapng too

    std::string raw = slurp(file);
    EXPECT_TRUE(has(raw, "accel: dropped by the stack (rx_drop_stack)"));
    auto blocks = ng_blocks(raw);
    ASSERT_EQ(blocks.size(), 2u + 5u + 1u); // SHB, IDB, EPBs, ISB
    EXPECT_EQ(blocks[0].type, 0x0A0D0D0Au);
    EXPECT_EQ(blocks[1].type, 1u);
    auto idb = ng_options(blocks[1].body, 8);
    EXPECT_EQ(idb[9], std::string(1, '\x09')) << "if_tsresol: nanoseconds";
    EXPECT_EQ(idb[2], "veth-t") << "if_name: the region's interface";
    const char *why[] = {
        nullptr,
        "accel: dropped by the stack (rx_drop_stack)",
        "accel: dropped: no stack memory (rx_drop_nobuf)",
        "accel: dropped: no mbuf to send it (tx_drop_nombuf)",
        "accel: dropped before the stack: the port flagged a bad checksum, "
        "or a chained mbuf (rx_drop_stack)",
        "accel: dropped before the stack: for another process of the family, "
        "whose ring was full or which could not take it (share_drop_*)",
    };
    for (size_t i = 0; i < frames.size(); i++) {
        const std::string &b = blocks[2 + i].body;
        uint32_t caplen, flags;

        ASSERT_EQ(blocks[2 + i].type, 6u) << "EPB " << i;
        memcpy(&caplen, b.data() + 12, 4);
        auto o = ng_options(b, 20 + ((caplen + 3u) & ~3u));
        ASSERT_EQ(o[2].size(), 4u) << "epb_flags " << i;
        memcpy(&flags, o[2].data(), 4);
        EXPECT_EQ(flags & 3u, frames[i].dir == BASE_SR_CAP_RX ? 1u : 2u)
            << "direction of frame " << i;
        if (frames[i].drop == BASE_SR_CAP_KEPT)
            EXPECT_EQ(o.count(1), 0u) << "no comment on frame " << i;
        else
            EXPECT_EQ(o[1], why[frames[i].drop]) << "frame " << i;
    }
    EXPECT_EQ(blocks[7].type, 5u) << "the statistics block ends the file";
}

// --- the filter ---

TEST(AccelDump, FilterSelectsOnlyMatchingFrames)
{
    Region r(getpid());
    Producer p(r);
    std::string file = r.dir() + "/f.pcap";
    std::vector<Frame> frames = {
        {tcp(40000, 80, 10), BASE_SR_CAP_RX, 0, kTs0},
        {tcp(40000, 22, 10), BASE_SR_CAP_RX, 0, kTs0 + 1},
        {udp(40000, 80, 10), BASE_SR_CAP_RX, 0, kTs0 + 2},
        {arp_request(), BASE_SR_CAP_TX, 0, kTs0 + 3},
        {tcp(80, 40000, 20), BASE_SR_CAP_TX, 0, kTs0 + 4},
        {tcp(40001, 80, 30), BASE_SR_CAP_RX, BASE_SR_CAP_DROP_STACK, kTs0 + 5},
    };
    // The expression in several arguments, joined as tcpdump joins them.
    Dump d(r, {"-w", file, std::to_string(r.pid()), "tcp", "port", "80"});
    std::thread t = produce(r, p, d.pid, frames);

    t.join();
    ASSERT_TRUE(wait_for([&] { return p.drained(); }));
    kill(d.pid, SIGINT);
    ASSERT_TRUE(d.wait());
    EXPECT_EQ(d.exit_code(), 0) << d.err;
    expect_same({frames[0], frames[4], frames[5]}, read_pcap(file));
    EXPECT_TRUE(has(d.err, "\n3 frames captured\n6 frames received by filter"))
        << d.err;
    EXPECT_EQ(r.cap_on(), 0u);
}

TEST(AccelDump, BadFilterExitsTwoWithLibpcapsMessage)
{
    Region r(getpid());
    const char *expr = "tcp port eighty";
    pcap_t *dead = pcap_open_dead(DLT_EN10MB, 262144);
    bpf_program prog;

    ASSERT_NE(pcap_compile(dead, &prog, expr, 1, PCAP_NETMASK_UNKNOWN), 0);
    std::string want = std::string("accel-dump: ") + pcap_geterr(dead) + "\n";
    pcap_close(dead);
    Dump d(r, {std::to_string(r.pid()), expr});

    ASSERT_TRUE(d.wait());
    EXPECT_EQ(d.exit_code(), 2);
    EXPECT_EQ(d.err, want);
    EXPECT_EQ(r.cap_on(), 0u) << "no capture for a command that failed";
}

// --- taking and giving back the capture ---

TEST(AccelDump, OneCaptureAtATime)
{
    Region r(getpid());
    Dump first(r, {"-w", r.dir() + "/1.pcap", std::to_string(r.pid())});

    ASSERT_TRUE(wait_for([&] { return r.cap_on() == (uint32_t)first.pid; }))
        << "cap_on is the running accel-dump's pid";
    EXPECT_NE(r.load(&r.h->cap_alive_ns), 0u);
    Dump second(r, {"-w", r.dir() + "/2.pcap", std::to_string(r.pid())});
    ASSERT_TRUE(second.wait());
    EXPECT_EQ(second.exit_code(), 1);
    EXPECT_EQ(second.err, "accel-dump: " + std::to_string(r.pid()) +
                              " is being captured by accel-dump " +
                              std::to_string(first.pid) + "\n");
    EXPECT_EQ(access((r.dir() + "/2.pcap").c_str(), F_OK), -1)
        << "a refused accel-dump writes no file";
    EXPECT_EQ(r.cap_on(), (uint32_t)first.pid);
    kill(first.pid, SIGTERM);
    ASSERT_TRUE(first.wait());
    EXPECT_EQ(first.exit_code(), 0) << first.err;
    EXPECT_EQ(r.cap_on(), 0u) << "given back at the end";
}

// The data path gave up on accel-dump (it did not run for 3 s): cap_on
// went to 0 and accel-dump takes it again; someone else's pid there ends
// the capture with a message.
TEST(AccelDump, LostCaptureIsResumedOrReported)
{
    Region r(getpid());
    Dump d(r, {"-w", r.dir() + "/l.pcap", std::to_string(r.pid())});

    ASSERT_TRUE(wait_for([&] { return r.cap_on() == (uint32_t)d.pid; }));
    __atomic_store_n(&r.h->cap_on, 0u, __ATOMIC_RELEASE);
    ASSERT_TRUE(wait_for([&] { return r.cap_on() == (uint32_t)d.pid; }))
        << "accel-dump takes the capture again";
    __atomic_store_n(&r.h->cap_on, (uint32_t)getpid(), __ATOMIC_RELEASE);
    ASSERT_TRUE(d.wait());
    EXPECT_EQ(d.exit_code(), 1);
    EXPECT_TRUE(has(d.err, "had stopped")) << d.err;
    EXPECT_TRUE(
        has(d.err, "was taken over by accel-dump " + std::to_string(getpid())))
        << d.err;
    EXPECT_EQ(r.cap_on(), (uint32_t)getpid()) << "not ours to give back";
}

TEST(AccelDump, TakesOverFromADeadAccelDump)
{
    Region r(getpid());
    Producer p(r);
    pid_t dead = fork();

    if (dead == 0)
        _exit(0);
    waitpid(dead, nullptr, 0);
    r.h->cap_on = (uint32_t)dead;
    std::string file = r.dir() + "/t.pcap";
    auto frames = mixed(3);
    Dump d(r, {"-c", "3", "-w", file, std::to_string(r.pid())});
    std::thread t = produce(r, p, d.pid, frames);

    ASSERT_TRUE(d.wait());
    t.join();
    EXPECT_EQ(d.exit_code(), 0) << d.err;
    expect_same(frames, read_pcap(file));
}

TEST(AccelDump, RingDropsAreReported)
{
    Region r(getpid());
    Producer p(r);
    std::string file = r.dir() + "/drops.pcap";
    Dump d(r, {"-w", file, std::to_string(r.pid())});
    std::vector<Frame> frames;

    ASSERT_TRUE(wait_for([&] { return r.cap_on() == (uint32_t)d.pid; }));
    p.start();
    // A writer too slow: accel-dump stopped while the data path goes on.
    kill(d.pid, SIGSTOP);
    for (int i = 0; i < 40; i++) {
        Frame f{tcp(40000, 80, 1000, (uint8_t)i), BASE_SR_CAP_RX, 0,
                kTs0 + (uint64_t)i};

        if (p.put(f, false))
            frames.push_back(f);
    }
    kill(d.pid, SIGCONT);
    EXPECT_GT(p.drops, 0u);
    EXPECT_GT(frames.size(), 0u);
    ASSERT_TRUE(wait_for([&] { return p.drained(); }));
    kill(d.pid, SIGINT);
    ASSERT_TRUE(d.wait());
    EXPECT_EQ(d.exit_code(), 0) << d.err;
    expect_same(frames, read_pcap(file));
    EXPECT_TRUE(has(d.err, "\n" + std::to_string(frames.size()) +
                               " frames captured\n" + std::to_string(p.drops) +
                               " frames dropped by the ring (the writer was "
                               "too slow; the data path did not wait)\n"))
        << d.err;
}

TEST(AccelDump, CorruptRingEndsTheCaptureWithAMessage)
{
    Region r(getpid());
    Producer p(r);
    Dump d(r, {"-w", r.dir() + "/c.pcap", std::to_string(r.pid())});

    ASSERT_TRUE(wait_for([&] { return r.cap_on() == (uint32_t)d.pid; }));
    p.start();
    p.put({tcp(40000, 80), BASE_SR_CAP_RX, 0, kTs0});
    p.put_corrupt(12);
    ASSERT_TRUE(d.wait()) << "ended by a signal: " << d.exit_code();
    EXPECT_EQ(d.exit_code(), 1);
    EXPECT_TRUE(has(d.err, "the capture ring is corrupt")) << d.err;
    EXPECT_TRUE(has(d.err, "\n1 frame captured\n")) << d.err;
    EXPECT_EQ(r.cap_on(), 0u);
}

// --- the end of the process ---

TEST(AccelDump, StopsWhenTheProcessIsExiting)
{
    Region r(getpid());
    Producer p(r);
    std::string file = r.dir() + "/e.pcap";
    auto frames = mixed(6);
    Dump d(r, {"-w", file, std::to_string(r.pid())});
    std::thread t = produce(r, p, d.pid, frames);

    t.join();
    __atomic_store_n(&r.h->state, (uint32_t)BASE_SR_EXITING, __ATOMIC_RELEASE);
    ASSERT_TRUE(d.wait());
    EXPECT_EQ(d.exit_code(), 0) << d.err;
    EXPECT_TRUE(has(d.err, "is exiting")) << d.err;
    expect_same(frames, read_pcap(file)); // drained before stopping
}

TEST(AccelDump, StopsWhenTheProcessIsGone)
{
    pid_t target = fork();

    if (target == 0) {
        pause();
        _exit(0);
    }
    Region r(target);
    Producer p(r);
    std::string file = r.dir() + "/g.pcap";
    auto frames = mixed(4);
    Dump d(r, {"-w", file, std::to_string(r.pid())});
    std::thread t = produce(r, p, d.pid, frames);

    t.join();
    kill(target, SIGKILL);
    waitpid(target, nullptr, 0);
    ASSERT_TRUE(d.wait());
    EXPECT_EQ(d.exit_code(), 0) << d.err;
    EXPECT_TRUE(has(d.err, "process " + std::to_string(target) + " exited"))
        << d.err;
    expect_same(frames, read_pcap(file));
}

// --- errors at the start ---

TEST(AccelDump, NoRegionNoProcess)
{
    Region r(getpid());
    pid_t other = getppid(); // alive, but no region in r's directory
    Dump d(r, {std::to_string(other)});

    ASSERT_TRUE(d.wait());
    EXPECT_EQ(d.exit_code(), 1);
    EXPECT_EQ(d.err, "accel-dump: no accel process " + std::to_string(other) +
                         " (no " + r.dir() + "/accel-stat-" +
                         std::to_string(other) + ")\n");
}

TEST(AccelDump, NotAllowedSaysWhoMay)
{
    Region r(getpid());
    int uid = -1;

    if (geteuid() == 0) {
        passwd *pw = getpwnam("nobody");
        uid = pw != nullptr ? (int)pw->pw_uid : 65534;
    } else {
        chmod(r.path().c_str(), 0); // not even its owner may open it
    }
    Dump d(r, {"-w", "/dev/null", std::to_string(r.pid())}, {}, uid);

    ASSERT_TRUE(d.wait());
    EXPECT_EQ(d.exit_code(), 1) << d.err;
    EXPECT_TRUE(has(d.err, "run as root or as the process's user")) << d.err;
    EXPECT_EQ(r.cap_on(), 0u);
}

TEST(AccelDump, OlderLibraryHasNoCapturePart)
{
    Region r(getpid(), 16384, offsetof(base_sr_hdr, cap_off));
    Dump d(r, {std::to_string(r.pid())});

    ASSERT_TRUE(d.wait());
    EXPECT_EQ(d.exit_code(), 1);
    EXPECT_TRUE(has(d.err, "has no capture ring")) << d.err;
    EXPECT_EQ(r.cap_on(), 0u);
}

TEST(AccelDump, UsageErrorsExitTwo)
{
    Region r(getpid());
    std::string pid = std::to_string(r.pid());
    const std::vector<std::vector<std::string>> bad = {
        {},
        {"notapid"},
        {"-c", "0", pid},
        {"-c", "x", pid},
        {"-s", "-1", pid},
        {"--pcapng", pid},
        {"-q", pid},
        {"-w"},
    };

    for (auto &args : bad) {
        Dump d(r, args);

        ASSERT_TRUE(d.wait());
        EXPECT_EQ(d.exit_code(), 2) << args.size() << " args: " << d.err;
        EXPECT_EQ(r.cap_on(), 0u);
    }
    Dump help(r, {"--help"});
    ASSERT_TRUE(help.wait());
    EXPECT_EQ(help.exit_code(), 0);
    EXPECT_TRUE(has(help.out, "usage: accel-dump")) << help.out;
}

// --- printing ---

TEST(AccelDump, PrintsItsOwnLinesWithoutTcpdump)
{
    Region r(getpid());
    Producer p(r);
    char empty[] = "/tmp/accel_dump_path.XXXXXX";
    ASSERT_NE(mkdtemp(empty), nullptr);
    std::vector<Frame> frames = {
        {tcp(40000, 80), BASE_SR_CAP_RX, 0, kTs0},
        {arp_request(), BASE_SR_CAP_TX, 0, kTs0 + 1000},
        {tcp(40000, 81), BASE_SR_CAP_RX, BASE_SR_CAP_DROP_STACK, kTs0 + 2000},
    };
    Dump d(r, {"-c", "3", std::to_string(r.pid())},
           {std::string("PATH=") + empty});
    std::thread t = produce(r, p, d.pid, frames);

    ASSERT_TRUE(d.wait());
    t.join();
    rmdir(empty);
    EXPECT_EQ(d.exit_code(), 0) << d.err;
    EXPECT_TRUE(has(d.err, "no tcpdump")) << d.err;
    std::vector<std::string> lines;
    std::istringstream in(d.out);
    for (std::string l; std::getline(in, l);)
        lines.push_back(l);
    ASSERT_EQ(lines.size(), 3u) << d.out;
    EXPECT_TRUE(has(lines[0], " IN len 54 IP 10.0.0.1.40000 > 10.0.0.2.80: "
                              "tcp Flags [S]"))
        << lines[0];
    EXPECT_TRUE(has(lines[1], " OUT len 42 ARP, Request who-has 10.0.0.2 "
                              "tell 10.0.0.1"))
        << lines[1];
    EXPECT_TRUE(has(lines[2], "10.0.0.2.81: tcp Flags [S] [dropped by the "
                              "stack (rx_drop_stack)]"))
        << lines[2];
}

TEST(AccelDump, PrintsThroughTcpdump)
{
    if (system("command -v tcpdump >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "no tcpdump on PATH";
    Region r(getpid());
    Producer p(r);
    std::vector<Frame> frames = {
        {tcp(40000, 80), BASE_SR_CAP_RX, 0, kTs0},
        {tcp(80, 40000), BASE_SR_CAP_TX, 0, kTs0 + 1000},
        {udp(5353, 53, 4), BASE_SR_CAP_RX, BASE_SR_CAP_DROP_NOBUF, kTs0 + 2000},
    };
    Dump d(r, {"-c", "3", std::to_string(r.pid())});
    std::thread t = produce(r, p, d.pid, frames);

    ASSERT_TRUE(d.wait());
    t.join();
    EXPECT_EQ(d.exit_code(), 0) << d.err;
    std::vector<std::string> lines;
    std::istringstream in(d.out);
    for (std::string l; std::getline(in, l);)
        lines.push_back(l);
    ASSERT_EQ(lines.size(), 3u) << d.out << d.err;
    EXPECT_TRUE(has(lines[0], " IP 10.0.0.1.40000 > 10.0.0.2.80: Flags [S]"))
        << lines[0];
    EXPECT_TRUE(has(lines[1], " IP 10.0.0.1.80 > 10.0.0.2.40000: Flags [S]"))
        << lines[1];
    EXPECT_TRUE(has(lines[2], " IP 10.0.0.1.5353 > 10.0.0.2.53: ")) << lines[2];
    EXPECT_TRUE(has(d.err, "\n1 frame the stack dropped (marked)\n")) << d.err;
}

// --- the library, directly ---

int
count_frames(void *arg, const adp_frame *)
{
    ++*static_cast<int *>(arg);
    return 0;
}

TEST(AdpRing, ReadsAcrossTheWrapMarker)
{
    alignas(8) uint8_t buf[256] = {};
    uint64_t head = 256 + 64, tail = 192, nread = 0;
    adp_ring r = {buf, sizeof(buf), &head, &tail, tail};
    base_sr_cap c = {64, 40, 40, BASE_SR_CAP_RX, 0, 0, kTs0};
    uint32_t wrap = BASE_SR_CAP_WRAP;
    char err[128];
    int n = 0;

    memcpy(buf + 192, &wrap, 4); // the last 64 bytes unused
    memcpy(buf, &c, sizeof(c));  // then one record at offset 0
    EXPECT_EQ(adp_ring_read(&r, count_frames, &n, &nread, err, sizeof(err)), 0);
    EXPECT_EQ(n, 1);
    EXPECT_EQ(nread, 1u);
    EXPECT_EQ(tail, head) << "the tail is published";
}

TEST(AdpRing, RejectsRecordsOutsideTheContract)
{
    struct Case {
        const char *what;
        uint32_t rec_len, caplen, origlen;
        uint64_t head;
    } cases[] = {
        {"zero length", 0, 0, 0, 64},
        {"shorter than its header", 16, 0, 0, 64},
        {"not a multiple of 8", 36, 4, 4, 64},
        {"more than half the ring", 136, 100, 100, 192},
        {"past the head", 64, 40, 40, 32},
        {"caplen past the record", 64, 41, 41, 64},
        {"caplen above origlen", 64, 40, 20, 64},
        {"head too far ahead", 64, 40, 40, 257},
    };

    for (auto &k : cases) {
        alignas(8) uint8_t buf[256] = {};
        uint64_t head = k.head, tail = 0, nread = 0;
        adp_ring r = {buf, sizeof(buf), &head, &tail, 0};
        base_sr_cap c = {k.rec_len, k.caplen, k.origlen, 1, 0, 0, 0};
        char err[128] = "";
        int n = 0;

        memcpy(buf, &c, sizeof(c));
        EXPECT_EQ(adp_ring_read(&r, count_frames, &n, &nread, err, sizeof(err)),
                  ADP_RING_CORRUPT)
            << k.what;
        EXPECT_EQ(n, 0) << k.what;
        EXPECT_TRUE(has(err, "corrupt")) << k.what;
    }
}

TEST(AdpPrint, LineForATcpFrameTheStackDropped)
{
    Bytes b = tcp(40000, 80);
    adp_frame f = {
        b.data(),           (uint32_t)b.size(),
        (uint32_t)b.size(), 86400ull * 1000000000ull + 3723456789000ull,
        BASE_SR_CAP_RX,     BASE_SR_CAP_DROP_STACK};
    char line[256];

    setenv("TZ", "UTC", 1);
    tzset();
    adp_print_line(&f, line, sizeof(line));
    EXPECT_STREQ(line, "01:02:03.456789 IN len 54 IP 10.0.0.1.40000 > "
                       "10.0.0.2.80: tcp Flags [S] [dropped by the stack "
                       "(rx_drop_stack)]");
    f.caplen = 20; // cut inside the IP header
    f.drop = BASE_SR_CAP_KEPT;
    f.dir = BASE_SR_CAP_TX;
    adp_print_line(&f, line, sizeof(line));
    EXPECT_STREQ(line, "01:02:03.456789 OUT len 54 IP, truncated");
}

} // namespace
