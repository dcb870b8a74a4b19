import CDynamicRuntime
import Synchronization

/// A method of a class: its selector, signature and current implementation.
public struct Method: Hashable, @unchecked Sendable, CustomStringConvertible {
    let record: MethodRecord

    /// The method's name.
    public var selector: Selector { record.selector }
    /// The method's types.
    public var signature: Signature { record.signature }
    /// The class whose table holds this method.
    public var owningClass: RuntimeClass { record.owningClass }
    /// The current implementation (read atomically).
    public var implementation: IMP { Runtime.state.lock.withLock { record.imp } }
    /// The C handle, for the C API.
    public var raw: sf_method_t { record.raw }

    /// Whether the two are the same (identity, not contents).
    public static func == (a: Method, b: Method) -> Bool { a.record === b.record }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(record)) }
    /// A readable form, for logs and test failures.
    public var description: String {
        "\(owningClass.isMetaclass ? "+" : "-")[\(owningClass.name) \(selector.name)] \(signature.encoding)"
    }
}
