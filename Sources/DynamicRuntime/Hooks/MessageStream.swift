import Synchronization

/// One call seen by a ``MessageStream``: who received it, what it was sent with, and (for a
/// stream of calls after the original) what it returned.
public struct ObservedCall: Sendable, CustomStringConvertible {
    /// The object that received the call. Not owned: valid only while the object lives
    /// (an object argument or return value below keeps its own object alive).
    public let receiver: ObjectRef
    /// The message.
    public let selector: Selector
    /// The explicit arguments as values, copied when the call was made (objects retained).
    public let arguments: [DynamicValue]
    /// The original's return value: set for ``MessageStream/Timing/afterOriginal``, nil before.
    public let returnValue: DynamicValue?

    /// `selector(arguments) -> returnValue`, for logs.
    public var description: String {
        let args = arguments.map(\.description).joined(separator: ", ")
        return "\(selector.name)(\(args))" + (returnValue.map { " -> \($0)" } ?? "")
    }
}

/// The calls of one selector on one object or on every instance of a class, as an
/// `AsyncSequence`, like RxCocoa's `sentMessage` and `methodInvoked`.
///
/// ```swift
/// for await call in try button.messages("tap:", .beforeOriginal) {
///     print(call.arguments)
/// }
/// ```
///
/// - **Back-pressure**: a sender never waits for the consumer (a hook cannot suspend). Calls
///   wait in a buffer whose ``BufferingPolicy`` says what to drop when it is full;
///   ``droppedCount`` counts what was dropped.
/// - **End**: a stream of one object's calls ends when the object is deallocated: the consumer
///   gets every call made to it, then nil, as RxCocoa's `sentMessage` and `methodInvoked`
///   complete at dealloc. Calls made while it goes (by its dealloc observers, or as its
///   associated values are released) come before the end. No instance's deallocation ends a
///   stream of a class's calls.
/// - **Cancellation**: the stream is iterated once. Ending that iteration — leaving the loop,
///   cancelling the iterating task, or calling ``cancel()`` — removes the hook, as does
///   dropping the stream and its iterator; the method is restored when no other hook needs it.
///   Calls made from then on are not seen.
public struct MessageStream: AsyncSequence, Sendable {
    /// Each element is one observed call.
    public typealias Element = ObservedCall

    /// When a call is observed, relative to the original method.
    public enum Timing: Sendable {
        /// Before the original runs (`rx.sentMessage`): no return value yet.
        case beforeOriginal
        /// After the original returned (`rx.methodInvoked`), with its return value.
        case afterOriginal
    }

    /// What a full buffer does with a new call. The sender is never made to wait.
    public enum BufferingPolicy: Sendable {
        /// Keeps every call until it is consumed.
        case unbounded
        /// Keeps the first `n` calls waiting; later ones are dropped until the consumer catches up.
        case bufferingOldest(Int)
        /// Keeps the latest `n` calls waiting; the oldest waiting one is dropped for a new one.
        case bufferingNewest(Int)
    }

    let subscription: StreamSubscription<ObservedCall>

    /// Calls the buffer dropped so far.
    public var droppedCount: Int { subscription.counter.dropped.load(ordering: .relaxed) }

    /// Ends the stream now: the hook is removed and iteration ends after the calls buffered.
    public func cancel() { subscription.cancel() }

    /// The iterator of the one iteration the stream allows.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: subscription.stream.makeAsyncIterator(), lifetime: IterationLifetime(subscription))
    }

    /// Iterates the calls; dropping it (the end of a `for await` loop) ends the stream.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<ObservedCall>.Iterator
        let lifetime: IterationLifetime<ObservedCall>

        /// The next call, waiting for one; nil once the stream ended.
        public mutating func next() async -> ObservedCall? { await base.next() }
    }

    /// Observes `selector` through a hook made by `install`, which receives the hook body and,
    /// for an object's own hook, what ends the stream when the object is deallocated.
    static func make(_ timing: Timing, _ policy: BufferingPolicy,
                     install: (_ body: @escaping @Sendable (HookContext) throws -> Void,
                               _ objectGone: @escaping @Sendable () -> Void) throws(RuntimeError) -> HookToken) throws(RuntimeError) -> MessageStream {
        let subscription = StreamSubscription<ObservedCall>(policy)
        let body: @Sendable (HookContext) throws -> Void = { [continuation = subscription.continuation, counter = subscription.counter] ctx in
            let call = ObservedCall(receiver: ctx.target, selector: ctx.selector, arguments: ctx.argumentValues,
                                    returnValue: timing == .afterOriginal ? ctx.returnValue : nil)
            if case .dropped = continuation.yield(call) { counter.dropped.add(1, ordering: .relaxed) }
        }
        // Weak: the registry holds this until the object goes, and must not keep the stream
        // (whose end removes the hook) alive.
        let objectGone: @Sendable () -> Void = { [weak subscription, continuation = subscription.continuation] in
            // The hook went with the object: nothing left to remove when the stream ends.
            subscription?.detach()
            continuation.finish()
        }
        let token = try install(body, objectGone)
        subscription.attach { token.remove() }
        return MessageStream(subscription: subscription)
    }
}

extension MessageStream.BufferingPolicy {
    func asyncStreamPolicy<T>(_: T.Type) -> AsyncStream<T>.Continuation.BufferingPolicy {
        switch self {
        case .unbounded: .unbounded
        case let .bufferingOldest(n): .bufferingOldest(max(n, 0))
        case let .bufferingNewest(n): .bufferingNewest(max(n, 0))
        }
    }
}

/// Calls a stream's buffer dropped (shared with the hook body, which must not hold the stream).
final class StreamCounter: Sendable {
    let dropped = Atomic<Int>(0)
}

/// An `AsyncStream` and what must be undone when it ends (a hook, a dealloc observer).
/// Ends once: on cancel, on the consumer's termination, or when the last holder lets go.
final class StreamSubscription<Element: Sendable>: @unchecked Sendable {
    let stream: AsyncStream<Element>
    let continuation: AsyncStream<Element>.Continuation
    let counter = StreamCounter()
    /// What ending undoes, and whether the stream ended before it was attached.
    private let undo = Locked<(action: (@Sendable () -> Void)?, ended: Bool)>((nil, false))

    init(_ policy: MessageStream.BufferingPolicy) {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: policy.asyncStreamPolicy(Element.self))
        self.stream = stream
        self.continuation = continuation
        // The consumer's task was cancelled, or the stream finished: nothing more to see.
        continuation.onTermination = { [undo] _ in Self.end(undo) }
    }

    /// Registers what ending undoes; runs it at once if the stream ended meanwhile.
    func attach(_ action: @escaping @Sendable () -> Void) {
        let endedAlready = undo.withLock { u in
            if !u.ended { u.action = action }
            return u.ended
        }
        if endedAlready { action() }
    }

    /// Forgets the undo action without running it (what it would undo is gone already).
    func detach() {
        undo.withLock { $0 = (nil, true) }
    }

    func cancel() {
        Self.end(undo)
        continuation.finish()
    }

    /// Takes the undo action out under the lock and runs it outside (it removes a hook).
    private static func end(_ undo: Locked<(action: (@Sendable () -> Void)?, ended: Bool)>) {
        let action = undo.withLock { u in
            defer { u = (nil, true) }
            return u.action
        }
        action?()
    }

    deinit { cancel() }
}

/// Held by an iterator: its end (the loop left) ends the stream.
final class IterationLifetime<Element: Sendable>: Sendable {
    let subscription: StreamSubscription<Element>
    init(_ subscription: StreamSubscription<Element>) { self.subscription = subscription }
    deinit { subscription.cancel() }
}
