import CShims

/// A Swift type that can travel as a method argument: it knows its type encoding and how to
/// read and write itself in libffi's argument storage.
public protocol MessageArgument {
    /// The type's encoding, e.g. `.int64` for `Int`.
    static var typeEncoding: TypeEncoding { get }
    /// Reads a value from argument storage.
    init(argumentStorage: UnsafeRawPointer)
    /// Writes the value to argument storage (borrowed for the call: no retain).
    func storeArgument(to storage: UnsafeMutableRawPointer)
    /// The 5-bit code of the type in a signature key (see `TypeEncoding.keyCode`).
    static var keyCode: UInt64 { get }
    /// Whether the value travels in one integer register (typed sends skip libffi then).
    static var passesInWord: Bool { get }
    /// The register value when `passesInWord`.
    var argumentWord: UInt64 { get }
    /// Whether a NULL in argument storage is a valid value of the type (false for `Selector`,
    /// `Object` and the non-optional pointer types): closure IMPs refuse NULL for the others.
    static var acceptsNull: Bool { get }
}

extension MessageArgument {
    public static var acceptsNull: Bool { true }
    public static var keyCode: UInt64 { typeEncoding.keyCode }
    public static var passesInWord: Bool { false }
    public var argumentWord: UInt64 { 0 }
    static var storageSize: Int { MemoryLayout<Self>.size }
}

extension MessageArgument where Self: WordRepresentable {
    public static var passesInWord: Bool { true }
    public var argumentWord: UInt64 { word }
}

extension MessageArgument {
    /// Reads a value from argument storage, refusing a NULL the type cannot hold.
    /// `what` names the argument and is only built for the error.
    static func load(from p: UnsafeRawPointer, what: () -> (className: String, selector: String, position: Int))
        throws(RuntimeError) -> Self {
        if !acceptsNull, p.load(as: UnsafeRawPointer?.self) == nil {
            let (cls, sel, position) = what()
            throw .invalidArgument(className: cls, selector: sel,
                                   reason: "argument \(position) is NULL but the method takes a non-optional \(Self.self)")
        }
        return Self(argumentStorage: p)
    }

    /// Argument `index` of a closure IMP's frame (receiver and selector come first).
    /// Inlinable so that typed closure IMPs read their arguments without witness tables.
    @inlinable
    static func argument(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ index: Int) throws(RuntimeError) -> Self {
        let p = UnsafeRawPointer(args[index]!)
        if !acceptsNull, p.load(as: UnsafeRawPointer?.self) == nil {
            throw nullArgumentError(args, index)
        }
        return Self(argumentStorage: p)
    }

    /// The error for a NULL in argument `index`, out of line: only bad input builds it.
    @usableFromInline
    static func nullArgumentError(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ index: Int) -> RuntimeError {
        let raw = args[0]!.load(as: sf_id?.self)
        let name = raw.flatMap { sf_object_getClass($0) }.map { String(cString: sf_class_getName($0)) } ?? "nil"
        return .invalidArgument(className: name, selector: Selector(raw: args[1]!.load(as: sf_sel.self)).name,
                                reason: "argument \(index - 1) is NULL but the method takes a non-optional \(Self.self)")
    }
}

/// How a return value comes back from a C call.
public enum ReturnKind: Sendable {
    /// In an integer register.
    case word
    /// In a floating-point register, as a double.
    case double
    /// In a floating-point register, as a float.
    case float
    /// Through memory or in a way only libffi handles.
    case other
}

/// A Swift type that a method can return. Object returns are +1: the caller owns them.
public protocol MessageReturn {
    /// The type's encoding.
    static var returnEncoding: TypeEncoding { get }
    /// Reads (and takes ownership of) a return value from libffi's return storage.
    init(returnStorage: UnsafeRawPointer)
    /// Writes the value to return storage, giving the caller a +1 reference for objects.
    func storeReturn(to storage: UnsafeMutableRawPointer)
    /// The 5-bit code of the return type in a signature key.
    static var returnKeyCode: UInt64 { get }
    /// How the value is returned by a C function.
    static var returnKind: ReturnKind { get }
}

extension MessageReturn {
    public static var returnKeyCode: UInt64 { returnEncoding.keyCode }
    public static var returnKind: ReturnKind { .other }

    /// Rebuilds a value returned in a register.
    @inlinable @inline(__always)
    static func fromRegister<T>(_ value: T) -> Self {
        withUnsafeBytes(of: value) { Self(returnStorage: $0.baseAddress!) }
    }
}

extension MessageReturn where Self: WordRepresentable {
    public static var returnKind: ReturnKind { .word }
}

/// A type usable both as an argument and as a return value.
public typealias MessageValue = MessageArgument & MessageReturn

/// Types passed in one integer register: lets typed sends call an IMP without libffi.
public protocol WordRepresentable {
    /// The value widened to a register, sign- or zero-extended as C would.
    var word: UInt64 { get }
    /// Rebuilds the value from a register (truncating to the type's width).
    init(word: UInt64)
}

// @inlinable here and below: typed sends are inlined into the caller, and without these the
// conversions stay calls through the protocol witness into unspecialized generic code
// (docs/performance.md, "typed send").
extension MessageArgument where Self: BitwiseCopyable {
    @inlinable
    public init(argumentStorage: UnsafeRawPointer) { self = argumentStorage.loadUnaligned(as: Self.self) }
    @inlinable
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self, as: Self.self) }
}

extension MessageReturn where Self: MessageArgument {
    public static var returnEncoding: TypeEncoding { typeEncoding }
}

// libffi widens integer returns narrower than a word to a full word (ffi_arg / ffi_sarg).
extension MessageReturn where Self: FixedWidthInteger {
    @inlinable
    public init(returnStorage: UnsafeRawPointer) {
        if Self.bitWidth < 64 {
            self = Self.isSigned
                ? Self(truncatingIfNeeded: returnStorage.load(as: Int64.self))
                : Self(truncatingIfNeeded: returnStorage.load(as: UInt64.self))
        } else {
            self = returnStorage.load(as: Self.self)
        }
    }
    @inlinable
    public func storeReturn(to storage: UnsafeMutableRawPointer) {
        if Self.bitWidth < 64 {
            if Self.isSigned { storage.storeBytes(of: Int64(truncatingIfNeeded: self), as: Int64.self) }
            else { storage.storeBytes(of: UInt64(truncatingIfNeeded: self), as: UInt64.self) }
        } else {
            storage.storeBytes(of: self, as: Self.self)
        }
    }
}

extension WordRepresentable where Self: FixedWidthInteger {
    public var word: UInt64 {
        Self.isSigned ? UInt64(bitPattern: Int64(truncatingIfNeeded: self)) : UInt64(truncatingIfNeeded: self)
    }
    public init(word: UInt64) { self.init(truncatingIfNeeded: word) }
}

extension Int8: MessageValue, WordRepresentable { public static var typeEncoding: TypeEncoding { .int8 } }
extension UInt8: MessageValue, WordRepresentable { public static var typeEncoding: TypeEncoding { .uint8 } }
extension Int16: MessageValue, WordRepresentable { public static var typeEncoding: TypeEncoding { .int16 } }
extension UInt16: MessageValue, WordRepresentable { public static var typeEncoding: TypeEncoding { .uint16 } }
extension Int32: MessageValue, WordRepresentable { public static var typeEncoding: TypeEncoding { .int32 } }
extension UInt32: MessageValue, WordRepresentable { public static var typeEncoding: TypeEncoding { .uint32 } }
extension Int64: MessageValue, WordRepresentable { public static var typeEncoding: TypeEncoding { .int64 } }
extension UInt64: MessageValue, WordRepresentable { public static var typeEncoding: TypeEncoding { .uint64 } }
extension Int: MessageValue, WordRepresentable { public static var typeEncoding: TypeEncoding { .int64 } }
extension UInt: MessageValue, WordRepresentable { public static var typeEncoding: TypeEncoding { .uint64 } }

extension Bool: MessageValue, WordRepresentable {
    public static var typeEncoding: TypeEncoding { .bool }
    public init(argumentStorage: UnsafeRawPointer) { self = argumentStorage.load(as: UInt8.self) != 0 }
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self ? 1 : 0, as: UInt8.self) }
    public init(returnStorage: UnsafeRawPointer) { self = returnStorage.load(as: UInt8.self) != 0 }
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self ? 1 : 0, as: UInt64.self) }
    public var word: UInt64 { self ? 1 : 0 }
    public init(word: UInt64) { self = (word & 0xFF) != 0 }
}

extension Float: MessageValue {
    public static var typeEncoding: TypeEncoding { .float }
    public static var returnKind: ReturnKind { .float }
    public init(returnStorage: UnsafeRawPointer) { self = returnStorage.load(as: Float.self) }
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self, as: Float.self) }
}

extension Double: MessageValue {
    public static var typeEncoding: TypeEncoding { .double }
    public static var returnKind: ReturnKind { .double }
    public init(returnStorage: UnsafeRawPointer) { self = returnStorage.load(as: Double.self) }
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self, as: Double.self) }
}

/// Pointer-sized values share their argument and return representation.
public protocol PointerMessageValue: MessageValue, WordRepresentable {}

extension PointerMessageValue {
    public init(returnStorage: UnsafeRawPointer) { self.init(argumentStorage: returnStorage) }
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storeArgument(to: storage) }
}

extension Selector: PointerMessageValue {
    public static var typeEncoding: TypeEncoding { .selector }
    public static var acceptsNull: Bool { false }
    public init(argumentStorage: UnsafeRawPointer) {
        self.init(raw: argumentStorage.load(as: sf_sel.self))
    }
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: raw, as: sf_sel.self) }
    public var word: UInt64 { UInt64(UInt(bitPattern: raw)) }
    public init(word: UInt64) { self.init(raw: sf_sel(bitPattern: UInt(word))!) }
}

extension UnsafeRawPointer: PointerMessageValue {
    public static var acceptsNull: Bool { false }
    public static var typeEncoding: TypeEncoding { .pointer(.void) }
    public static var keyCode: UInt64 { 17 }
    public static var returnKeyCode: UInt64 { 17 }
    public var word: UInt64 { UInt64(UInt(bitPattern: self)) }
    public init(word: UInt64) { self = UnsafeRawPointer(bitPattern: UInt(word))! }
}

extension UnsafeMutableRawPointer: PointerMessageValue {
    public static var acceptsNull: Bool { false }
    public static var typeEncoding: TypeEncoding { .pointer(.void) }
    public static var keyCode: UInt64 { 17 }
    public static var returnKeyCode: UInt64 { 17 }
    public var word: UInt64 { UInt64(UInt(bitPattern: self)) }
    public init(word: UInt64) { self = UnsafeMutableRawPointer(bitPattern: UInt(word))! }
}

extension OpaquePointer: PointerMessageValue {
    public static var acceptsNull: Bool { false }
    public static var typeEncoding: TypeEncoding { .pointer(nil) }
    public static var keyCode: UInt64 { 17 }
    public static var returnKeyCode: UInt64 { 17 }
    public var word: UInt64 { UInt64(UInt(bitPattern: self)) }
    public init(word: UInt64) { self = OpaquePointer(bitPattern: UInt(word))! }
}

/// A borrowed C string (`*`). The runtime copies it only when an invocation retains its
/// arguments.
public struct CString: PointerMessageValue, Hashable, @unchecked Sendable {
    /// The characters, NUL-terminated; may be nil.
    public let pointer: UnsafePointer<CChar>?
    public init(_ pointer: UnsafePointer<CChar>?) { self.pointer = pointer }
    public static var typeEncoding: TypeEncoding { .cString }
    public init(argumentStorage: UnsafeRawPointer) { pointer = argumentStorage.load(as: UnsafePointer<CChar>?.self) }
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: pointer, as: UnsafePointer<CChar>?.self) }
    public var word: UInt64 { UInt64(UInt(bitPattern: pointer)) }
    public init(word: UInt64) { pointer = UnsafePointer(bitPattern: UInt(word)) }
    /// The string's contents, or nil for a NULL pointer.
    public var string: String? { pointer.map { String(cString: $0) } }
}

/// Structs passed by value: declare the C layout's encoding and keep the Swift layout equal.
///
/// ```swift
/// struct Point: StructMessageValue { var x, y: Double
///     static let typeEncoding = TypeEncoding.structure(name: "Point", fields: [.double, .double]) }
/// ```
public protocol StructMessageValue: MessageValue, BitwiseCopyable {}

extension StructMessageValue {
    public init(returnStorage: UnsafeRawPointer) { self = returnStorage.loadUnaligned(as: Self.self) }
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self, as: Self.self) }
}
