import DynamicRuntime

/// What a caller gets back when its message is dropped or deferred.
public enum SuppressedReturn: Sendable {
    /// Zero, false or nil.
    case zero
    /// A fixed value of the method's return type.
    case value(DynamicValue)
    /// The result of the last performed message (zero before the first).
    case lastResult
}
