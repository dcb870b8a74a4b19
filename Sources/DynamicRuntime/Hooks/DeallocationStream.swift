/// The deallocation of an object, as seen by a ``DeallocationStream``.
public struct Deallocation: Sendable, CustomStringConvertible {
    /// The object's class, as its users see it.
    public let className: String
    /// Where the object was: an identity for logs, never to be dereferenced.
    public let address: UInt

    /// `<Class: 0x…> deallocated`, for logs.
    public var description: String { "<\(className): 0x\(String(address, radix: 16))> deallocated" }
}

/// The deallocation of one object as an `AsyncSequence` of at most one element, like
/// RxCocoa's `rx.deallocating`: it yields when the object's last reference goes (the dealloc
/// observer runs with the object intact; the consumer runs later, when it is gone) and ends.
///
/// Cancellation: ending the iteration early — leaving the loop, cancelling the task, calling
/// ``cancel()``, or dropping the stream and its iterator — removes the dealloc observer. The
/// stream does not keep the object alive. A stream made for nil, or for an object already
/// being deallocated or immortal (a class), ends at once without an element.
///
/// The same deallocation ends the object's ``MessageStream``s (`messages(_:_:bufferingPolicy:)`
/// on the object), through the hook machinery rather than an observer: they end when its own
/// hooks are dropped, after its dealloc observers and the release of its associations, so a
/// call those make to the dying object is still seen. This stream's element is produced
/// earlier, by a dealloc observer.
public struct DeallocationStream: AsyncSequence, Sendable {
    /// The one element: the deallocation.
    public typealias Element = Deallocation

    let subscription: StreamSubscription<Deallocation>

    /// Ends the stream now and removes the dealloc observer.
    public func cancel() { subscription.cancel() }

    /// The iterator of the one iteration the stream allows.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: subscription.stream.makeAsyncIterator(), lifetime: IterationLifetime(subscription))
    }

    /// Iterates the deallocation; dropping it ends the stream.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<Deallocation>.Iterator
        let lifetime: IterationLifetime<Deallocation>

        /// The deallocation, waiting for it; nil once the stream ended.
        public mutating func next() async -> Deallocation? { await base.next() }
    }

    static func make(_ ref: ObjectRef) -> DeallocationStream {
        let subscription = StreamSubscription<Deallocation>(.unbounded)
        let stream = DeallocationStream(subscription: subscription)
        guard let raw = ref.raw else {
            subscription.cancel()
            return stream
        }
        let className = ref.runtimeClass?.visibleName ?? "?"
        let address = UInt(bitPattern: raw)
        let token = ref.onDeallocate { [weak subscription, continuation = subscription.continuation] _ in
            // The observer list is spent by now: nothing to remove when the stream ends.
            subscription?.detach()
            continuation.yield(Deallocation(className: className, address: address))
            continuation.finish()
        }
        guard let token else {
            subscription.cancel()
            return stream
        }
        // Held weakly: an end racing with the object's own deallocation must not touch it.
        let weak = WeakReference(holding: ref)
        subscription.attach { _ = weak.object?.removeDeallocObserver(token) }
        return stream
    }
}
