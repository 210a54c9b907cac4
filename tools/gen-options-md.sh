#!/usr/bin/env bash
# gen-options-md.sh: the README's configuration table, generated from
# runtime/cfg_options.def (the one place options are defined).
#
#   gen-options-md.sh                 print the table
#   gen-options-md.sh --update FILE   rewrite the table between the markers
#                                     <!-- options:begin --> and <!-- options:end -->
#   gen-options-md.sh --check FILE    exit 1 when FILE's table is out of date
set -eu
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
DEF=${ACCEL_OPTIONS_DEF:-$REPO/runtime/cfg_options.def}
exec python3 - "$DEF" "$@" <<'PY'
import re, sys

def parse(path):
    """Yield the argument lists of every RT_OPT(...) row of the .def file."""
    text = open(path).read()
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    pos = 0
    while True:
        m = re.search(r'\bRT_OPT\(', text[pos:])
        if not m:
            return
        i = pos + m.end()
        args, cur, depth, strings = [], '', 0, []
        while i < len(text):
            c = text[i]
            if c == '"':
                j = i + 1
                while text[j] != '"':
                    j += 2 if text[j] == '\\' else 1
                strings.append(text[i + 1:j])
                cur += '\0'           # marks "this argument is a string"
                i = j + 1
                continue
            if c == '(':
                depth += 1
            elif c == ')' and depth > 0:
                depth -= 1
            elif c in ',)' and depth == 0:
                a = cur.strip()
                args.append(''.join(strings) if '\0' in a else a)
                cur, strings = '', []
                if c == ')':
                    break
                i += 1
                continue
            cur += c
            i += 1
        pos = i
        yield args

def cell(s):
    return s.replace('|', '\\|')

def table(path):
    rows = ['| Variable | Type | Default | Range or values | Description |',
            '|---|---|---|---|---|']
    for name, _field, typ, default, lo, hi, doc in parse(path):
        if typ == 'u32':
            rng, default = f'{lo} .. {hi}', default
        elif typ == 'u32w':
            rng, typ = f'{lo} .. {hi}, or `{default}`', 'u32'
        elif typ == 'enum':
            rng = ', '.join(f'`{w}`' for w in lo.split('|'))
        elif typ == 'bool':
            rng = '0/1 (also yes/no, on/off, true/false)'
        else:
            rng = 'text'
        d = f'`{default}`' if default != '' else '(empty)'
        rows.append(f'| `{name}` | {typ} | {d} | {cell(rng)} | {cell(doc)} |')
    return '\n'.join(rows) + '\n'

BEGIN, END = '<!-- options:begin -->', '<!-- options:end -->'
path, args = sys.argv[1], sys.argv[2:]
tab = table(path)
if not args:
    sys.stdout.write(tab)
    sys.exit(0)
if len(args) != 2 or args[0] not in ('--update', '--check'):
    sys.exit('usage: gen-options-md.sh [--update|--check FILE]')
doc = open(args[1]).read()
if BEGIN not in doc or END not in doc:
    sys.exit(f'{args[1]}: no {BEGIN} ... {END} markers')
head, rest = doc.split(BEGIN, 1)
_, tail = rest.split(END, 1)
new = head + BEGIN + '\n' + tab + END + tail
if args[0] == '--check':
    if new != doc:
        sys.exit(f'{args[1]}: the options table is out of date with '
                 f'{path}: run tools/gen-options-md.sh --update {args[1]}')
    sys.exit(0)
if new != doc:
    open(args[1], 'w').write(new)
PY
