import CDynamicRuntime
import Glibc

/// A reference to a runtime object that does not own it, like Objective-C's `id` without ARC:
/// the receiver handed to method closures, and the way to pass objects as arguments.
/// It may be nil; sending a message to nil does nothing and returns zero, as in Objective-C.
public struct ObjectRef: Hashable, @unchecked Sendable, CustomStringConvertible, MessageArgument, WordRepresentable {
    /// The C object, or nil.
    public let raw: sf_id?

    /// Wraps a C object without retaining it.
    public init(_ raw: sf_id?) { self.raw = raw }

    /// The nil object.
    public static let `nil` = ObjectRef(nil)

    /// Whether this is the nil object.
    public var isNil: Bool { raw == nil }

    /// An owning handle (retains); nil for the nil object.
    public func retained() -> Object? { raw.map { Object(retaining: $0) } }

    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .object }
    /// Reads a value from argument storage.
    public init(argumentStorage: UnsafeRawPointer) { raw = argumentStorage.load(as: sf_id?.self) }
    /// Writes the value to argument storage (borrowed for the call: no retain).
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: raw, as: sf_id?.self) }
    /// The value widened to a register.
    public var word: UInt64 { UInt64(UInt(bitPattern: raw)) }
    /// Rebuilds the value from a register.
    public init(word: UInt64) { raw = sf_id(bitPattern: UInt(word)) }

    /// A readable form, for logs and test failures.
    public var description: String {
        guard let raw else { return "nil" }
        let cls = sf_object_getClass(raw).map { String(cString: sf_class_getName($0)) } ?? "?"
        return "<\(cls): \(UnsafeRawPointer(raw))>"
    }
}
