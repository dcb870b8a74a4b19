import CDynamicRuntime

// @inlinable here and below: typed sends are inlined into the caller, and without these the
// conversions stay calls through the protocol witness into unspecialized generic code
// (docs/performance.md, "typed send").
extension MessageArgument where Self: BitwiseCopyable {
    /// Reads a value from argument storage.
    @inlinable
    public init(argumentStorage: UnsafeRawPointer) { self = argumentStorage.loadUnaligned(as: Self.self) }
    /// Writes the value to argument storage (borrowed for the call: no retain).
    @inlinable
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self, as: Self.self) }
}

extension MessageReturn where Self: MessageArgument {
    /// The encoding of the type as a return value.
    public static var returnEncoding: TypeEncoding { typeEncoding }
}

// libffi widens integer returns narrower than a word to a full word (ffi_arg / ffi_sarg).
extension MessageReturn where Self: FixedWidthInteger {
    /// Reads (and takes ownership of) a value from return storage.
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
    /// Writes the value to return storage, giving the caller a +1 reference for objects.
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
    /// The value widened to a register.
    public var word: UInt64 {
        Self.isSigned ? UInt64(bitPattern: Int64(truncatingIfNeeded: self)) : UInt64(truncatingIfNeeded: self)
    }
    /// Rebuilds the value from a register.
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
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .bool }
    /// Reads a value from argument storage.
    public init(argumentStorage: UnsafeRawPointer) { self = argumentStorage.load(as: UInt8.self) != 0 }
    /// Writes the value to argument storage (borrowed for the call: no retain).
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self ? 1 : 0, as: UInt8.self) }
    /// Reads (and takes ownership of) a value from return storage.
    public init(returnStorage: UnsafeRawPointer) { self = returnStorage.load(as: UInt8.self) != 0 }
    /// Writes the value to return storage, giving the caller a +1 reference for objects.
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self ? 1 : 0, as: UInt64.self) }
    /// The value widened to a register.
    public var word: UInt64 { self ? 1 : 0 }
    /// Rebuilds the value from a register.
    public init(word: UInt64) { self = (word & 0xFF) != 0 }
}

extension Float: MessageValue {
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .float }
    /// How the value comes back from a C call.
    public static var returnKind: ReturnKind { .float }
    /// Reads (and takes ownership of) a value from return storage.
    public init(returnStorage: UnsafeRawPointer) { self = returnStorage.load(as: Float.self) }
    /// Writes the value to return storage, giving the caller a +1 reference for objects.
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self, as: Float.self) }
}

#if arch(x86_64) || arch(i386)
extension Float80: MessageValue {
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .longDouble }
    /// Reads (and takes ownership of) a value from return storage.
    public init(returnStorage: UnsafeRawPointer) { self = returnStorage.loadUnaligned(as: Float80.self) }
    /// Writes the value to return storage, giving the caller a +1 reference for objects.
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self, as: Float80.self) }
}
#endif

extension Double: MessageValue {
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .double }
    /// How the value comes back from a C call.
    public static var returnKind: ReturnKind { .double }
    /// Reads (and takes ownership of) a value from return storage.
    public init(returnStorage: UnsafeRawPointer) { self = returnStorage.load(as: Double.self) }
    /// Writes the value to return storage, giving the caller a +1 reference for objects.
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self, as: Double.self) }
}
