import CDynamicRuntime

// Swift's side of the scalar type codes, written by scripts/generate-type-codes.py from the
// table's one source, CDynamicRuntime/internal/sf_type_codes.h:
// edit the table, then run the script.
extension TypeEncoding {
    /// The key code of every pointer type (`^…`); typed sends of pointer values use it directly.
    @inlinable static var pointerKeyCode: UInt64 { 17 }

    /// A scalar type's row: its character in an encoding and its 5-bit code in a signature's
    /// packed key. nil for structs, whose layout comes from their fields. For a pointer the
    /// character is the leading `^`.
    var scalarCode: (character: UInt8, key: UInt64)? {
        scalarCharacter.map { ($0, keyCode) }
    }

    /// The character column of the table.
    private var scalarCharacter: UInt8? {
        switch self {
        case .void: UInt8(ascii: "v")
        case .int8: UInt8(ascii: "c")
        case .uint8: UInt8(ascii: "C")
        case .int16: UInt8(ascii: "s")
        case .uint16: UInt8(ascii: "S")
        case .int32: UInt8(ascii: "i")
        case .uint32: UInt8(ascii: "I")
        case .long: UInt8(ascii: "l")
        case .unsignedLong: UInt8(ascii: "L")
        case .int64: UInt8(ascii: "q")
        case .uint64: UInt8(ascii: "Q")
        case .float: UInt8(ascii: "f")
        case .double: UInt8(ascii: "d")
        case .bool: UInt8(ascii: "B")
        case .cString: UInt8(ascii: "*")
        case .object: UInt8(ascii: "@")
        case .classObject: UInt8(ascii: "#")
        case .selector: UInt8(ascii: ":")
        case .pointer: UInt8(ascii: "^")
        case .longDouble: UInt8(ascii: "D")
        case .structure, .block, .array: nil
        }
    }

    /// The key-code column of the table: the 5-bit code in a signature's packed key, 0 for
    /// types the key cannot express. A switch of its own, not derived from `scalarCode`: typed
    /// sends compute it on every call (a tuple-returning switch cost 2b/9a ~1.5x).
    var keyCode: UInt64 {
        switch self {
        case .void: 1
        case .int8: 2
        case .uint8: 3
        case .int16: 4
        case .uint16: 5
        case .int32: 6
        case .uint32: 7
        case .long, .int64: 8
        case .unsignedLong, .uint64: 9
        case .float: 10
        case .double: 11
        case .bool: 12
        case .cString: 13
        case .object: 14
        case .classObject: 15
        case .selector: 16
        case .pointer: TypeEncoding.pointerKeyCode
        case .longDouble: 18
        // A block is an object pointer; an array argument is a pointer (see `.array`).
        case .block: 14
        case .array: TypeEncoding.pointerKeyCode
        case .structure: 0
        }
    }

    /// Whether the key code names this type alone (`long` shares `q`'s code, every pointer
    /// type one code, structs none).
    @inlinable var isExactInKey: Bool {
        switch self {
        case .long, .unsignedLong, .pointer, .structure, .block, .array: false
        default: true
        }
    }

    /// Every type that is one character in an encoding (all rows but the pointer's, which
    /// takes a pointee). The parser reads these through `scalar(for:)`.
    static let singleCharacterScalars: [TypeEncoding] = [
        .void, .int8, .uint8, .int16, .uint16, .int32, .uint32, .long, .unsignedLong, .int64,
        .uint64, .float, .double, .bool, .cString, .object, .classObject, .selector, .longDouble,
    ]

    private static let scalarsByCharacter: [TypeEncoding?] = {
        var table = [TypeEncoding?](repeating: nil, count: 256)
        for t in singleCharacterScalars { table[Int(t.scalarCode!.character)] = t }
        return table
    }()

    /// The one-character type spelled `character`, if any.
    static func scalar(for character: UInt8) -> TypeEncoding? { scalarsByCharacter[Int(character)] }

    /// The libffi type of a scalar row (from the C table), nil for structs.
    var scalarFFIType: UnsafeMutablePointer<ffi_type>? {
        scalarCode.flatMap { sf_ffi_type_for_code(CChar(bitPattern: $0.character)) }
    }
}
