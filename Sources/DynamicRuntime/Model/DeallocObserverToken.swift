import CDynamicRuntime

/// A token for removing a dealloc observer.
public struct DeallocObserverToken: Hashable, Sendable {
    /// The token's number, unique per object.
    public let id: UInt64
}
