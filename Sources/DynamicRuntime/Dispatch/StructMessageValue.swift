import CDynamicRuntime

/// Structs passed by value: declare the C layout's encoding and keep the Swift layout equal.
///
/// ```swift
/// struct Point: StructMessageValue { var x, y: Double
///     static let typeEncoding = TypeEncoding.structure(name: "Point", fields: [.double, .double]) }
/// ```
public protocol StructMessageValue: MessageValue, BitwiseCopyable {}

extension StructMessageValue {
    /// Reads (and takes ownership of) a value from return storage.
    public init(returnStorage: UnsafeRawPointer) { self = returnStorage.loadUnaligned(as: Self.self) }
    /// Writes the value to return storage, giving the caller a +1 reference for objects.
    public func storeReturn(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self, as: Self.self) }
}
