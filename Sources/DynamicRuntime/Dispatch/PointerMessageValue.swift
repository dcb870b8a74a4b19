import CShims

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
    public static var keyCode: UInt64 { TypeEncoding.pointerKeyCode }
    public static var returnKeyCode: UInt64 { TypeEncoding.pointerKeyCode }
    public var word: UInt64 { UInt64(UInt(bitPattern: self)) }
    public init(word: UInt64) { self = UnsafeRawPointer(bitPattern: UInt(word))! }
}

extension UnsafeMutableRawPointer: PointerMessageValue {
    public static var acceptsNull: Bool { false }
    public static var typeEncoding: TypeEncoding { .pointer(.void) }
    public static var keyCode: UInt64 { TypeEncoding.pointerKeyCode }
    public static var returnKeyCode: UInt64 { TypeEncoding.pointerKeyCode }
    public var word: UInt64 { UInt64(UInt(bitPattern: self)) }
    public init(word: UInt64) { self = UnsafeMutableRawPointer(bitPattern: UInt(word))! }
}

extension OpaquePointer: PointerMessageValue {
    public static var acceptsNull: Bool { false }
    public static var typeEncoding: TypeEncoding { .pointer(nil) }
    public static var keyCode: UInt64 { TypeEncoding.pointerKeyCode }
    public static var returnKeyCode: UInt64 { TypeEncoding.pointerKeyCode }
    public var word: UInt64 { UInt64(UInt(bitPattern: self)) }
    public init(word: UInt64) { self = OpaquePointer(bitPattern: UInt(word))! }
}
