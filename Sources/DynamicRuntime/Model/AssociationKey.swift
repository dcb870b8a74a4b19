import CDynamicRuntime

/// A key for associated values. Keys compare by identity: keep one per purpose, e.g. in a
/// `static let`.
public final class AssociationKey: Hashable, Sendable, CustomStringConvertible {
    /// A label for debugging; two keys with the same label are still different keys.
    public let label: String
    /// Makes a new, unique key.
    public init(_ label: String = "") { self.label = label }
    /// The key as the C API sees it.
    public var rawKey: UnsafeRawPointer { UnsafeRawPointer(ObjectWord(unretained: self).pointer) }
    /// Whether the two are the same (identity, not contents).
    public static func == (a: AssociationKey, b: AssociationKey) -> Bool { a === b }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// A readable form, for logs and test failures.
    public var description: String { "AssociationKey(\(label))" }
}
