import CShims
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
    public static var typeEncoding: TypeEncoding { .classObject }
    public init(argumentStorage: UnsafeRawPointer) { raw = argumentStorage.load(as: sf_class_t?.self) }
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: raw, as: sf_class_t?.self) }
    public var word: UInt64 { UInt64(UInt(bitPattern: raw)) }
    public init(word: UInt64) { raw = sf_class_t(bitPattern: UInt(word)) }
}
