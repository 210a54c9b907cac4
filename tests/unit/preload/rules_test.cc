// Per-application rules (preload/rules.h): the parser (every error kind,
// with the line it names), the first-match matcher, and the decisions
// combining the rules with the built-in ones of decide.h.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cstring>
#include <string>

#include "rules.h"
#include "inet_helpers.h"

namespace
{

std::string
str6(const in6_addr &a)
{
    char b[INET6_ADDRSTRLEN];
    return inet_ntop(AF_INET6, &a, b, sizeof(b));
}

// A parsed table, freed at the end of the test.
struct Rules {
    pl_rules r{};
    int rc;
    char err[512];

    explicit Rules(const std::string &text, const char *file = "r.conf")
    {
        rc = pl_rules_parse(text.data(), text.size(), file, &r, err,
                            sizeof(err));
    }
    ~Rules()
    {
        pl_rules_free(&r);
    }
};

// The error line for text, or "" when it parses.
std::string
error_of(const std::string &text)
{
    Rules r(text);
    if (r.rc == 0)
        return "";
    EXPECT_EQ(r.rc, -EINVAL);
    EXPECT_EQ(r.r.n, 0u) << "the table is empty after an error";
    return r.err;
}

// The action of the first rule matching, PL_RULE_NONE when none does.
// An address of either family ("10.0.0.1", "fd00::1") as a query
// endpoint, through pl_rule_addr_from.
pl_rule_addr
ep_of(const char *addr, uint16_t port, bool dual = false)
{
    pl_rule_addr ep{};
    if (strchr(addr, ':') != nullptr) {
        sockaddr_in6 s6 = sin6(addr, port);
        EXPECT_EQ(pl_rule_addr_from((sockaddr *)&s6, sizeof(s6), dual, &ep), 0);
    } else {
        sockaddr_in s = sin(addr, port);
        EXPECT_EQ(pl_rule_addr_from((sockaddr *)&s, sizeof(s), dual, &ep), 0);
    }
    return ep;
}

pl_rule_action
act(const Rules &r, pl_rule_proto proto, pl_rule_role role, const char *addr,
    uint16_t port, const char *prog = "app")
{
    pl_rule_addr ep = ep_of(addr, port);
    bool local = role == PL_RULE_LISTEN || role == PL_RULE_UDP_RECV;
    pl_rule_query q = {proto, role, local ? &ep : nullptr,
                       local ? nullptr : &ep, prog};
    const pl_rule *m = pl_rules_match(&r.r, &q);
    return m ? m->action : PL_RULE_NONE;
}

unsigned
line_of(const Rules &r, pl_rule_proto proto, pl_rule_role role,
        const char *addr, uint16_t port, const char *prog = "app")
{
    pl_rule_addr ep = ep_of(addr, port);
    bool local = role == PL_RULE_LISTEN || role == PL_RULE_UDP_RECV;
    pl_rule_query q = {proto, role, local ? &ep : nullptr,
                       local ? nullptr : &ep, prog};
    const pl_rule *m = pl_rules_match(&r.r, &q);
    return m ? m->line : 0;
}

pl_route
bind_r(const Rules &r, int type, const char *addr, uint16_t port,
       const pl_rule **hit = nullptr)
{
    sockaddr_in s = sin(addr, port);
    return pl_rules_route_bind(&r.r, type, (sockaddr *)&s, sizeof(s), &kNet,
                               "app", hit);
}

pl_route
connect_r(const Rules &r, int type, const char *addr, uint16_t port,
          const pl_rule **hit = nullptr)
{
    sockaddr_in s = sin(addr, port);
    return pl_rules_route_connect(&r.r, type, (sockaddr *)&s, sizeof(s), &kNet,
                                  "app", hit);
}

} // namespace

// ---- parser: accepted syntax ------------------------------------------

TEST(RulesParse, EmptyCommentsAndBlankLinesGiveNoRules)
{
    Rules r("\n# a comment\n   \t\n  # indented comment\n\r\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.r.n, 0u);
    Rules e("");
    ASSERT_EQ(e.rc, 0);
    EXPECT_EQ(e.r.n, 0u);
}

TEST(RulesParse, FieldsOfAFullRule)
{
    Rules r("# header\n"
            "accel tcp role listen local 10.200.0.0/24:8000-8100 prog ngin*\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    ASSERT_EQ(r.r.n, 1u);
    const pl_rule &x = r.r.v[0];
    EXPECT_EQ(x.action, PL_RULE_ACCEL);
    EXPECT_EQ(x.proto, PL_RULE_TCP);
    EXPECT_EQ(x.role, PL_RULE_LISTEN);
    EXPECT_TRUE(x.local.set);
    EXPECT_EQ(str6(x.local.net), "::ffff:10.200.0.0");
    EXPECT_EQ(x.local.plen, 96 + 24);
    EXPECT_EQ(x.local.lo, 8000);
    EXPECT_EQ(x.local.hi, 8100);
    EXPECT_FALSE(x.remote.set);
    EXPECT_STREQ(x.prog, "ngin*");
    EXPECT_EQ(x.line, 2u);
}

TEST(RulesParse, SelectorsInAnyOrderWithTabsCrlfAndTrailingComment)
{
    Rules r("kernel\tprog redis-cli   udp remote 10.0.0.0/8:53 # dns\r\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    ASSERT_EQ(r.r.n, 1u);
    EXPECT_EQ(r.r.v[0].action, PL_RULE_KERNEL);
    EXPECT_EQ(r.r.v[0].proto, PL_RULE_UDP);
    EXPECT_EQ(r.r.v[0].role, PL_RULE_ANY_ROLE);
    EXPECT_EQ(r.r.v[0].remote.lo, 53);
    EXPECT_EQ(r.r.v[0].remote.hi, 53);
    EXPECT_STREQ(r.r.v[0].prog, "redis-cli");
}

TEST(RulesParse, EndpointForms)
{
    Rules r("kernel local *\n"
            "kernel local *:80\n"
            "kernel local *:*\n"
            "kernel local 10.1.2.3\n"
            "kernel local 10.1.2.3:7-9\n"
            "kernel local 0.0.0.0/0\n"
            "kernel local 10.0.0.0/8");
    ASSERT_EQ(r.rc, 0) << r.err;
    ASSERT_EQ(r.r.n, 7u);
    EXPECT_EQ(r.r.v[0].local.plen, 0);
    EXPECT_EQ(r.r.v[0].local.lo, 0);
    EXPECT_EQ(r.r.v[0].local.hi, 65535);
    EXPECT_EQ(r.r.v[1].local.lo, 80);
    EXPECT_EQ(r.r.v[1].local.hi, 80);
    EXPECT_EQ(r.r.v[2].local.hi, 65535);
    EXPECT_EQ(r.r.v[3].local.plen, 128);
    EXPECT_EQ(str6(r.r.v[3].local.net), "::ffff:10.1.2.3");
    EXPECT_EQ(r.r.v[4].local.lo, 7);
    EXPECT_EQ(r.r.v[4].local.hi, 9);
    EXPECT_EQ(r.r.v[5].local.plen, 96) << "0.0.0.0/0: every IPv4 address";
    EXPECT_EQ(r.r.v[6].local.plen, 96 + 8);
    EXPECT_EQ(r.r.v[6].line, 7u) << "a last line without a newline counts";
}

TEST(RulesParse, RoleImpliesProtocol)
{
    Rules r("accel role listen\naccel role connect\n"
            "accel role udp-send\naccel role udp-recv\naccel\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    ASSERT_EQ(r.r.n, 5u);
    EXPECT_EQ(r.r.v[0].proto, PL_RULE_TCP);
    EXPECT_EQ(r.r.v[1].proto, PL_RULE_TCP);
    EXPECT_EQ(r.r.v[2].proto, PL_RULE_UDP);
    EXPECT_EQ(r.r.v[3].proto, PL_RULE_UDP);
    EXPECT_EQ(r.r.v[4].proto, PL_RULE_ANY_PROTO);
}

TEST(RulesParse, NotNulTerminatedInput)
{
    const char text[] = {'k', 'e', 'r', 'n', 'e', 'l', ' ', 't', 'c', 'p', 'X'};
    pl_rules r{};
    char err[256];
    ASSERT_EQ(pl_rules_parse(text, 10, "f", &r, err, sizeof(err)), 0) << err;
    ASSERT_EQ(r.n, 1u);
    EXPECT_EQ(r.v[0].proto, PL_RULE_TCP);
    pl_rules_free(&r);
    pl_rules_free(&r); // safe twice
}

TEST(RulesParse, ManyRulesKeepTheirOrderAndLines)
{
    std::string text;
    for (int i = 0; i < 100; i++)
        text += "kernel tcp local *:" + std::to_string(1000 + i) + "\n\n";
    Rules r(text);
    ASSERT_EQ(r.rc, 0) << r.err;
    ASSERT_EQ(r.r.n, 100u);
    EXPECT_EQ(r.r.v[99].local.lo, 1099);
    EXPECT_EQ(r.r.v[99].line, 199u);
}

// ---- parser: every error, with file and line ----------------------------

TEST(RulesParseError, UnknownActionNamesFileAndLine)
{
    EXPECT_EQ(error_of("# ok\n\naccelerate tcp\n"),
              "r.conf:3: unknown action 'accelerate' (a rule starts with "
              "accel or kernel)");
}

TEST(RulesParseError, UnknownKeyword)
{
    EXPECT_EQ(error_of("kernel tcp\naccel tcp lcoal *:80\n"),
              "r.conf:2: unknown keyword 'lcoal' (expected tcp, udp, role, "
              "local, remote or prog)");
}

TEST(RulesParseError, MissingValues)
{
    EXPECT_EQ(error_of("accel role"),
              "r.conf:1: 'role' needs a value (listen, connect, udp-send or "
              "udp-recv)");
    EXPECT_EQ(error_of("\naccel local # comment"),
              "r.conf:2: 'local' needs a value (ADDRESS[/LEN][:PORTS], * for "
              "any)");
    EXPECT_EQ(error_of("\n\naccel remote"),
              "r.conf:3: 'remote' needs a value (ADDRESS[/LEN][:PORTS], * for "
              "any)");
    EXPECT_EQ(error_of("accel prog"),
              "r.conf:1: 'prog' needs a value (a program name or pattern)");
}

TEST(RulesParseError, UnknownRole)
{
    EXPECT_EQ(error_of("kernel role accept"),
              "r.conf:1: unknown role 'accept' (expected listen, connect, "
              "udp-send or udp-recv)");
}

TEST(RulesParseError, GivenTwice)
{
    EXPECT_EQ(error_of("kernel tcp tcp"), "r.conf:1: 'tcp' given twice");
    EXPECT_EQ(error_of("kernel tcp udp"),
              "r.conf:1: tcp and udp in one rule: write one rule for each, or "
              "neither for both");
    EXPECT_EQ(error_of("kernel role listen role listen"),
              "r.conf:1: 'role' given twice");
    EXPECT_EQ(error_of("kernel local * local *:1"),
              "r.conf:1: 'local' given twice");
    EXPECT_EQ(error_of("kernel remote * remote *"),
              "r.conf:1: 'remote' given twice");
    EXPECT_EQ(error_of("kernel prog a prog b"), "r.conf:1: 'prog' given twice");
}

TEST(RulesParseError, BadAddress)
{
    EXPECT_EQ(error_of("kernel remote 10.0.0:53"),
              "r.conf:1: remote '10.0.0:53': bad address '10.0.0' (expected "
              "A.B.C.D, A.B.C.D/LEN, [IPV6], [IPV6]/LEN or *)");
    EXPECT_EQ(error_of("kernel remote 256.0.0.1"),
              "r.conf:1: remote '256.0.0.1': bad address '256.0.0.1' "
              "(expected A.B.C.D, A.B.C.D/LEN, [IPV6], [IPV6]/LEN or *)");
    EXPECT_EQ(error_of("kernel remote localhost"),
              "r.conf:1: remote 'localhost': bad address 'localhost' "
              "(expected A.B.C.D, A.B.C.D/LEN, [IPV6], [IPV6]/LEN or *)");
    EXPECT_EQ(error_of("kernel local :53"),
              "r.conf:1: local ':53': missing address (write *:53 for any "
              "address)");
}

TEST(RulesParseError, BadPrefix)
{
    EXPECT_EQ(error_of("kernel remote 10.0.0.0/33"),
              "r.conf:1: remote '10.0.0.0/33': bad prefix length '/33' "
              "(expected /0../32)");
    EXPECT_EQ(error_of("kernel remote 10.0.0.0/"),
              "r.conf:1: remote '10.0.0.0/': bad prefix length '/' (expected "
              "/0../32)");
    EXPECT_EQ(error_of("kernel remote 10.0.0.0/-1"),
              "r.conf:1: remote '10.0.0.0/-1': bad prefix length '/-1' "
              "(expected /0../32)");
    EXPECT_EQ(error_of("\nkernel remote 10.1.0.0/8:53"),
              "r.conf:2: remote '10.1.0.0/8:53': bad prefix: 10.1.0.0 has "
              "bits set outside /8 (did you mean 10.0.0.0/8?)");
}

TEST(RulesParseError, BadPortRange)
{
    EXPECT_EQ(error_of("kernel local *:65536"),
              "r.conf:1: local: bad port '65536' (expected 0..65535, "
              "LOW-HIGH or *)");
    EXPECT_EQ(error_of("kernel local *:http"),
              "r.conf:1: local: bad port 'http' (expected 0..65535, LOW-HIGH "
              "or *)");
    EXPECT_EQ(error_of("kernel local *:"),
              "r.conf:1: local: bad port '' (expected 0..65535, LOW-HIGH or "
              "*)");
    EXPECT_EQ(error_of("\n\n\nkernel local *:9000-8000"),
              "r.conf:4: local: bad port range '9000-8000' (the low port is "
              "above the high one)");
    EXPECT_EQ(error_of("kernel local *:80-"),
              "r.conf:1: local: bad port range '80-' (expected LOW-HIGH, each "
              "0..65535)");
    EXPECT_EQ(error_of("kernel local *:1-70000"),
              "r.conf:1: local: bad port range '1-70000' (expected LOW-HIGH, "
              "each 0..65535)");
    EXPECT_EQ(error_of("kernel remote 10.0.0.1:80:81"),
              "r.conf:1: remote: bad port '80:81' (expected 0..65535, "
              "LOW-HIGH or *)");
}

TEST(RulesParseError, RoleAndProtocolDisagree)
{
    EXPECT_EQ(error_of("accel udp role listen"),
              "r.conf:1: role listen is for tcp sockets, not udp");
    EXPECT_EQ(error_of("accel role connect udp"),
              "r.conf:1: role connect is for tcp sockets, not udp");
    EXPECT_EQ(error_of("accel tcp role udp-send"),
              "r.conf:1: role udp-send is for udp sockets, not tcp");
    EXPECT_EQ(error_of("accel tcp role udp-recv"),
              "r.conf:1: role udp-recv is for udp sockets, not tcp");
}

TEST(RulesParseError, SelectorsThatCanNeverMatch)
{
    EXPECT_EQ(error_of("kernel local *:1 remote *:2"),
              "r.conf:1: local and remote in one rule never match: local "
              "selects listen and udp-recv, remote selects connect and "
              "udp-send (write two rules)");
    EXPECT_EQ(error_of("kernel role connect local *:80"),
              "r.conf:1: local never matches role connect (no local address "
              "is chosen yet): use remote");
    EXPECT_EQ(error_of("kernel role udp-send local *:80"),
              "r.conf:1: local never matches role udp-send (no local address "
              "is chosen yet): use remote");
    EXPECT_EQ(error_of("kernel role listen remote 10.0.0.0/8"),
              "r.conf:1: remote never matches role listen (there is no peer "
              "yet): use local");
    EXPECT_EQ(error_of("kernel role udp-recv remote *"),
              "r.conf:1: remote never matches role udp-recv (there is no "
              "peer yet): use local");
}

TEST(RulesParseError, TooLongAndBinary)
{
    EXPECT_EQ(error_of("kernel prog " + std::string(128, 'a')),
              "r.conf:1: prog pattern longer than 127 characters");
    EXPECT_EQ(error_of("kernel prog " + std::string(127, 'a')), "");
    EXPECT_EQ(error_of("\nkernel " + std::string(300, 'x')),
              "r.conf:2: word longer than 255 characters");
    EXPECT_EQ(error_of(std::string("kernel tcp\nkernel\0tcp\n", 22)),
              "r.conf:2: NUL byte (not a text file?)");
}

TEST(RulesParseError, FirstErrorWinsAndTheFileNameIsTheCallers)
{
    Rules r("kernel tcp\nbogus\nalso bogus\n", "/etc/accel/rules.conf");
    EXPECT_EQ(r.rc, -EINVAL);
    EXPECT_STREQ(r.err, "/etc/accel/rules.conf:2: unknown action 'bogus' (a "
                        "rule starts with accel or kernel)");
}

TEST(RulesParseError, ShortErrorBufferIsTruncatedNotOverrun)
{
    pl_rules r{};
    char err[16];
    memset(err, 'Z', sizeof(err));
    const char text[] = "bogus";
    EXPECT_EQ(pl_rules_parse(text, 5, "file", &r, err, 12), -EINVAL);
    EXPECT_STREQ(err, "file:1: unk");
    EXPECT_EQ(err[12], 'Z');
}

// ---- matcher ----------------------------------------------------------

TEST(RulesMatch, FirstMatchWins)
{
    Rules r("kernel tcp role listen local *:8081\n"
            "accel  tcp role listen local *:8000-8100\n"
            "kernel tcp\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_LISTEN, "0.0.0.0", 8081),
              PL_RULE_KERNEL);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "0.0.0.0", 8081), 1u);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_LISTEN, "0.0.0.0", 8080),
              PL_RULE_ACCEL);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "0.0.0.0", 8080), 2u);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_LISTEN, "0.0.0.0", 8101),
              PL_RULE_KERNEL);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "0.0.0.0", 8101), 3u);
    EXPECT_EQ(act(r, PL_RULE_UDP, PL_RULE_UDP_RECV, "0.0.0.0", 8080),
              PL_RULE_NONE);
}

TEST(RulesMatch, PortRangeBoundsAreInclusive)
{
    Rules r("kernel local *:8000-8100");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_LISTEN, "1.2.3.4", 7999),
              PL_RULE_NONE);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_LISTEN, "1.2.3.4", 8000),
              PL_RULE_KERNEL);
    EXPECT_EQ(act(r, PL_RULE_UDP, PL_RULE_UDP_RECV, "1.2.3.4", 8100),
              PL_RULE_KERNEL);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_LISTEN, "1.2.3.4", 8101),
              PL_RULE_NONE);
}

TEST(RulesMatch, Prefixes)
{
    Rules r("kernel remote 10.0.0.0/8:53\n"
            "accel remote 192.168.1.7\n"
            "kernel remote 0.0.0.0/0:9\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(act(r, PL_RULE_UDP, PL_RULE_UDP_SEND, "10.255.1.2", 53),
              PL_RULE_KERNEL);
    EXPECT_EQ(act(r, PL_RULE_UDP, PL_RULE_UDP_SEND, "11.0.0.1", 53),
              PL_RULE_NONE);
    EXPECT_EQ(act(r, PL_RULE_UDP, PL_RULE_UDP_SEND, "10.0.0.1", 54),
              PL_RULE_NONE);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_CONNECT, "192.168.1.7", 1),
              PL_RULE_ACCEL);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_CONNECT, "192.168.1.8", 1),
              PL_RULE_NONE);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_CONNECT, "8.8.8.8", 9),
              PL_RULE_KERNEL);
}

TEST(RulesMatch, ProtocolAndRole)
{
    Rules r("kernel udp\naccel role listen\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(act(r, PL_RULE_UDP, PL_RULE_UDP_SEND, "1.1.1.1", 1),
              PL_RULE_KERNEL);
    EXPECT_EQ(act(r, PL_RULE_UDP, PL_RULE_UDP_RECV, "1.1.1.1", 1),
              PL_RULE_KERNEL);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_LISTEN, "1.1.1.1", 1), PL_RULE_ACCEL);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_CONNECT, "1.1.1.1", 1), PL_RULE_NONE);
}

TEST(RulesMatch, LocalSelectsBindsRemoteSelectsConnects)
{
    // A rule without a role but with `local` only matches decisions that
    // have a local endpoint (listen, udp-recv), and the other way round.
    Rules r("kernel local *:53\naccel remote *:80\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(act(r, PL_RULE_UDP, PL_RULE_UDP_RECV, "0.0.0.0", 53),
              PL_RULE_KERNEL);
    EXPECT_EQ(act(r, PL_RULE_UDP, PL_RULE_UDP_SEND, "9.9.9.9", 53),
              PL_RULE_NONE);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_CONNECT, "9.9.9.9", 80),
              PL_RULE_ACCEL);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_LISTEN, "0.0.0.0", 80), PL_RULE_NONE);
}

TEST(RulesMatch, ProgramGlobs)
{
    Rules r("kernel prog redis-cli\naccel prog ngin?\n"
            "kernel prog [ab]*\naccel prog *\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(
        line_of(r, PL_RULE_TCP, PL_RULE_CONNECT, "1.1.1.1", 1, "redis-cli"),
        1u);
    EXPECT_EQ(
        line_of(r, PL_RULE_TCP, PL_RULE_CONNECT, "1.1.1.1", 1, "redis-cli2"),
        4u);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "1.1.1.1", 1, "nginx"),
              2u);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "1.1.1.1", 1, "bash"),
              3u);
    // No program name known: no prog rule matches.
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "1.1.1.1", 1, nullptr),
              0u);
}

TEST(RulesMatch, FilteringForAProgramKeepsOrderAndDropsOthers)
{
    Rules r("kernel tcp prog redis*\n"
            "accel udp\n"
            "kernel prog nginx\n"
            "kernel role listen prog redis-server\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    pl_rules_for_prog(&r.r, "redis-server");
    ASSERT_EQ(r.r.n, 3u);
    EXPECT_EQ(r.r.v[0].line, 1u);
    EXPECT_EQ(r.r.v[1].line, 2u);
    EXPECT_EQ(r.r.v[2].line, 4u);
    // The kept rules now match without a program name.
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "0.0.0.0", 1, nullptr),
              1u);
    pl_rules_for_prog(&r.r, "other");
    EXPECT_EQ(r.r.n, 3u) << "patterns were cleared by the first filter";
}

TEST(RulesMatch, EmptyOrNullTableMatchesNothing)
{
    Rules r("");
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_LISTEN, "0.0.0.0", 80), PL_RULE_NONE);
    pl_rule_query q = {PL_RULE_TCP, PL_RULE_CONNECT, nullptr, nullptr, "x"};
    EXPECT_EQ(pl_rules_match(nullptr, &q), nullptr);
}

TEST(RulesMatch, RoleNames)
{
    EXPECT_STREQ(pl_rules_role_name(PL_RULE_LISTEN), "listen");
    EXPECT_STREQ(pl_rules_role_name(PL_RULE_CONNECT), "connect");
    EXPECT_STREQ(pl_rules_role_name(PL_RULE_UDP_SEND), "udp-send");
    EXPECT_STREQ(pl_rules_role_name(PL_RULE_UDP_RECV), "udp-recv");
    EXPECT_STREQ(pl_rules_role_name(PL_RULE_ANY_ROLE), "any");
}

// ---- decisions: rules on top of decide.h ------------------------------

TEST(RulesRoute, NoRulesIsTheBuiltInDecision)
{
    Rules r("");
    EXPECT_EQ(bind_r(r, SOCK_STREAM, "0.0.0.0", 80), PL_ROUTE_ACCEL_ANY);
    EXPECT_EQ(bind_r(r, SOCK_DGRAM, "10.200.0.2", 80), PL_ROUTE_ACCEL);
    EXPECT_EQ(bind_r(r, SOCK_STREAM, "127.0.0.1", 80), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_r(r, SOCK_STREAM, "10.200.0.1", 80), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect_r(r, SOCK_DGRAM, "10.200.0.1", 53), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_r(r, SOCK_STREAM, "8.8.8.8", 80), PL_ROUTE_KERNEL);
}

TEST(RulesRoute, KernelRuleOverridesBind)
{
    Rules r("kernel tcp role listen local *:8081\n"
            "kernel udp local 10.200.0.2:5000-5001\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    const pl_rule *hit = nullptr;
    EXPECT_EQ(bind_r(r, SOCK_STREAM, "0.0.0.0", 8081, &hit), PL_ROUTE_KERNEL);
    ASSERT_NE(hit, nullptr);
    EXPECT_EQ(hit->line, 1u);
    EXPECT_EQ(bind_r(r, SOCK_STREAM, "0.0.0.0", 8080, &hit),
              PL_ROUTE_ACCEL_ANY);
    EXPECT_EQ(hit, nullptr);
    EXPECT_EQ(bind_r(r, SOCK_DGRAM, "0.0.0.0", 8081), PL_ROUTE_ACCEL_ANY)
        << "a tcp rule does not select a udp socket";
    EXPECT_EQ(bind_r(r, SOCK_DGRAM, "10.200.0.2", 5001), PL_ROUTE_KERNEL);
    EXPECT_EQ(bind_r(r, SOCK_DGRAM, "0.0.0.0", 5001), PL_ROUTE_ACCEL_ANY)
        << "a wildcard bind is address 0.0.0.0, outside 10.200.0.2/32";
}

TEST(RulesRoute, AccelRuleCannotAccelerateWhatTheStackDoesNotOwn)
{
    Rules r("accel\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    const pl_rule *hit = nullptr;
    EXPECT_EQ(bind_r(r, SOCK_STREAM, "127.0.0.1", 80, &hit), PL_ROUTE_KERNEL);
    EXPECT_NE(hit, nullptr);
    EXPECT_EQ(connect_r(r, SOCK_STREAM, "127.0.0.1", 80), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_r(r, SOCK_STREAM, "8.8.8.8", 80), PL_ROUTE_KERNEL)
        << "no gateway: unroutable";
}

TEST(RulesRoute, KernelRuleOverridesConnect)
{
    Rules r("kernel tcp role connect remote 10.200.0.1:7001\n"
            "kernel udp remote 10.200.0.0/24:5002\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(connect_r(r, SOCK_STREAM, "10.200.0.1", 7001), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_r(r, SOCK_STREAM, "10.200.0.1", 7000), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect_r(r, SOCK_DGRAM, "10.200.0.9", 5002), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_r(r, SOCK_DGRAM, "10.200.0.9", 5003), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect_r(r, SOCK_STREAM, "10.200.0.9", 5002), PL_ROUTE_ACCEL);
}

TEST(RulesRoute, DnsStaysOnTheKernelUnlessAnAccelRuleSaysOtherwise)
{
    Rules none("kernel tcp role connect remote *:80\n");
    ASSERT_EQ(none.rc, 0) << none.err;
    EXPECT_EQ(connect_r(none, SOCK_DGRAM, "10.200.0.1", 53), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_r(none, SOCK_STREAM, "10.200.0.1", 53), PL_ROUTE_KERNEL);

    Rules r("accel udp role udp-send remote 10.200.0.1:53\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(connect_r(r, SOCK_DGRAM, "10.200.0.1", 53), PL_ROUTE_ACCEL);
    EXPECT_EQ(connect_r(r, SOCK_DGRAM, "10.200.0.3", 53), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_r(r, SOCK_STREAM, "10.200.0.1", 53), PL_ROUTE_KERNEL);
}

TEST(RulesRoute, NonInetAddressesAreNotDecided)
{
    Rules r("kernel\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    const pl_rule *hit = reinterpret_cast<const pl_rule *>(&r);
    EXPECT_EQ(pl_rules_route_bind(&r.r, SOCK_STREAM, (sockaddr *)&un,
                                  sizeof(un), &kNet, "app", &hit),
              PL_ROUTE_PASS);
    EXPECT_EQ(hit, nullptr);
    sockaddr_in s = sin("10.200.0.1", 80);
    EXPECT_EQ(pl_rules_route_connect(&r.r, SOCK_STREAM, (sockaddr *)&s, 4,
                                     &kNet, "app", &hit),
              PL_ROUTE_PASS)
        << "short address";
}

TEST(RulesRoute, CatchAllKernelRuleAfterAnAllowList)
{
    Rules r("accel prog app role listen local *:80\nkernel\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(bind_r(r, SOCK_STREAM, "0.0.0.0", 80), PL_ROUTE_ACCEL_ANY);
    EXPECT_EQ(bind_r(r, SOCK_STREAM, "0.0.0.0", 81), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_r(r, SOCK_STREAM, "10.200.0.1", 80), PL_ROUTE_KERNEL);
    EXPECT_EQ(connect_r(r, SOCK_DGRAM, "10.200.0.1", 80), PL_ROUTE_KERNEL);
}

// ---- IPv6 ---------------------------------------------------------------

TEST(RulesParse6, EndpointForms)
{
    Rules r("kernel local [fd00::]/8\n"
            "kernel remote fd00:200::1\n"
            "kernel local [::1]\n"
            "kernel remote [fd00::1]:80\n"
            "kernel remote [fd00:200::]/64:8000-8100\n"
            "kernel local [::]:*\n"
            "kernel remote fd00::/8\n"
            "kernel remote [::ffff:10.0.0.0]/104\n"
            "kernel remote ::1:80\n"
            "kernel local [::]/0");
    ASSERT_EQ(r.rc, 0) << r.err;
    ASSERT_EQ(r.r.n, 10u);
    EXPECT_EQ(str6(r.r.v[0].local.net), "fd00::");
    EXPECT_EQ(r.r.v[0].local.plen, 8);
    EXPECT_EQ(r.r.v[0].local.lo, 0);
    EXPECT_EQ(r.r.v[0].local.hi, 65535);
    EXPECT_EQ(str6(r.r.v[1].remote.net), "fd00:200::1");
    EXPECT_EQ(r.r.v[1].remote.plen, 128);
    EXPECT_EQ(str6(r.r.v[2].local.net), "::1");
    EXPECT_EQ(r.r.v[3].remote.plen, 128);
    EXPECT_EQ(r.r.v[3].remote.lo, 80);
    EXPECT_EQ(r.r.v[3].remote.hi, 80);
    EXPECT_EQ(r.r.v[4].remote.plen, 64);
    EXPECT_EQ(r.r.v[4].remote.lo, 8000);
    EXPECT_EQ(r.r.v[4].remote.hi, 8100);
    EXPECT_EQ(str6(r.r.v[5].local.net), "::");
    EXPECT_EQ(r.r.v[5].local.plen, 128) << "[::] is the wildcard only";
    EXPECT_EQ(r.r.v[6].remote.plen, 8);
    EXPECT_EQ(str6(r.r.v[7].remote.net), "::ffff:10.0.0.0");
    EXPECT_EQ(r.r.v[7].remote.plen, 104);
    EXPECT_EQ(str6(r.r.v[8].remote.net), str6(sin6("::1:80", 0).sin6_addr))
        << "without brackets, every colon is the address's";
    EXPECT_EQ(r.r.v[8].remote.hi, 65535);
    EXPECT_EQ(r.r.v[9].local.plen, 0);
}

TEST(RulesParse6, Errors)
{
    EXPECT_EQ(error_of("\n\nkernel remote [fd00::1"),
              "r.conf:3: remote '[fd00::1': bad address '[fd00::1' "
              "(expected [IPV6], [IPV6]/LEN, optionally :PORTS after it)");
    EXPECT_EQ(error_of("kernel remote [fd00::g]:80"),
              "r.conf:1: remote '[fd00::g]:80': bad address 'fd00::g' "
              "(expected A.B.C.D, A.B.C.D/LEN, [IPV6], [IPV6]/LEN or *)");
    EXPECT_EQ(error_of("kernel remote [10.0.0.1]:80"),
              "r.conf:1: remote '[10.0.0.1]:80': bad address '10.0.0.1' "
              "(expected A.B.C.D, A.B.C.D/LEN, [IPV6], [IPV6]/LEN or *)");
    EXPECT_EQ(error_of("kernel local [fd00::]/129"),
              "r.conf:1: local '[fd00::]/129': bad prefix length '/129' "
              "(expected /0../128)");
    EXPECT_EQ(error_of("accel\nkernel remote [fd00::1]/8:443"),
              "r.conf:2: remote '[fd00::1]/8:443': bad prefix: fd00::1 has "
              "bits set outside /8 (did you mean [fd00::]/8?)");
    EXPECT_EQ(error_of("kernel remote fd00::1/8"),
              "r.conf:1: remote 'fd00::1/8': bad prefix: fd00::1 has bits "
              "set outside /8 (did you mean fd00::/8?)");
    EXPECT_EQ(error_of("kernel remote [fd00::1]:99999"),
              "r.conf:1: remote: bad port '99999' (expected 0..65535, "
              "LOW-HIGH or *)");
    EXPECT_EQ(error_of("kernel remote [fd00::1]80"),
              "r.conf:1: remote '[fd00::1]80': bad address '[fd00::1]80' "
              "(expected [IPV6], [IPV6]/LEN, optionally :PORTS after it)");
    EXPECT_EQ(error_of("kernel remote []:80"),
              "r.conf:1: remote '[]:80': bad address '' (expected A.B.C.D, "
              "A.B.C.D/LEN, [IPV6], [IPV6]/LEN or *)");
}

TEST(RulesMatch6, NativeAddressesAndPorts)
{
    Rules r("kernel tcp remote [fd00:200::]/64:443\n"
            "accel  tcp remote [fd00::]/8\n"
            "kernel udp local [::1]\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_CONNECT, "fd00:200::1", 443), 1u);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_CONNECT, "fd00:200::1", 80), 2u);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_CONNECT, "fd12::1", 443), 2u);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_CONNECT, "2001:db8::1", 443), 0u);
    EXPECT_EQ(line_of(r, PL_RULE_UDP, PL_RULE_UDP_RECV, "::1", 5000), 3u);
    EXPECT_EQ(line_of(r, PL_RULE_UDP, PL_RULE_UDP_RECV, "::", 5000), 0u);
    // IPv6 rules never match IPv4 addresses.
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_CONNECT, "10.0.0.1", 443), 0u);
}

TEST(RulesMatch6, Ipv4RuleMatchesItsMappedForm)
{
    Rules r("kernel remote 10.0.0.0/8:53\n"
            "accel remote 0.0.0.0/0\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(line_of(r, PL_RULE_UDP, PL_RULE_UDP_SEND, "10.1.2.3", 53), 1u);
    EXPECT_EQ(line_of(r, PL_RULE_UDP, PL_RULE_UDP_SEND, "::ffff:10.1.2.3", 53),
              1u);
    EXPECT_EQ(line_of(r, PL_RULE_UDP, PL_RULE_UDP_SEND, "::ffff:11.1.2.3", 53),
              2u);
    // 0.0.0.0/0 is every IPv4 address, no native IPv6 one.
    EXPECT_EQ(line_of(r, PL_RULE_UDP, PL_RULE_UDP_SEND, "fd00::1", 53), 0u);
    EXPECT_EQ(line_of(r, PL_RULE_UDP, PL_RULE_UDP_SEND, "::a01:203", 53), 0u)
        << "::10.1.2.3 (v4-compatible) is not 10.1.2.3";
}

TEST(RulesMatch6, MappedPrefixMatchesIpv4)
{
    Rules r("kernel remote [::ffff:10.0.0.0]/104\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_CONNECT, "10.200.0.1", 80),
              PL_RULE_KERNEL);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_CONNECT, "::ffff:10.200.0.1", 80),
              PL_RULE_KERNEL);
    EXPECT_EQ(act(r, PL_RULE_TCP, PL_RULE_CONNECT, "11.0.0.1", 80),
              PL_RULE_NONE);
}

TEST(RulesMatch6, StarMatchesBothFamilies)
{
    Rules r("kernel tcp local *:9100\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "0.0.0.0", 9100), 1u);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "::", 9100), 1u);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "fd00::2", 9100), 1u);
    EXPECT_EQ(line_of(r, PL_RULE_TCP, PL_RULE_LISTEN, "fd00::2", 9101), 0u);
}

TEST(RulesMatch6, DualStackWildcardIsBothWildcards)
{
    Rules v4("kernel tcp local 0.0.0.0:80\n");
    Rules v6("kernel tcp local [::]:80\n");
    ASSERT_EQ(v4.rc, 0) << v4.err;
    ASSERT_EQ(v6.rc, 0) << v6.err;
    sockaddr_in6 any = sin6("::", 80);

    // A dual-stack socket's :: is 0.0.0.0 too; an IPV6_V6ONLY one's is not.
    EXPECT_NE(pl_rules_match_addr(&v4.r, SOCK_STREAM, true, (sockaddr *)&any,
                                  sizeof(any), true, "app"),
              nullptr);
    EXPECT_EQ(pl_rules_match_addr(&v4.r, SOCK_STREAM, true, (sockaddr *)&any,
                                  sizeof(any), false, "app"),
              nullptr);
    EXPECT_NE(pl_rules_match_addr(&v6.r, SOCK_STREAM, true, (sockaddr *)&any,
                                  sizeof(any), true, "app"),
              nullptr);
    EXPECT_NE(pl_rules_match_addr(&v6.r, SOCK_STREAM, true, (sockaddr *)&any,
                                  sizeof(any), false, "app"),
              nullptr);
    // 0.0.0.0 itself is not ::.
    sockaddr_in any4 = sin("0.0.0.0", 80);
    EXPECT_EQ(pl_rules_match_addr(&v6.r, SOCK_STREAM, true, (sockaddr *)&any4,
                                  sizeof(any4), true, "app"),
              nullptr);
}

TEST(RulesMatch6, MatchAddrRolesAndProg)
{
    Rules r("kernel udp role udp-send remote [fd00::53]:53 prog dig\n"
            "accel tcp role connect remote [fd00::]/16\n");
    ASSERT_EQ(r.rc, 0) << r.err;
    sockaddr_in6 dns = sin6("fd00::53", 53);
    const pl_rule *m = pl_rules_match_addr(
        &r.r, SOCK_DGRAM, false, (sockaddr *)&dns, sizeof(dns), false, "dig");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->line, 1u);
    EXPECT_EQ(pl_rules_match_addr(&r.r, SOCK_DGRAM, false, (sockaddr *)&dns,
                                  sizeof(dns), false, "curl"),
              nullptr);
    EXPECT_EQ(pl_rules_match_addr(&r.r, SOCK_DGRAM, true, (sockaddr *)&dns,
                                  sizeof(dns), false, "dig"),
              nullptr)
        << "bind is udp-recv, not udp-send";
    m = pl_rules_match_addr(&r.r, SOCK_STREAM, false, (sockaddr *)&dns,
                            sizeof(dns), false, "x");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->line, 2u);
}

TEST(RulesMatch6, AddrFromFamiliesAndLengths)
{
    pl_rule_addr ep;
    sockaddr_in6 s6 = sin6("fd00::1", 8080);
    sockaddr_in s4 = sin("10.1.2.3", 53);

    ASSERT_EQ(pl_rule_addr_from((sockaddr *)&s6, sizeof(s6), true, &ep), 0);
    EXPECT_EQ(str6(ep.addr), "fd00::1");
    EXPECT_EQ(ep.port, 8080);
    EXPECT_FALSE(ep.dual_any);
    ASSERT_EQ(pl_rule_addr_from((sockaddr *)&s6, 24, false, &ep), 0)
        << "the RFC 2133 length Linux takes";
    EXPECT_EQ(pl_rule_addr_from((sockaddr *)&s6, 23, false, &ep), -EINVAL);
    ASSERT_EQ(pl_rule_addr_from((sockaddr *)&s4, sizeof(s4), false, &ep), 0);
    EXPECT_EQ(str6(ep.addr), "::ffff:10.1.2.3");
    EXPECT_EQ(ep.port, 53);
    EXPECT_EQ(pl_rule_addr_from((sockaddr *)&s4, sizeof(s4) - 1, false, &ep),
              -EINVAL);
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    EXPECT_EQ(pl_rule_addr_from((sockaddr *)&un, sizeof(un), false, &ep),
              -EAFNOSUPPORT);
    EXPECT_EQ(pl_rule_addr_from(nullptr, 0, false, &ep), -EAFNOSUPPORT);
    EXPECT_EQ(pl_rules_match_addr(nullptr, SOCK_STREAM, true, (sockaddr *)&un,
                                  sizeof(un), false, "x"),
              nullptr);
}
