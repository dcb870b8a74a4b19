import CShims

/// A borrowed C string (`*`). The runtime copies it only when an invocation retains its
/// arguments.
public struct CString: PointerMessageValue, Hashable, @unchecked Sendable {
    /// The characters, NUL-terminated; may be nil.
    public let pointer: UnsafePointer<CChar>?
    /// Wraps a C string without copying it: the caller keeps it alive while it is used.
    public init(_ pointer: UnsafePointer<CChar>?) { self.pointer = pointer }
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .cString }
    /// Reads a value from argument storage.
    public init(argumentStorage: UnsafeRawPointer) { pointer = argumentStorage.load(as: UnsafePointer<CChar>?.self) }
    /// Writes the value to argument storage (borrowed for the call: no retain).
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: pointer, as: UnsafePointer<CChar>?.self) }
    /// The value widened to a register.
    public var word: UInt64 { UInt64(UInt(bitPattern: pointer)) }
    /// Rebuilds the value from a register.
    public init(word: UInt64) { pointer = UnsafePointer(bitPattern: UInt(word)) }
    /// The string's contents, or nil for a NULL pointer.
    public var string: String? { pointer.map { String(cString: $0) } }
}
