#!/usr/bin/env bash
# gen-options-md.sh: the configuration tables of README.md (brief: name,
# default, the description's first clause) and docs/OPTIONS.md (full),
# generated from base/cfg_options.def (the one place options are
# defined).
#
#   gen-options-md.sh [--brief]       print the full (or brief) table
#   gen-options-md.sh --update FILE   rewrite the tables between the markers
#                                     <!-- options:begin --> .. <!-- options:end -->
#                                     (full) and <!-- options-brief:begin -->
#                                     .. <!-- options-brief:end --> (brief)
#   gen-options-md.sh --check FILE    exit 1 when a table of FILE is out of date
#   gen-options-md.sh --man IN OUT    write IN to OUT with its line
#                                     `.\" OPTIONS-TABLE` replaced by every
#                                     option in roff (.TP paragraphs): the
#                                     OPTIONS section of accel(7), made at
#                                     build time (docs/man/CMakeLists.txt)
set -eu
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
DEF=${ACCEL_OPTIONS_DEF:-$REPO/base/cfg_options.def}
exec python3 - "$DEF" "$@" <<'PY'
import re, sys

def parse(path):
    """Yield the argument lists of every BASE_OPT(...) row of the .def file."""
    text = open(path).read()
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    pos = 0
    while True:
        m = re.search(r'\bBASE_OPT\(', text[pos:])
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

def brief(doc):
    """The description's first clause: up to its first '; ', ': ', ', e.g.',
    ' (' or '. ', when that leaves enough to say what the option is."""
    cut = len(doc)
    for sep, least in (('; ', 15), (': ', 15), (', e.g.', 15), (' (', 25), ('. ', 15)):
        i = doc.find(sep)
        if least <= i < cut:
            cut = i
    return doc[:cut]

def brief_table(path):
    rows = ['| Variable | Default | What |', '|---|---|---|']
    for name, _field, typ, default, lo, hi, doc in parse(path):
        d = f'`{default}`' if default != '' else ''
        rows.append(f'| `{name}` | {d} | {cell(brief(doc))} |')
    return '\n'.join(rows) + '\n'

def roff(s):
    """Text for a roff line: backslashes escaped, a leading hyphen (an
    option such as --no-huge) as a minus, never a control character first."""
    s = s.replace('\\', '\\e')
    s = re.sub(r'(?<![A-Za-z0-9])-', r'\\-', s)
    return '\\&' + s if s[:1] in ('.', "'") else s

def man(path):
    out = []
    for name, _field, typ, default, lo, hi, doc in parse(path):
        if typ == 'u32':
            what = f'an integer, {lo} .. {hi}'
        elif typ == 'u32w':
            what = f'an integer, {lo} .. {hi}, or \\fB{roff(default)}\\fP'
        elif typ == 'enum':
            what = 'one of ' + ', '.join(f'\\fB{roff(w)}\\fP' for w in lo.split('|'))
        elif typ == 'bool':
            what = '0 or 1 (also yes/no, on/off, true/false)'
        else:
            what = 'text'
        d = f'\\fB{roff(default)}\\fP' if default != '' else 'empty'
        end = '' if doc.endswith('.') else '.'
        out += ['.TP', f'.B {name}', roff(doc) + end, '.br',
                f'Value: {what}; default: {d}.']
    return '\n'.join(out) + '\n'

MARKS = {'options': table, 'options-brief': brief_table}
path, args = sys.argv[1], sys.argv[2:]
if not args or args == ['--brief']:
    sys.stdout.write((brief_table if args else table)(path))
    sys.exit(0)
if len(args) == 3 and args[0] == '--man':
    MARK = '.\\" OPTIONS-TABLE\n'
    lines = open(args[1]).readlines()
    if MARK not in lines:
        sys.exit(f'{args[1]}: no line {MARK.strip()!r}')
    text = ''.join(man(path) if l == MARK else l for l in lines)
    open(args[2], 'w').write(text)
    sys.exit(0)
if len(args) != 2 or args[0] not in ('--update', '--check'):
    sys.exit('usage: gen-options-md.sh [--brief] | [--update|--check FILE] | --man IN OUT')
doc = open(args[1]).read()
new, found = doc, 0
for mark, make in MARKS.items():
    BEGIN, END = f'<!-- {mark}:begin -->', f'<!-- {mark}:end -->'
    if BEGIN not in new or END not in new:
        continue
    found += 1
    head, rest = new.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + BEGIN + '\n' + make(path) + END + tail
if not found:
    sys.exit(f'{args[1]}: no <!-- options:begin --> or <!-- options-brief:begin --> '
             'markers')
if args[0] == '--check':
    if new != doc:
        sys.exit(f'{args[1]}: the options table is out of date with '
                 f'{path}: run tools/gen-options-md.sh --update {args[1]}')
    sys.exit(0)
if new != doc:
    open(args[1], 'w').write(new)
PY
