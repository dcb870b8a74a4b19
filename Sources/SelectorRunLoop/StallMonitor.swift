import CoreFoundation
import DynamicRuntime
import Foundation

/// A stall: the loop stayed busy (between after-waiting or before-sources and before-waiting)
/// for `consecutiveTimeouts` thresholds in a row.
public struct StallReport: Sendable, CustomStringConvertible {
    /// The last activity seen before the stall: ``RunLoopActivity/beforeSources`` or
    /// ``RunLoopActivity/afterWaiting``.
    public let activity: RunLoopActivity
    /// How many thresholds passed without the loop moving on.
    public let consecutiveTimeouts: Int
    /// The class of the target of the message this module was delivering on that loop, if any.
    public let className: String?
    /// The selector of that message (a timer's, a perform request's), if any.
    public let selector: Selector?

    /// `stall after [beforeSources] ×5 in -[Worker crunch:]`.
    public var description: String {
        let message = selector.map { " in -[\(className ?? "?") \($0.name)]" } ?? ""
        return "stall after \(activity) ×\(consecutiveTimeouts)\(message)"
    }
}

/// The classic lag detector: an observer records each activity of a run loop and signals a
/// semaphore; a watchdog thread waits on it with a timeout. When the loop stays busy
/// `consecutive` thresholds in a row, the handler gets a ``StallReport`` naming the message
/// the loop was delivering (timers, perform requests and rules' run-loop deliveries are this
/// module's, so it knows). Nothing is printed.
public final class StallMonitor: @unchecked Sendable {
    /// How long one wait lasts before it counts as a timeout.
    public let threshold: TimeInterval
    /// How many timeouts in a row make a stall.
    public let consecutive: Int

    private let loop: LoopHandle
    private let slot: CurrentMessage.Slot
    private let observer: RunLoopObserver
    private let signal = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let state = Locked<(activity: RunLoopActivity?, stopped: Bool)>((nil, false))
    private let handler: @Sendable (StallReport) -> Void

    /// Watches `runLoop` in `modes` and starts the watchdog thread; call ``stop()`` to end it.
    ///
    /// - Throws: ``RunLoopError/invalidInterval(what:value:)`` for a threshold that is not
    ///   positive and finite or `consecutive` below 1, or a mode or loop error.
    public init(runLoop: RunLoop = .main, modes: [RunLoop.Mode] = [.common], threshold: TimeInterval = 0.05,
                consecutive: Int = 5, handler: @escaping @Sendable (StallReport) -> Void) throws(RunLoopError) {
        try checkInterval(threshold, "stall threshold")
        guard threshold > 0 else { throw .invalidInterval(what: "stall threshold", value: threshold) }
        guard consecutive >= 1 else { throw .invalidInterval(what: "consecutive timeouts", value: Double(consecutive)) }
        self.threshold = threshold
        self.consecutive = consecutive
        self.handler = handler
        loop = try Loops.handle(runLoop)
        _ = try Modes.cf(modes)
        let state = self.state, signal = self.signal
        observer = RunLoopObserver(activities: .all) { activity in
            state.withLock { $0.activity = activity }
            signal.signal()
        }
        slot = CurrentMessage.watch(loop.cf)
        do {
            try observer.add(to: loop.runLoop, forModes: modes)
        } catch {
            CurrentMessage.unwatch(loop.cf)
            throw error
        }
        Thread.detachNewThread { [self] in watch() }
    }

    private func watch() {
        var timeouts = 0
        while true {
            let result = signal.wait(timeout: .now() + threshold)
            let (activity, stopped) = state.withLock { $0 }
            if stopped { break }
            if result == .timedOut, let activity, activity == .beforeSources || activity == .afterWaiting {
                timeouts += 1
                if timeouts < consecutive { continue }
                let message = slot.value.withLock { $0 }
                handler(StallReport(activity: activity, consecutiveTimeouts: timeouts,
                                    className: message?.className, selector: message?.selector))
            }
            timeouts = 0
        }
        exited.signal()
    }

    /// Removes the observer and joins the watchdog thread. Idempotent; not from the handler.
    public func stop() {
        let first = state.withLock { s in
            defer { s.stopped = true }
            return !s.stopped
        }
        guard first else { return }
        observer.invalidate()
        signal.signal()
        exited.wait()
        CurrentMessage.unwatch(loop.cf)
    }
}
