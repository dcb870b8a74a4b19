import CShims

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
