// Profiles (ACCEL_PROFILE) and base_cfg_explain: precedence default <
// profile < environment (< forced profile), the source of every setting,
// and one "file:line: ..." error for each kind of bad profile line.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "base_test_util.h"

namespace
{

// A profile file with the given text, removed on destruction.
class Profile
{
  public:
    explicit Profile(const std::string &text, const char *name = "test")
    {
        char tmpl[] = "/tmp/rt_prof_XXXXXX";
        dir_ = mkdtemp(tmpl);
        path_ = dir_ + "/" + name + ".conf";
        int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        EXPECT_GE(fd, 0);
        EXPECT_EQ(write(fd, text.data(), text.size()), (ssize_t)text.size());
        close(fd);
    }
    ~Profile()
    {
        unlink(path_.c_str());
        rmdir(dir_.c_str());
    }
    const std::string &
    path() const
    {
        return path_;
    }
    std::string
    env() const
    {
        return "ACCEL_PROFILE=" + path_;
    }

  private:
    std::string dir_, path_;
};

std::string
check_err(const std::string &path)
{
    char err[512] = "x";
    int rc = base_cfg_profile_check(path.c_str(), err, sizeof(err));
    return rc == 0 ? "" : err;
}

struct Row {
    std::string value, source;
};

// base_cfg_explain's output, by option name.
struct Explained {
    int rc;
    std::string err, text;
    std::map<std::string, Row> rows;
    std::vector<std::string> order;

    explicit Explained(const Env &env)
    {
        TempPath out;
        char buf[512] = "";
        int fd = open(out.path().c_str(), O_WRONLY | O_TRUNC);
        rc = base_cfg_explain(env.envp(), fd, buf, sizeof(buf));
        close(fd);
        err = buf;
        text = slurp(out.path());
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            // "NAME=value", padded, then the source (the values of these
            // tests have no spaces).
            size_t eq = line.find('='), sp = line.find(' ', eq);
            if (eq == std::string::npos || sp == std::string::npos)
                continue;
            std::string name = line.substr(0, eq);
            Row r;
            r.value = line.substr(eq + 1, sp - eq - 1);
            r.source = line.substr(line.find_first_not_of(' ', sp));
            rows[name] = r;
            order.push_back(name);
        }
    }
};

} // namespace

TEST(CfgProfile, ValuesApplyBelowTheEnvironment)
{
    Profile p("# comment\n"
              "\n"
              "ACCEL_POLL_USEC=7\n"
              "  ACCEL_MTU = 9000  \n"
              "ACCEL_TX_DEFER=0\r\n"
              "ACCEL_EAL_ARGS=\"--a b\"\n");
    Parsed q(Env{p.env(), "ACCEL_MTU=1400"});
    ASSERT_EQ(q.rc, 0) << q.err;
    EXPECT_EQ(q.cfg.poll_usec, 7u);
    EXPECT_EQ(q.cfg.mtu, 1400u); // the environment wins
    EXPECT_FALSE(q.cfg.tx_defer);
    EXPECT_STREQ(q.cfg.eal_args, "--a b"); // quotes dropped
    EXPECT_EQ(q.cfg.burst, 32u);           // default
    EXPECT_TRUE(q.warnings.empty());
}

TEST(CfgProfile, ForcedProfileWinsOverTheEnvironment)
{
    Profile p("ACCEL_MTU=9000\n");
    Parsed q(Env{p.env(), "ACCEL_MTU=1400", "ACCEL_PROFILE_FORCE=1",
                 "ACCEL_BURST=64"});
    ASSERT_EQ(q.rc, 0) << q.err;
    EXPECT_EQ(q.cfg.mtu, 9000u);
    EXPECT_EQ(q.cfg.burst, 64u); // not in the profile: the environment's
    // A value the forced profile replaces is never used, so not checked.
    Parsed r(Env{p.env(), "ACCEL_MTU=abc", "ACCEL_PROFILE_FORCE=yes"});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.cfg.mtu, 9000u);
}

TEST(CfgProfile, TcpNodelayDefaultsOffAndProfileSetsIt)
{
    Parsed d(Env{});
    EXPECT_FALSE(d.cfg.tcp_nodelay);
    Profile p("ACCEL_TCP_NODELAY=1\n");
    Parsed q(Env{p.env()});
    ASSERT_EQ(q.rc, 0) << q.err;
    EXPECT_TRUE(q.cfg.tcp_nodelay);
}

TEST(CfgProfile, ExplainGivesEverySettingAndItsSource)
{
    Profile p("# latency-ish\n"
              "ACCEL_POLL_USEC=100000\n"
              "ACCEL_MTU=9000\n"
              "ACCEL_TX_DEFER=0\n",
              "mine");
    Explained e(Env{p.env(), "ACCEL_MTU=1400", "ACCEL_STATS=2"});
    ASSERT_EQ(e.rc, 0) << e.err;
    // Every option of cfg_options.def once, in its order.
    TempPath list;
    int fd = open(list.path().c_str(), O_WRONLY | O_TRUNC);
    base_cfg_list_options(fd);
    close(fd);
    std::istringstream in(slurp(list.path()));
    std::vector<std::string> names;
    for (std::string line; std::getline(in, line);)
        if (line.rfind("ACCEL_", 0) == 0)
            names.push_back(line.substr(0, line.find(' ')));
    EXPECT_EQ(e.order, names);

    std::string at = " (" + p.path() + ":";
    EXPECT_EQ(e.rows["ACCEL_POLL_USEC"].value, "100000");
    EXPECT_EQ(e.rows["ACCEL_POLL_USEC"].source, "profile mine" + at + "2)");
    EXPECT_EQ(e.rows["ACCEL_TX_DEFER"].value, "0");
    EXPECT_EQ(e.rows["ACCEL_TX_DEFER"].source, "profile mine" + at + "4)");
    EXPECT_EQ(e.rows["ACCEL_MTU"].value, "1400");
    EXPECT_EQ(e.rows["ACCEL_MTU"].source, "environment");
    EXPECT_EQ(e.rows["ACCEL_STATS"].value, "2");
    EXPECT_EQ(e.rows["ACCEL_STATS"].source, "environment");
    EXPECT_EQ(e.rows["ACCEL_BURST"].value, "32");
    EXPECT_EQ(e.rows["ACCEL_BURST"].source, "default");
    EXPECT_EQ(e.rows["ACCEL_DRIVER"].value, "auto");
    EXPECT_EQ(e.rows["ACCEL_DRIVER"].source, "default");
    EXPECT_EQ(e.rows["ACCEL_PROFILE"].value, p.path());
    EXPECT_EQ(e.rows["ACCEL_PROFILE"].source, "environment");

    Explained f(Env{p.env(), "ACCEL_MTU=1400", "ACCEL_PROFILE_FORCE=1"});
    ASSERT_EQ(f.rc, 0) << f.err;
    EXPECT_EQ(f.rows["ACCEL_MTU"].value, "9000");
    EXPECT_EQ(f.rows["ACCEL_MTU"].source,
              "forced profile mine" + at +
                  "3), over environment ACCEL_MTU=1400");
    // Forced, but not in the environment: an ordinary profile value.
    EXPECT_EQ(f.rows["ACCEL_POLL_USEC"].source, "profile mine" + at + "2)");
}

TEST(CfgProfile, ExplainWithoutProfileIsDefaultsAndEnvironment)
{
    Explained e(Env{"ACCEL_POLL_USEC=5", "OTHER=1"});
    ASSERT_EQ(e.rc, 0) << e.err;
    for (auto &kv : e.rows) {
        if (kv.first == "ACCEL_POLL_USEC")
            EXPECT_EQ(kv.second.source, "environment");
        else
            EXPECT_EQ(kv.second.source, "default") << kv.first;
    }
    EXPECT_EQ(e.rows["ACCEL_POLL_USEC"].value, "5");
}

TEST(CfgProfile, ExplainReportsAnErrorAndWritesNothing)
{
    Explained e(Env{"ACCEL_MTU=1"});
    EXPECT_EQ(e.rc, -EINVAL);
    EXPECT_NE(e.err.find("ACCEL_MTU=1"), std::string::npos);
    EXPECT_EQ(e.text, "");
}

TEST(CfgProfile, BadLinesNameFileAndLine)
{
    struct {
        const char *text, *want;
    } cases[] = {
        {"ACCEL_POLL_USEC=1\n# c\nACCEL_TX_DEFR=1\n",
         ":3: unknown option ACCEL_TX_DEFR; did you mean ACCEL_TX_DEFER?"},
        {"POLL_USEC=1\n", ":1: unknown option POLL_USEC; did you mean "
                          "ACCEL_POLL_USEC?"},
        {"FROBNICATE=1\n", ":1: unknown option FROBNICATE; `accel-run "
                           "--list-options` lists the known ones"},
        {"\nACCEL_POLL_USEC=abc\n",
         ":2: ACCEL_POLL_USEC=abc: not a number; set ACCEL_POLL_USEC to a "
         "whole number from 0 to 10000000"},
        {"ACCEL_TX_DEFER=maybe\n", ":1: ACCEL_TX_DEFER=maybe: not a boolean"},
        {"ACCEL_MTU=1500\nACCEL_MTU=9000\n",
         ":2: ACCEL_MTU is set again (first at line 1)"},
        {"ACCEL_MTU 1500\n",
         ":1: expected NAME=VALUE or a # comment, got \"ACCEL_MTU 1500\""},
        {"ACCEL_PROFILE=/x.conf\n", ":1: ACCEL_PROFILE cannot be set in a "
                                    "profile"},
        {"ACCEL_PROFILE_FORCE=1\n", ":1: ACCEL_PROFILE_FORCE cannot be set"},
        {"ACCEL_MTU=1500 # a trailing comment is part of the value\n",
         ":1: ACCEL_MTU=1500 # a trailing comment is part of the value: not "
         "a number"},
    };
    for (auto &c : cases) {
        Profile p(c.text);
        std::string err = check_err(p.path());
        EXPECT_EQ(err.rfind(p.path() + c.want, 0), 0u)
            << "profile:\n"
            << c.text << "error: " << err;
        EXPECT_EQ(err.find('\n'), std::string::npos);
        // The library gets the same error and runs on the kernel.
        Parsed q(Env{p.env()});
        EXPECT_EQ(q.rc, -EINVAL);
        EXPECT_EQ(q.err, err);
    }
}

TEST(CfgProfile, UnreadableOrNamedProfiles)
{
    std::string err = check_err("/nonexistent/accel/x.conf");
    EXPECT_EQ(err.rfind("/nonexistent/accel/x.conf: cannot read the profile: "
                        "No such file or directory",
                        0),
              0u)
        << err;
    err = check_err("/tmp");
    EXPECT_NE(err.find("/tmp: cannot read the profile"), std::string::npos)
        << err;
    // A bare name is accel-run's to resolve: the library asks for a path.
    Parsed q(Env{"ACCEL_PROFILE=latency"});
    EXPECT_EQ(q.rc, -EINVAL);
    EXPECT_EQ(q.err.rfind("ACCEL_PROFILE=latency: not a path; run the "
                          "program with `accel-run --profile latency`",
                          0),
              0u)
        << q.err;
    // Empty: no profile.
    Parsed e(Env{"ACCEL_PROFILE="});
    EXPECT_EQ(e.rc, 0) << e.err;
}

TEST(CfgProfile, EmptyAndCommentOnlyProfilesAreValid)
{
    Profile p("# nothing but comments\n   # indented\n\n\t\n");
    EXPECT_EQ(check_err(p.path()), "");
    Parsed q(Env{p.env()});
    EXPECT_EQ(q.rc, 0) << q.err;
    EXPECT_EQ(q.cfg.mtu, 1500u);
}

TEST(CfgProfile, UnknownEnvironmentNamesStillWarnOnce)
{
    Profile p("ACCEL_MTU=9000\n");
    Parsed q(Env{p.env(), "ACCEL_POLL_USECS=5"});
    ASSERT_EQ(q.rc, 0) << q.err;
    ASSERT_EQ(q.warnings.size(), 1u);
    EXPECT_NE(q.warnings[0].find("ACCEL_POLL_USECS"), std::string::npos);
}
