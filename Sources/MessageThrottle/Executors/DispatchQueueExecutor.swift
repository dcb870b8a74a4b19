import Dispatch

/// Runs work on a `DispatchQueue`, timed by ``MonotonicClock``.
public struct DispatchQueueExecutor: ThrottleExecutor {
    /// The serial queue used when none is given.
    ///
    /// (MessageThrottle defaults to the main queue; that queue is not drained
    /// on Linux without `dispatchMain()`, so a private serial queue is used.)
    public static let defaultQueue = DispatchQueue(label: "MessageThrottle.default")

    /// The queue work runs on.
    public let queue: DispatchQueue

    /// Creates an executor for `queue`.
    public init(queue: DispatchQueue = DispatchQueueExecutor.defaultQueue) {
        self.queue = queue
    }

    /// The monotonic clock `asyncAfter(deadline:)` uses.
    public var clock: any ThrottleClock { MonotonicClock() }

    /// Submits `work` to ``queue``.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Submits `work` to ``queue`` at `deadline`.
    public func schedule(at deadline: ThrottleInstant, _ work: @escaping @Sendable () -> Void) -> any ThrottleCancellable {
        let item = DispatchWorkItem(block: work)
        // uptimeNanoseconds 0 means "now" to Dispatch, which is what a past deadline needs anyway.
        let time = DispatchTime(uptimeNanoseconds: UInt64(max(deadline.nanoseconds, 0)))
        queue.asyncAfter(deadline: time, execute: item)
        return DispatchCancellable(item: item)
    }
}

/// Cancels a `DispatchWorkItem`.
struct DispatchCancellable: ThrottleCancellable, @unchecked Sendable {
    // DispatchWorkItem is thread-safe; it is just not annotated Sendable here.
    let item: DispatchWorkItem

    func cancel() { item.cancel() }
}
