#!/usr/bin/env python3
"""Writes the tables of register thunks: `@convention(c)` entries, one per count of integer
argument registers (2-5: receiver, selector, up to three arguments), that a trampoline slot
jumps to with its context in the next register. C cannot take a Swift closure's context
otherwise, and a `@convention(c)` closure captures nothing, so each count is its own literal.
One table, below; each table is written between the marker lines of the file that uses it
(its callee is private there). CI runs this script with --check, which fails when a table
differs from what the script gives.

    scripts/generate-register-thunks.py           rewrite the tables
    scripts/generate-register-thunks.py --check   exit 1 if a table is out of date
"""
import sys

import generated

COUNTS = range(2, 6)
DOUBLES = "(d0, d1, d2, d3, d4, d5, d6, d7)"


def words(n):
    return [f"a{i}" for i in range(n)]


def padded(n):
    return ", ".join(words(n) + ["0"] * (5 - n))


def entry(params, body, signature, indent="    "):
    """The code address of one `@convention(c)` closure literal."""
    return (f"{indent}CFunction.address(of: {{ ({params}) in\n{indent}    {body}\n"
            f"{indent}}} as {signature}),")


def integer_table(name, doc, callee, context, returns, convert):
    lines = [*doc, f"nonisolated(unsafe) private let {name}: [UnsafeRawPointer] = ["]
    for n in COUNTS:
        args = ", ".join(["UInt64"] * n)
        call = f"{callee}({context}!, {padded(n)})"
        lines.append(entry(", ".join(words(n) + [context]), convert(call),
                           f"@convention(c) ({args}, UnsafeRawPointer?) -> {returns}"))
    lines.append("]")
    return lines


def word_thunks():
    rows = [("UInt64", lambda c: c), ("Double", lambda c: f"Double(bitPattern: {c})"),
            ("Float", lambda c: f"Float(bitPattern: UInt32(truncatingIfNeeded: {c}))")]
    lines = ["/// Thunks by register count (2-5: receiver, selector, up to three arguments), for integer,",
             "/// double and float returns; the slot puts this object in the next integer register.",
             "nonisolated(unsafe) private let wordThunks: [[UnsafeRawPointer]] = ["]
    for returns, convert in rows:
        lines.append("    [")
        for n in COUNTS:
            args = ", ".join(["UInt64"] * n)
            call = f"callWordBody(c!, {padded(n)})"
            lines.append(entry(", ".join(words(n) + ["c"]), convert(call),
                               f"@convention(c) ({args}, UnsafeRawPointer?) -> {returns}", indent="        "))
        lines.append("    ],")
    lines.append("]")
    return lines


def register_hook_entries():
    lines = []
    for n in COUNTS:
        args = ", ".join(["UInt64"] * n)
        lines.append(f"private typealias RegisterEntry{n} = @convention(c) ({args}, UnsafeRawPointer?,")
        lines.append("    Double, Double, Double, Double, Double, Double, Double, Double) -> sf_tramp_ret")
    lines += ["",
              "/// Integer- and SSE-register entries by integer register count (2-5): every argument register",
              "/// is taken (unused ones carry whatever the caller left), the return goes out in %rax and %xmm0.",
              "nonisolated(unsafe) private let registerHookEntries: [UnsafeRawPointer] = ["]
    for n in COUNTS:
        params = ", ".join(words(n) + ["h", DOUBLES[1:-1]])
        body = f"enterRegisters(h!, ({padded(n)}), {DOUBLES})"
        lines.append(entry(params, body, f"RegisterEntry{n}"))
    lines.append("]")
    return lines


TABLES = {
    "wordThunks": ("Sources/DynamicRuntime/Model/ClosureIMP+WordBody.swift", word_thunks),
    "registerThunks": ("Sources/DynamicRuntime/Model/ClosureIMP.swift", lambda: integer_table(
        "registerThunks",
        ["/// The register-class thunks: (integer argument registers…, this object) for signatures whose",
         "/// arguments are all integer scalars in registers, by count of registers (2-5)."],
        "callBody", "c", "UInt64", lambda c: c)),
    "integerHookEntries": ("Sources/DynamicRuntime/Hooks/HookEntry.swift", lambda: integer_table(
        "integerHookEntries",
        ["/// Integer-register entries by register count (2-5): (arguments…, hook) -> %rax."],
        "enterInts", "h", "UInt64", lambda c: c)),
    "registerHookEntries": ("Sources/DynamicRuntime/Hooks/HookEntry.swift", register_hook_entries),
}


def begin(name):
    return f"// Written by scripts/generate-register-thunks.py ({name}): edit the script, not these lines."


def end(name):
    return f"// End of {name}."


def rewrite(text, name, lines):
    first, last = begin(name), end(name)
    if text.count(first) != 1 or text.count(last) != 1:
        sys.exit(f"generate-register-thunks: the markers of {name} are missing or repeated")
    head, rest = text.split(first + "\n")
    _, tail = rest.split(last + "\n")
    return head + first + "\n" + "\n".join(lines) + "\n" + last + "\n" + tail


def main():
    texts = {}
    for name, (path, make) in TABLES.items():
        texts[path] = rewrite(texts[path] if path in texts else generated.read(path), name, make())
    generated.update("generate-register-thunks", texts)


if __name__ == "__main__":
    main()
