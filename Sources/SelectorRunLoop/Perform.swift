import CoreFoundation
import DynamicRuntime
import Foundation

/// The perform family of NSObject (`performSelector:withObject:afterDelay:inModes:`,
/// `cancelPreviousPerformRequestsWithTarget:…`, `performSelector:onThread:…`,
/// `performSelectorInBackground:withObject:`), for runtime objects. The method must take no
/// argument or one object; `argument` is passed if it takes one.
extension MessageReceiver {
    /// Sends `selector` with `argument` on `runLoop` (by default this thread's) in `modes`,
    /// `delay` seconds from now. The target and argument are retained until it runs or is cancelled.
    ///
    /// - Throws: ``RunLoopError`` for a nil target, a bad delay, a method it cannot call, no
    ///   modes or an unknown run loop; nothing is scheduled then.
    @discardableResult
    public func perform(_ selector: Selector, with argument: Object? = nil, afterDelay delay: TimeInterval,
                        on runLoop: RunLoop = .current, inModes modes: [RunLoop.Mode] = [.default]) throws(RunLoopError) -> PerformRequest {
        try checkInterval(delay, "delay")
        return try perform(selector, with: argument, deadline: Modes.absolute(after: delay), on: runLoop, inModes: modes)
    }

    /// Like ``perform(_:with:afterDelay:on:inModes:)``, at `date`: requests for one date run
    /// in the order they were made.
    @discardableResult
    public func perform(_ selector: Selector, with argument: Object? = nil, at date: Date,
                        on runLoop: RunLoop = .current, inModes modes: [RunLoop.Mode] = [.default]) throws(RunLoopError) -> PerformRequest {
        try checkInterval(date.timeIntervalSinceReferenceDate.magnitude, "date")
        return try perform(selector, with: argument, deadline: date.timeIntervalSinceReferenceDate, on: runLoop, inModes: modes)
    }

    private func perform(_ selector: Selector, with argument: Object?, deadline: CFAbsoluteTime,
                         on runLoop: RunLoop, inModes modes: [RunLoop.Mode]) throws(RunLoopError) -> PerformRequest {
        let loop = try Loops.handle(runLoop)
        let cfModes = try Modes.cf(modes)
        let argumentRef = argument?.ref ?? .nil
        let message = try CapturedMessage(target: receiver, selector: selector, argument: argumentRef)
        let request = PerformRequest(message: message, target: receiver, argument: argumentRef, deadline: deadline,
                                     sequence: PendingRequests.nextSequence(), loop: loop, modes: modes)
        PendingRequests.add(request, modes: modes, cfModes: cfModes)
        return request
    }

    /// Cancels the pending requests on the current thread's run loop that send `selector` to
    /// this target with `argument`, releasing what they retained, as Cocoa's
    /// `cancelPreviousPerformRequestsWithTarget:selector:object:`. Arguments match as there:
    /// the same object, or one that `argument` answers `isEqual:` with YES when its class
    /// implements `isEqual:` (a failing `isEqual:` goes to ``MessageDelivery/errorHandler``
    /// and matches nothing); nil matches requests without one. Requests on other run loops
    /// are left alone (``PerformRequest/cancel()`` cancels one from any thread). Returns how
    /// many were cancelled.
    @discardableResult
    public func cancelPreviousPerformRequests(selector: Selector, argument: Object? = nil) -> Int {
        let target = receiver.raw.map { UnsafeMutableRawPointer($0) }
        let loop = ObjectIdentifier(RunLoop.current)
        let candidates = PendingRequests.matching { $0.loop.key == loop && $0.targetKey == target && $0.selector == selector }
        guard !candidates.isEmpty else { return 0 }
        // Outside the table's lock: isEqual: (and a resolver asked about it) is user code.
        let match = ArgumentMatch(argument)
        return PendingRequests.remove(candidates.filter(match.matches))
    }

    /// Cancels every pending request for this target on the current thread's run loop, as
    /// `cancelPreviousPerformRequestsWithTarget:`. Returns how many were cancelled.
    @discardableResult
    public func cancelPreviousPerformRequests() -> Int {
        let target = receiver.raw.map { UnsafeMutableRawPointer($0) }
        let loop = ObjectIdentifier(RunLoop.current)
        return PendingRequests.remove(PendingRequests.matching { $0.loop.key == loop && $0.targetKey == target })
    }

    /// Sends `selector` with `argument` on `thread`'s run loop in `modes`. With `waitUntilDone`
    /// the caller blocks until it has run; on the thread itself it runs at once.
    ///
    /// - Throws: ``RunLoopError/threadExited(name:)`` if the thread has stopped (also when it
    ///   stops before running a request waited for), or an error from capturing the message.
    public func perform(_ selector: Selector, on thread: RunLoopThread, with argument: Object? = nil,
                        waitUntilDone: Bool, modes: [RunLoop.Mode] = [.default]) throws(RunLoopError) {
        guard let loop = thread.loop else { throw .threadExited(name: thread.name) }
        let message = try CapturedMessage(target: receiver, selector: selector, argument: argument?.ref ?? .nil)
        try ImmediateRequest.submit(message, to: loop, thread: thread, wait: waitUntilDone, modes: modes)
    }

    /// Sends `selector` with `argument` on `runLoop` (the main loop, or one of a thread that
    /// has used this module) in `modes`, waking it; waiting works as on a ``RunLoopThread``.
    public func perform(_ selector: Selector, on runLoop: RunLoop, with argument: Object? = nil,
                        waitUntilDone: Bool, modes: [RunLoop.Mode] = [.default]) throws(RunLoopError) {
        let loop = try Loops.handle(runLoop)
        let message = try CapturedMessage(target: receiver, selector: selector, argument: argument?.ref ?? .nil)
        try ImmediateRequest.submit(message, to: loop, thread: nil, wait: waitUntilDone, modes: modes)
    }

    /// Sends `selector` with `argument` on a new detached thread, as `performSelectorInBackground:`.
    public func performInBackground(_ selector: Selector, with argument: Object? = nil) throws(RunLoopError) {
        let message = try CapturedMessage(target: receiver, selector: selector, argument: argument?.ref ?? .nil)
        Thread.detachNewThread { message.deliver(source: "background thread") }
    }
}

extension Thread {
    /// A thread (not started) whose body sends `selector` to `target` with `object`, as
    /// `-[NSThread initWithTarget:selector:object:]`. Target and object are retained until it
    /// has run, then released, as Cocoa releases them when the thread exits.
    public convenience init(target: some MessageReceiver, selector: Selector, object: Object? = nil) throws(RunLoopError) {
        let message = Locked<CapturedMessage?>(try CapturedMessage(target: target.receiver, selector: selector,
                                                                   argument: object?.ref ?? .nil))
        // Foundation keeps the block until the Thread object is freed: the body takes the
        // message out, so that it goes when the body ends.
        self.init {
            let taken = message.withLock { m in
                defer { m = nil }
                return m
            }
            taken?.deliver(source: "thread")
        }
    }
}

/// A perform without delay: a block performed in modes, then the loop woken, since a block
/// performed from another thread does not wake a sleeping loop (notes: no wake-up).
final class ImmediateRequest: @unchecked Sendable {
    private let state: Locked<(message: CapturedMessage?, ran: Bool)>
    private let done = DispatchSemaphore(value: 0)

    private init(_ message: CapturedMessage) { state = Locked((message, false)) }

    static func submit(_ message: CapturedMessage, to loop: LoopHandle, thread: RunLoopThread?, wait: Bool,
                       modes: [RunLoop.Mode]) throws(RunLoopError) {
        _ = try Modes.cf(modes)
        if wait && loop.runLoop === RunLoop.current {
            message.deliver(source: "perform request")
            return
        }
        let request = ImmediateRequest(message)
        if let thread, !thread.track(request) { throw .threadExited(name: thread.name) }
        loop.runLoop.perform(inModes: modes) {
            request.run()
            thread?.untrack(request)
        }
        loop.wakeUp()
        guard wait else { return }
        request.done.wait()
        if !request.state.withLock({ $0.ran }) { throw .threadExited(name: thread?.name ?? "?") }
    }

    private func run() {
        let message = state.withLock { s in
            defer { s.message = nil }
            if s.message != nil { s.ran = true }
            return s.message
        }
        message?.deliver(source: "perform request")
        done.signal()
    }

    /// The thread stopped first: release the message and wake a waiter, who throws.
    func abandon() {
        let message = state.withLock { s in
            defer { s.message = nil }
            return s.message
        }
        if message != nil { done.signal() }
    }
}
