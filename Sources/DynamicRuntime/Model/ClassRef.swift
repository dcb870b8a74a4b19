import CDynamicRuntime
import Glibc

/// A class passed as a value (`#`); nil is allowed.
public struct ClassRef: PointerMessageValue, Hashable, @unchecked Sendable {
    /// The C class, or nil.
    public let raw: sf_class_t?
    /// Wraps a class.
    public init(_ cls: RuntimeClass?) { raw = cls?.raw }
    /// Wraps a C class.
    public init(raw: sf_class_t?) { self.raw = raw }
    /// The Swift class, or nil.
    public var runtimeClass: RuntimeClass? { raw.map(RuntimeClass.from) }
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .classObject }
    /// Reads a value from argument storage.
    public init(argumentStorage: UnsafeRawPointer) { raw = argumentStorage.load(as: sf_class_t?.self) }
    /// Writes the value to argument storage (borrowed for the call: no retain).
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: raw, as: sf_class_t?.self) }
    /// The value widened to a register.
    public var word: UInt64 { UInt64(UInt(bitPattern: raw)) }
    /// Rebuilds the value from a register.
    public init(word: UInt64) { raw = sf_class_t(bitPattern: UInt(word)) }
}
