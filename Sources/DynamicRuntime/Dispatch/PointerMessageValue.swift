import CDynamicRuntime

/// Pointer-sized values share their argument and return representation.
public protocol PointerMessageValue: MessageValue, WordRepresentable {}

extension PointerMessageValue {
    /// Reads a value from argument storage.
    public init(returnStorage: UnsafeRawPointer) { self.init(argumentStorage: returnStorage) }
    /// Writes the value to return storage, giving the caller a +1 reference for objects.
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storeArgument(to: storage) }
}

extension Selector: PointerMessageValue {
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .selector }
    /// Whether a NULL in argument storage is a valid value of the type.
    public static var acceptsNull: Bool { false }
    /// Reads a value from argument storage.
    public init(argumentStorage: UnsafeRawPointer) {
        self.init(raw: argumentStorage.load(as: sf_sel.self))
    }
    /// Writes the value to argument storage (borrowed for the call: no retain).
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: raw, as: sf_sel.self) }
    /// The value widened to a register.
    public var word: UInt64 { UInt64(UInt(bitPattern: raw)) }
    /// Rebuilds the value from a register.
    public init(word: UInt64) { self.init(raw: sf_sel(bitPattern: UInt(word))!) }
}

extension UnsafeRawPointer: PointerMessageValue {
    /// Whether a NULL in argument storage is a valid value of the type.
    public static var acceptsNull: Bool { false }
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .pointer(.void) }
    /// The type's code in a signature's packed key.
    public static var keyCode: UInt64 { TypeEncoding.pointerKeyCode }
    /// The return type's code in a signature's packed key.
    public static var returnKeyCode: UInt64 { TypeEncoding.pointerKeyCode }
    /// The value widened to a register.
    public var word: UInt64 { UInt64(UInt(bitPattern: self)) }
    /// Rebuilds the value from a register.
    public init(word: UInt64) { self = UnsafeRawPointer(bitPattern: UInt(word))! }
}

extension UnsafeMutableRawPointer: PointerMessageValue {
    /// Whether a NULL in argument storage is a valid value of the type.
    public static var acceptsNull: Bool { false }
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .pointer(.void) }
    /// The type's code in a signature's packed key.
    public static var keyCode: UInt64 { TypeEncoding.pointerKeyCode }
    /// The return type's code in a signature's packed key.
    public static var returnKeyCode: UInt64 { TypeEncoding.pointerKeyCode }
    /// The value widened to a register.
    public var word: UInt64 { UInt64(UInt(bitPattern: self)) }
    /// Rebuilds the value from a register.
    public init(word: UInt64) { self = UnsafeMutableRawPointer(bitPattern: UInt(word))! }
}

extension OpaquePointer: PointerMessageValue {
    /// Whether a NULL in argument storage is a valid value of the type.
    public static var acceptsNull: Bool { false }
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .pointer(nil) }
    /// The type's code in a signature's packed key.
    public static var keyCode: UInt64 { TypeEncoding.pointerKeyCode }
    /// The return type's code in a signature's packed key.
    public static var returnKeyCode: UInt64 { TypeEncoding.pointerKeyCode }
    /// The value widened to a register.
    public var word: UInt64 { UInt64(UInt(bitPattern: self)) }
    /// Rebuilds the value from a register.
    public init(word: UInt64) { self = OpaquePointer(bitPattern: UInt(word))! }
}
