import CShims

/// One type of an Objective-C-style type encoding, e.g. `q` (Int64) or `{Point=dd}`.
public indirect enum TypeEncoding: Hashable, Sendable, CustomStringConvertible {
    /// `v`: no value (a method that returns nothing).
    case void
    /// `c`: a C `signed char` / `Int8`.
    case int8
    /// `C`: a C `unsigned char` / `UInt8`.
    case uint8
    /// `s`: a C `short` / `Int16`.
    case int16
    /// `S`: a C `unsigned short` / `UInt16`.
    case uint16
    /// `i`: a C `int` / `Int32`.
    case int32
    /// `I`: a C `unsigned int` / `UInt32`.
    case uint32
    /// `l` / `L`: a C `long`, 64 bits on the LP64 platforms this runs on.
    case long, unsignedLong
    /// `q`: a C `long long` / `Int64` (and Swift's `Int`).
    case int64
    /// `Q`: a C `unsigned long long` / `UInt64` (and Swift's `UInt`).
    case uint64
    /// `f`: a C `float` / `Float`.
    case float
    /// `d`: a C `double` / `Double`.
    case double
    /// `D`: a C `long double` (`Float80` on x86-64). Passed in memory and returned in the x87
    /// register: sends and closure IMPs go through libffi, never a register trampoline.
    case longDouble
    /// `B`: a C `bool` / `Bool`.
    case bool
    /// `*`: a NUL-terminated C string.
    case cString
    /// `@`: a runtime object.
    case object
    /// `#`: a runtime class.
    case classObject
    /// `:`: a selector.
    case selector
    /// `^type`, or `^?` (an untyped pointer, e.g. a function pointer) with a nil pointee.
    case pointer(TypeEncoding?)
    /// `{Name=fields}`: a C struct passed by value.
    case structure(name: String, fields: [TypeEncoding])

    /// The encoding text, as it would appear in a signature.
    public var encoding: String {
        switch self {
        case let .pointer(pointee): "^" + (pointee?.encoding ?? "?")
        case let .structure(name, fields): "{\(name)=" + fields.map(\.encoding).joined() + "}"
        default: String(UnicodeScalar(scalarCode!.character))
        }
    }

    /// The encoding text (`encoding`).
    public var description: String { encoding }

    /// Whether two encodings describe the same machine type (`l` and `q` do on LP64).
    func isCompatible(with other: TypeEncoding) -> Bool {
        switch (self, other) {
        case let (.structure(_, a), .structure(_, b)):
            // Struct names are documentation; the layout is what must agree.
            a.count == b.count && zip(a, b).allSatisfy { $0.isCompatible(with: $1) }
        case (.pointer, .pointer):
            true
        default:
            keyCode == other.keyCode
        }
    }
}
