import CoreFoundation
import DynamicRuntime
import Foundation

/// A message to perform on a run loop after a delay, as `performSelector:withObject:afterDelay:inModes:`.
///
/// The message is captured with its target and argument retained. A request not yet due has
/// a CoreFoundation timer to wake its loop, a due one is a block performed in its modes; when
/// either runs, every due request of that loop and those modes runs in (deadline, creation) order, so requests with the same deadline run in
/// the order they were made (CF alone fires equal deadlines in no stable order). Running or
/// cancelling a request releases what it retained.
public final class PerformRequest: @unchecked Sendable, CustomStringConvertible {
    /// The selector performed.
    public let selector: Selector
    let deadline: CFAbsoluteTime
    let sequence: UInt64
    let loop: LoopHandle
    let modesKey: [String]
    // Identity of target and argument, for cancellation by (target, selector, argument).
    let targetKey: UnsafeMutableRawPointer?
    let argumentKey: UnsafeMutableRawPointer?
    let state: Locked<(message: CapturedMessage?, timer: CFRunLoopTimer?)>

    init(message: CapturedMessage, target: ObjectRef, argument: ObjectRef, deadline: CFAbsoluteTime,
         sequence: UInt64, loop: LoopHandle, modes: [RunLoop.Mode]) {
        selector = message.selector
        self.deadline = deadline
        self.sequence = sequence
        self.loop = loop
        modesKey = modes.map(\.rawValue).sorted()
        targetKey = target.raw.map { UnsafeMutableRawPointer($0) }
        argumentKey = message.takesArgument ? argument.raw.map { UnsafeMutableRawPointer($0) } : nil
        state = Locked((message, nil))
    }

    /// Whether the request has neither run nor been cancelled.
    public var isPending: Bool { state.withLock { $0.message != nil } }

    /// Cancels the request if it has not run, releasing its target and argument. Any thread.
    /// Returns false if it had already run or been cancelled.
    @discardableResult
    public func cancel() -> Bool { PendingRequests.remove([self]) > 0 }

    /// The argument, retained, while the request is pending and its method takes one.
    func pendingArgument() -> Object? {
        state.withLock { s in
            guard let message = s.message, message.takesArgument, let raw = message.argument.raw else { return nil }
            return Object(retaining: raw)
        }
    }

    /// Takes the message out, invalidating the timer: after this the request holds nothing.
    func take() -> CapturedMessage? {
        let (message, timer) = state.withLock { s in
            defer { s = (nil, nil) }
            return s
        }
        if let timer { CFRunLoopTimerInvalidate(timer) }
        return message
    }

    /// `<PerformRequest -[Class selector] pending>`.
    public var description: String {
        let cls = state.withLock { $0.message?.className }
        return "<PerformRequest -[\(cls ?? "?") \(selector.name)] \(cls == nil ? "done" : "pending")>"
    }
}

/// Every delayed request not yet run, by loop, for ordering and cancellation.
enum PendingRequests {
    private struct State {
        var nextSequence: UInt64 = 0
        var requests: [ObjectIdentifier: PerformRequest] = [:]
    }

    private static let table = Locked(State())

    static func nextSequence() -> UInt64 {
        table.withLock { s in
            defer { s.nextSequence += 1 }
            return s.nextSequence
        }
    }

    /// Hands `request` to its loop: a request already due is a block performed in its modes
    /// (no timer to arm), a later one gets a one-shot CF timer. Either way it runs through
    /// `runDue`, so the order holds across both.
    static func add(_ request: PerformRequest, modes: [RunLoop.Mode], cfModes: [CFRunLoopMode]) {
        table.withLock { $0.requests[ObjectIdentifier(request)] = request }
        if request.deadline <= CFAbsoluteTimeGetCurrent() {
            request.loop.runLoop.perform(inModes: modes) { runDue(firing: request) }
            request.loop.wakeUp()
            return
        }
        let timer = CFRunLoopTimerCreateWithHandler(nil, request.deadline, 0, 0, 0) { _ in
            runDue(firing: request)
        }
        // Stored before the timer is added, so that a cancel from another thread finds it.
        request.state.withLock { $0.timer = timer }
        if let timer { for mode in cfModes { CFRunLoopAddTimer(request.loop.cf, timer, mode) } }
    }

    /// Runs, in order, every request of `firing`'s loop and modes due by its deadline.
    private static func runDue(firing: PerformRequest) {
        let due: [PerformRequest] = table.withLock { s in
            let list = s.requests.values.filter {
                $0.loop.key == firing.loop.key && $0.modesKey == firing.modesKey && $0.deadline <= firing.deadline
            }.sorted { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
            for request in list { s.requests[ObjectIdentifier(request)] = nil }
            return list
        }
        for request in due {
            // A request cancelled meanwhile from another thread has no message left.
            request.take()?.deliver(source: "perform request")
        }
    }

    /// Removes `requests` that are still pending and releases what they hold; returns how many.
    @discardableResult
    static func remove(_ requests: [PerformRequest]) -> Int {
        let removed: [PerformRequest] = table.withLock { s in
            requests.filter { s.requests.removeValue(forKey: ObjectIdentifier($0)) != nil }
        }
        return removed.reduce(0) { $0 + ($1.take() != nil ? 1 : 0) }
    }

    static func matching(_ predicate: (PerformRequest) -> Bool) -> [PerformRequest] {
        table.withLock { s in s.requests.values.filter(predicate) }
    }
}
