// Helpers shared by the runtime unit tests.
#ifndef RT_TEST_UTIL_H
#define RT_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

extern "C" {
#include "cfg.h"
}

// An environment array built from strings; owns the storage.
class Env
{
  public:
    Env(std::initializer_list<std::string> vars) : vars_(vars)
    {
        for (auto &v : vars_)
            ptrs_.push_back(const_cast<char *>(v.c_str()));
        ptrs_.push_back(nullptr);
    }
    char *const *
    envp() const
    {
        return ptrs_.data();
    }

  private:
    std::vector<std::string> vars_;
    std::vector<char *> ptrs_;
};

// The result of one base_cfg_parse() call; frees the config's strings.
inline std::vector<std::string> *&
warn_sink()
{
    static std::vector<std::string> *sink;
    return sink;
}

inline void
collect_warning(const char *line)
{
    if (warn_sink() != nullptr)
        warn_sink()->push_back(line);
}

struct Parsed {
    int rc;
    std::string err;
    std::vector<std::string> warnings;
    struct base_cfg cfg;

    explicit Parsed(const Env &env)
    {
        char buf[512];
        warn_sink() = &warnings;
        rc =
            base_cfg_parse(env.envp(), &cfg, buf, sizeof(buf), collect_warning);
        warn_sink() = nullptr;
        err = buf;
    }
    ~Parsed()
    {
        base_cfg_free(&cfg);
    }
    Parsed(const Parsed &) = delete;
    Parsed &operator=(const Parsed &) = delete;
};

// Read a whole file.
inline std::string
slurp(const std::string &path)
{
    std::string out;
    char buf[4096];
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0)
        return out;
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        out.append(buf, (size_t)n);
    close(fd);
    return out;
}

// A temporary file path, removed on destruction.
class TempPath
{
  public:
    TempPath()
    {
        char tmpl[] = "/tmp/rt_unit_XXXXXX";
        int fd = mkstemp(tmpl);
        if (fd >= 0)
            close(fd);
        path_ = tmpl;
    }
    ~TempPath()
    {
        unlink(path_.c_str());
    }
    const std::string &
    path() const
    {
        return path_;
    }

  private:
    std::string path_;
};

#endif
