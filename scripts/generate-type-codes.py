#!/usr/bin/env python3
"""Writes Swift's side of the scalar type-code table from its one source, the X-macro in
CDynamicRuntime/internal/sf_type_codes.h (character, key code, libffi type, TypeEncoding case).
The file it writes is checked in and CI runs this script with --check, which fails when the
file differs from what the table gives.

    scripts/generate-type-codes.py           rewrite the file
    scripts/generate-type-codes.py --check   exit 1 if the file is out of date
"""
import re
import sys

import generated

TABLE = "CDynamicRuntime/internal/sf_type_codes.h"
OUTPUT = "Sources/DynamicRuntime/Model/TypeEncoding+Codes.swift"
ROW = re.compile(r"^SF_TYPE_CODE\('(.)', (\d+), (\w+), (\w+)\)$")
# TypeEncoding's cases that are no row of the table: they take their codes from a row's.
NOT_ROWS = ".structure, .block, .array"


def rows():
    out = []
    for line in generated.read(TABLE).splitlines():
        if not line.startswith("SF_TYPE_CODE("):
            continue
        m = ROW.match(line.strip())
        if not m:
            sys.exit(f"{TABLE}: not a row of four columns: {line.strip()}")
        out.append((m.group(1), int(m.group(2)), m.group(4)))
    if not out:
        sys.exit(f"{TABLE}: no SF_TYPE_CODE rows")
    names = [name for _, _, name in out]
    if len(set(names)) != len(names) or len({c for c, _, _ in out}) != len(out):
        sys.exit(f"{TABLE}: a character or a case appears twice")
    if any(not 0 < key < 32 for _, key, _ in out):
        sys.exit(f"{TABLE}: a key code has 5 bits and is not 0")
    return out


def key_of(table, case):
    return next(key for _, key, name in table if name == case)


def swift(table):
    pointer_key = key_of(table, "pointer")
    chars = "\n".join(f'        case .{name}: UInt8(ascii: "{c}")' for c, _, name in table)
    by_key = {}
    for _, key, name in table:
        by_key.setdefault(key, []).append(name)
    keys = []
    for key in sorted(by_key):
        cases = ", ".join(f".{name}" for name in by_key[key])
        value = "TypeEncoding.pointerKeyCode" if key == pointer_key else str(key)
        keys.append(f"        case {cases}: {value}")
    keys = "\n".join(keys)
    singles = [f".{name}" for _, _, name in table if name != "pointer"]
    lines, line = [], "       "
    for s in singles:
        if len(line) + len(s) + 2 > 100:
            lines.append(line)
            line = "       "
        line += f" {s},"
    lines.append(line)
    singles = "\n".join(lines)
    return f"""import CDynamicRuntime

// Swift's side of the scalar type codes, written by scripts/generate-type-codes.py from the
// table's one source, {TABLE}:
// edit the table, then run the script.
extension TypeEncoding {{
    /// The key code of every pointer type (`^…`); typed sends of pointer values use it directly.
    @inlinable static var pointerKeyCode: UInt64 {{ {pointer_key} }}

    /// A scalar type's row: its character in an encoding and its 5-bit code in a signature's
    /// packed key. nil for structs, whose layout comes from their fields. For a pointer the
    /// character is the leading `^`.
    var scalarCode: (character: UInt8, key: UInt64)? {{
        scalarCharacter.map {{ ($0, keyCode) }}
    }}

    /// The character column of the table.
    private var scalarCharacter: UInt8? {{
        switch self {{
{chars}
        case {NOT_ROWS}: nil
        }}
    }}

    /// The key-code column of the table: the 5-bit code in a signature's packed key, 0 for
    /// types the key cannot express. A switch of its own, not derived from `scalarCode`: typed
    /// sends compute it on every call (a tuple-returning switch cost 2b/9a ~1.5x).
    var keyCode: UInt64 {{
        switch self {{
{keys}
        // A block is an object pointer; an array argument is a pointer (see `.array`).
        case .block: {key_of(table, "object")}
        case .array: TypeEncoding.pointerKeyCode
        case .structure: 0
        }}
    }}

    /// Whether the key code names this type alone (`long` shares `q`'s code, every pointer
    /// type one code, structs none).
    @inlinable var isExactInKey: Bool {{
        switch self {{
        case .long, .unsignedLong, .pointer, .structure, .block, .array: false
        default: true
        }}
    }}

    /// Every type that is one character in an encoding (all rows but the pointer's, which
    /// takes a pointee). The parser reads these through `scalar(for:)`.
    static let singleCharacterScalars: [TypeEncoding] = [
{singles}
    ]

    private static let scalarsByCharacter: [TypeEncoding?] = {{
        var table = [TypeEncoding?](repeating: nil, count: 256)
        for t in singleCharacterScalars {{ table[Int(t.scalarCode!.character)] = t }}
        return table
    }}()

    /// The one-character type spelled `character`, if any.
    static func scalar(for character: UInt8) -> TypeEncoding? {{ scalarsByCharacter[Int(character)] }}

    /// The libffi type of a scalar row (from the C table), nil for structs.
    var scalarFFIType: UnsafeMutablePointer<ffi_type>? {{
        scalarCode.flatMap {{ sf_ffi_type_for_code(CChar(bitPattern: $0.character)) }}
    }}
}}
"""


def main():
    generated.update("generate-type-codes", {OUTPUT: swift(rows())})


if __name__ == "__main__":
    main()
