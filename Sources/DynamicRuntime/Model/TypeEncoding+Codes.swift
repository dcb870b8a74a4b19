import CShims

// The one Swift table of scalar type codes. CShims/internal/sf_type_codes.h holds the same rows with
// their libffi types; TypeCodeTableTests checks that the two agree row for row.
extension TypeEncoding {
    /// The key code of every pointer type (`^…`); typed sends of pointer values use it directly.
    @inlinable static var pointerKeyCode: UInt64 { 17 }

    /// A scalar type's row: its character in an encoding and its 5-bit code in a signature's
    /// packed key. nil for structs, whose layout comes from their fields. For a pointer the
    /// character is the leading `^`.
    var scalarCode: (character: UInt8, key: UInt64)? {
        switch self {
        case .void: (UInt8(ascii: "v"), 1)
        case .int8: (UInt8(ascii: "c"), 2)
        case .uint8: (UInt8(ascii: "C"), 3)
        case .int16: (UInt8(ascii: "s"), 4)
        case .uint16: (UInt8(ascii: "S"), 5)
        case .int32: (UInt8(ascii: "i"), 6)
        case .uint32: (UInt8(ascii: "I"), 7)
        case .long: (UInt8(ascii: "l"), 8)
        case .unsignedLong: (UInt8(ascii: "L"), 9)
        case .int64: (UInt8(ascii: "q"), 8)
        case .uint64: (UInt8(ascii: "Q"), 9)
        case .float: (UInt8(ascii: "f"), 10)
        case .double: (UInt8(ascii: "d"), 11)
        case .bool: (UInt8(ascii: "B"), 12)
        case .cString: (UInt8(ascii: "*"), 13)
        case .object: (UInt8(ascii: "@"), 14)
        case .classObject: (UInt8(ascii: "#"), 15)
        case .selector: (UInt8(ascii: ":"), 16)
        case .pointer: (UInt8(ascii: "^"), TypeEncoding.pointerKeyCode)
        case .structure: nil
        }
    }

    /// Every type that is one character in an encoding (all rows but the pointer's, which
    /// takes a pointee). The parser reads these through `scalar(for:)`.
    static let singleCharacterScalars: [TypeEncoding] = [
        .void, .int8, .uint8, .int16, .uint16, .int32, .uint32, .long, .unsignedLong,
        .int64, .uint64, .float, .double, .bool, .cString, .object, .classObject, .selector,
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
