#!/usr/bin/python3
"""Run a command with a time limit and write the CPU time it used.

usage: cpurun.py CPU_FILE TIMEOUT_S CMD [ARGS...]
CMD inherits stdin/stdout/stderr. When it outlives TIMEOUT_S it gets SIGTERM,
then SIGKILL 5 s later. CPU_FILE receives one JSON object: user and sys
seconds of CMD (every thread; `ip netns exec`, `env`, accel-run and taskset
all exec, so CMD's pid ends up being the measured program's), its exit status
and whether it timed out. Exit status: CMD's, or 124 on a timeout (timeout(1)).
"""
import json
import resource
import subprocess
import sys


def main():
    cpu_file, limit = sys.argv[1], float(sys.argv[2])
    argv = sys.argv[3:]
    timed_out = False
    try:
        proc = subprocess.Popen(argv)
    except OSError as e:
        print("cpurun: cannot run %s: %s" % (argv[0], e), file=sys.stderr)
        rc = 127
    else:
        try:
            rc = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            rc = 124
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(cpu_file, "w") as f:
        json.dump({"user_s": ru.ru_utime, "sys_s": ru.ru_stime, "rc": rc,
                   "timed_out": timed_out}, f)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
