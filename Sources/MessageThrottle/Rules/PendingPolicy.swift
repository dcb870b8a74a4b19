/// What to do with a delayed message that is still pending when its rule is discarded.
public enum PendingPolicy: Sendable {
    /// Drop it.
    case cancel
    /// Perform it now, on the discarding thread.
    case flush
}
