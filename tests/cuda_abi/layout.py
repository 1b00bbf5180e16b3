#!/usr/bin/env python3
"""Writes a C program that prints what culeak's CUDA declarations (src/cuda/*.h) define:
the value of every enumerator and numeric macro, the size and alignment of every struct
and union with the offset and size of each member (nested ones by path), and the name
each unversioned macro maps to. tests/checks/cuda_abi.sh compiles it once against those
headers and once against the CUDA toolkit's, and compares the two outputs.

    layout.py HEADER... > layout.c
"""
import re
import sys

def strip(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)

def definitions(text):
    """The part of a header that CULEAK_CUDA_DECLARATIONS_ONLY leaves out."""
    m = re.search(r'#ifndef CULEAK_CUDA_DECLARATIONS_ONLY\n(.*?)#endif /\* CULEAK_CUDA_DECLARATIONS_ONLY \*/',
                  text, flags=re.S)
    return m.group(1) if m else ''

def walk(code, out):
    """Records enumerators, records (with member paths) from C definitions."""
    code = '\n'.join(l for l in code.split('\n') if not l.lstrip().startswith('#'))
    tokens = re.findall(r'[{};]|[^{};]+', code)
    stack = []  # [kind, type expression or None, members list, path prefix]
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == '{':
            head = tokens[i - 1].split() if i and tokens[i - 1] not in '{};' else []
            kind = head[0] if head else ''
            tag = head[1] if len(head) > 1 else None
            stack.append([kind, f'{kind} {tag}' if tag else None, []])
        elif t == '}':
            kind, typ, members = stack.pop()
            name = tokens[i + 1].strip() if i + 1 < len(tokens) and tokens[i + 1] not in '{};' else ''
            if kind == 'enum':
                pass
            elif not stack:
                out['records'].append((typ, members))
            else:
                parent = stack[-1][2]
                parent.append(name)
                parent.extend(f'{name}.{m}' for m in members)
                if typ:  # a tagged nested record is a record of its own too
                    out['records'].append((typ, members))
            if name:
                i += 1
        elif t == ';':
            pass
        elif stack and stack[-1][0] == 'enum':
            for item in t.split(','):
                if '=' in item:
                    out['constants'].append(item.split('=')[0].strip())
        elif stack and i + 1 < len(tokens) and tokens[i + 1] == ';':
            decl = ' '.join(t.split())
            m = re.search(r'\(\s*\*\s*(\w+)\s*\)', decl) or re.search(r'(\w+)\s*(\[[^\]]*\])*\s*$', decl)
            stack[-1][2].append(m.group(1))
        i += 1

def main(paths):
    out = {'constants': [], 'records': [], 'maps': []}
    for p in paths:
        raw = open(p).read()
        text, defs = strip(raw), strip(definitions(raw))
        walk(defs, out)
        for name, value in re.findall(r'^#define[ \t]+(\w+)[ \t]+(\S.*)$', defs, flags=re.M):
            out['constants'].append(name)
        out['maps'] += re.findall(r'^#define[ \t]+(cu\w+)[ \t]+cu\w+[ \t]*$', text, flags=re.M)
    print('#include <stddef.h>\n#include <stdio.h>\n#include "layout_headers.h"\n')
    print('#define NAME_(x) #x\n#define NAME(x) NAME_(x)\n')
    print('int main(void)\n{')
    for c in out['constants']:
        print(f'    printf("value %s %lld\\n", "{c}", (long long)({c}));')
    for typ, members in out['records']:
        print(f'    printf("size %s %zu align %zu\\n", "{typ}", sizeof({typ}), _Alignof({typ}));')
        for m in members:
            print(f'    printf("member %s.%s offset %zu size %zu\\n", "{typ}", "{m}", offsetof({typ}, {m}), '
                  f'sizeof(((({typ} *)0)->{m})));')
    for m in out['maps']:
        print(f'    printf("maps %s %s\\n", "{m}", NAME({m}));')
    print('    return 0;\n}')

main(sys.argv[1:])
