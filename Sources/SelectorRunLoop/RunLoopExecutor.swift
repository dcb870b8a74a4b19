import CoreFoundation
import Foundation
import MessageThrottle

/// Delivers a throttle rule's deferred messages (last, debounce, trailing throttle) on a run
/// loop, in given modes: the Cocoa way of MessageThrottle on the main thread.
///
/// In the default mode only, deferred messages wait while the loop runs another mode (a
/// tracking mode during a scroll) and are performed once it is back in the default mode; in
/// `.common` they are performed in every common mode. `DispatchQueueExecutor` ignores modes.
/// Deadlines are read on `MonotonicClock` and handed to CoreFoundation timers made with a
/// handler (released at invalidation; Foundation's block `Timer` leaks on Linux).
public struct RunLoopExecutor: ThrottleExecutor {
    let loop: LoopHandle
    let cfModes: ModeNames
    /// The modes deferred work runs in.
    public let modes: [RunLoop.Mode]

    /// An executor for `runLoop` (the main loop, this thread's, or a `RunLoopThread`'s) in `modes`.
    ///
    /// - Throws: ``RunLoopError/noModes`` or ``RunLoopError/unknownRunLoop``.
    public init(runLoop: RunLoop = .main, modes: [RunLoop.Mode] = [.default]) throws(RunLoopError) {
        loop = try Loops.handle(runLoop)
        cfModes = ModeNames(names: try Modes.cf(modes))
        self.modes = modes
    }

    /// The run loop work is delivered on.
    public var runLoop: RunLoop { loop.runLoop }

    /// `MonotonicClock`: deadlines are converted to CoreFoundation's clock when scheduled.
    public var clock: any ThrottleClock { MonotonicClock() }

    /// Performs `work` on the loop in ``modes``, waking it.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        loop.runLoop.perform(inModes: modes, block: work)
        loop.wakeUp()
    }

    /// Performs `work` on the loop in ``modes`` once `deadline` has passed.
    public func schedule(at deadline: ThrottleInstant, _ work: @escaping @Sendable () -> Void) -> any ThrottleCancellable {
        let seconds = Double((deadline - MonotonicClock().now).saturatingNanosecondsForRunLoop) / 1e9
        let timer = CFRunLoopTimerCreateWithHandler(nil, Modes.absolute(after: max(seconds, 0)), 0, 0, 0) { _ in work() }
        let cancellable = RunLoopTimerCancellable(timer: timer)
        if let timer { for mode in cfModes.names { CFRunLoopAddTimer(loop.cf, timer, mode) } }
        return cancellable
    }
}

/// Invalidates a CoreFoundation timer, which releases its handler (and the work it holds).
struct RunLoopTimerCancellable: ThrottleCancellable, @unchecked Sendable {
    // CFRunLoopTimerInvalidate is thread-safe.
    let timer: CFRunLoopTimer?

    func cancel() { if let timer { CFRunLoopTimerInvalidate(timer) } }
}

extension Duration {
    /// Whole nanoseconds, clamped to Int64.
    var saturatingNanosecondsForRunLoop: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds > 0 ? .max : .min }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}

/// CoreFoundation mode names, immutable once made.
struct ModeNames: @unchecked Sendable {
    // CFStrings are immutable.
    let names: [CFRunLoopMode]
}
