#!/usr/bin/python3
"""Parse one `wrk --latency` output into a TSV row for bench/http/report.py.

usage: wrkparse.py WRK_OUTPUT MODE CONNS KEEPALIVE SERVER_CPU_TICKS
prints: mode conns keepalive rps p50_us p99_us requests errors cpu_ticks
(errors: total of wrk's "Socket errors" counters plus non-2xx/3xx).
"""
import re
import sys

UNITS = {"us": 1.0, "ms": 1000.0, "s": 1e6, "m": 60e6}


def to_us(text):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text)
    if not m:
        raise ValueError("bad latency %r" % text)
    return float(m.group(1)) * UNITS[m.group(2)]


def main():
    path, mode, conns, keepalive, ticks = sys.argv[1:6]
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", text).group(1))
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    pct = dict(re.findall(r"^\s+(\d+)%\s+(\S+)$", text, re.M))
    errors = 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        errors += sum(int(x) for x in m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        errors += int(m.group(1))
    print("\t".join([mode, conns, keepalive, "%.1f" % rps, "%.1f" % to_us(pct["50"]),
                     "%.1f" % to_us(pct["99"]), str(requests), str(errors), ticks]))


if __name__ == "__main__":
    main()
