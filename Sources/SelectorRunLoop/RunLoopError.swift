import DynamicRuntime

/// What a caller of this module can get wrong: each case names what was wrong. Nothing is
/// scheduled when one is thrown.
public enum RunLoopError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The target is nil (or not a runtime object).
    case nilTarget(selector: String)
    /// The method's signature cannot be called with the timer or argument this module passes.
    case unsupportedSignature(className: String, selector: String, signature: String, expected: String)
    /// An interval, delay or tolerance is negative, NaN or infinite.
    case invalidInterval(what: String, value: Double)
    /// The timer is already scheduled on a run loop, or was invalidated.
    case alreadyScheduled(selector: String)
    /// The timer was invalidated and cannot be scheduled again.
    case invalidated(selector: String)
    /// The thread has exited (or was stopped) and its run loop takes no more requests.
    case threadExited(name: String)
    /// The run loop belongs to another thread this module has not seen (see docs/run-loops.md).
    case unknownRunLoop
    /// No mode was given.
    case noModes

    /// A line naming what was wrong.
    public var description: String {
        switch self {
        case let .nilTarget(sel):
            "cannot schedule '\(sel)': the target is nil"
        case let .unsupportedSignature(cls, sel, sig, expected):
            "-[\(cls) \(sel)] has signature \"\(sig)\"; a run loop can only send it \(expected)"
        case let .invalidInterval(what, value):
            "invalid \(what) \(value): it must be finite and not negative"
        case let .alreadyScheduled(sel):
            "the timer for '\(sel)' is already scheduled on a run loop"
        case let .invalidated(sel):
            "the timer for '\(sel)' was invalidated and cannot be scheduled"
        case let .threadExited(name):
            "the thread '\(name)' has exited; its run loop takes no more requests"
        case .unknownRunLoop:
            "the run loop belongs to a thread that has not used SelectorRunLoop yet: pass RunLoop.current from that thread once, or use a RunLoopThread"
        case .noModes:
            "no run-loop mode given"
        }
    }
}

/// A message this module delivered that failed: the run loop kept running.
public struct DeliveryFailure: Error, Sendable, CustomStringConvertible {
    /// What delivered it: "timer", "perform request", "thread"; "cancel" for an `isEqual:` a
    /// cancel sent to match arguments.
    public let source: String
    /// The visible class of the target.
    public let className: String
    /// The selector sent.
    public let selector: Selector
    /// What the runtime threw (an unrecognized selector after forwarding, a method's error…).
    public let error: RuntimeError

    /// One line for a log.
    public var description: String {
        "SelectorRunLoop: \(source) -[\(className) \(selector.name)] failed: \(error)"
    }
}
