import CDynamicRuntime

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
    /// `@?`: a block, an object pointer retained wherever an object is (objc4's rule). It must
    /// be an object of this runtime or nil; a C function pointer is `^?`.
    case block
    /// `[Ntype]`: a C array of `count` elements. Inline in an ivar or a struct (`count` times the
    /// element's size, the element's alignment); a method argument is passed as a pointer to
    /// its first element, as in C and objc4's `NSMethodSignature`.
    case array(count: Int, element: TypeEncoding)

    /// The encoding text, as it would appear in a signature.
    public var encoding: String {
        switch self {
        case let .pointer(pointee): "^" + (pointee?.encoding ?? "?")
        case let .structure(name, fields): "{\(name)=" + fields.map(\.encoding).joined() + "}"
        case .block: "@?"
        case let .array(count, element): "[\(count)" + element.encoding + "]"
        default: String(UnicodeScalar(scalarCode!.character))
        }
    }

    /// The most elements a `[Ntype]` encoding may declare (larger ones could not fit an
    /// instance anyway; see `RuntimeClass.maximumInstanceSize`).
    static let maximumArrayCount = 1 << 30

    /// The same type with its payload boxes made by the parser, for tables that live as long
    /// as the process (a class's ivars). Swift keeps an indirect case's box behind a pointer
    /// whose spare bits carry the case; LeakSanitizer cannot follow it, and the parser's
    /// allocations are the ones its suppressions name. A type the parser would read otherwise
    /// is kept as given.
    var interned: TypeEncoding {
        switch self {
        case .pointer, .structure, .array:
            var parser = TypeEncodingParser(encoding)
            if let parsed = try? parser.parseSingleType(), parsed == self { return parsed }
            return self
        default:
            return self
        }
    }

    /// The type as a method argument carries it: an array is a pointer to its first element.
    var passedType: TypeEncoding {
        if case let .array(_, element) = self { return .pointer(element) }
        return self
    }

    /// The offsets (from the start of a value of this type) of the object pointers an ivar of
    /// it holds strongly: the value itself for `@` and `@?`, every element of an array of them
    /// (nested arrays too). Empty for other types (a struct's fields are not retained).
    var strongObjectOffsets: [Int] { objectSlots?.offsets ?? [] }

    /// A type made of object pointers only: their offsets and its size. Computed without the
    /// signature table, so it may be read with the runtime lock held.
    private var objectSlots: (offsets: [Int], size: Int)? {
        switch self {
        case .object, .block:
            return ([0], MemoryLayout<UInt>.size)
        case let .array(count, element):
            guard let inner = element.objectSlots else { return nil }
            var offsets: [Int] = []
            offsets.reserveCapacity(inner.offsets.count * count)
            for i in 0..<count { offsets += inner.offsets.map { i * inner.size + $0 } }
            return (offsets, inner.size * count)
        default:
            return nil
        }
    }

    /// Whether an array is part of this type's inline layout (itself, or a struct field).
    var containsArray: Bool {
        switch self {
        case .array: true
        case let .structure(_, fields): fields.contains { $0.containsArray }
        default: false
        }
    }

    /// Whether values of this type are object pointers the runtime retains and releases
    /// (`@` and blocks, `@?`).
    var isRetainedObject: Bool {
        switch self {
        case .object, .block: true
        default: false
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
        case let (.array(n, a), .array(m, b)):
            n == m && a.isCompatible(with: b)
        case (.array, _), (_, .array):
            // Where an array is a pointer (a method argument), its signature's key says so.
            false
        default:
            keyCode == other.keyCode
        }
    }
}
