/// How a ``Limiter`` thins out a stream of messages.
///
/// Every mode is parameterised by the limiter's `duration` `d`. Windows are
/// half-open, `[start, start + d)`: a message arriving exactly at
/// `start + d` belongs to the next window. When a deadline and a message fall
/// on the same instant, the deadline is processed first. A duration of zero
/// or less disables limiting: every message is performed at once, in every
/// mode. See `docs/modes.md` for state machines and timelines.
public enum ThrottleMode: Hashable, Sendable, CustomStringConvertible {
    /// Perform the first message at once, then ignore (drop) messages until
    /// `d` has passed since the last performed one (MessageThrottle
    /// `MTPerformModeFirstly`).
    case firstly

    /// At the end of each window, perform the last message received in it.
    /// A window opens with the first message received while none is open and
    /// lasts `d` (MessageThrottle `MTPerformModeLast`).
    case last

    /// Perform the last message once `d` has passed without a new message
    /// (MessageThrottle `MTPerformModeDebounce`; lodash `debounce`). The
    /// default mode.
    case debounce

    /// Like ``debounce`` but a steady stream still performs its latest
    /// message at least every `maxWait` since the last performance
    /// (lodash `debounce` with `maxWait`; values below `d` count as `d`).
    case debounceMaxWait(Duration)

    /// lodash `throttle`: at most one performance per `d`, on the leading
    /// edge (at once) and/or the trailing edge (the latest message, at the
    /// end of the window). With both edges a lone message is performed once.
    /// Equivalent to ``debounceMaxWait(_:)`` with `maxWait == d` plus a
    /// leading edge. With neither edge every message is dropped.
    case throttle(leading: Bool, trailing: Bool)

    /// AXKit `ax_dispatch_cooldown`: perform a message at once unless
    /// cooling down; cooling lasts `d` from the last performed message.
    /// Messages arriving while cooling are rejected: handed to the limiter's
    /// `reject` callback and dropped, never performed.
    case cooldown

    /// The mode used when none is given: ``debounce``.
    public static var `default`: ThrottleMode { .debounce }

    /// A short name, e.g. `throttle(leading: true, trailing: false)`.
    public var description: String {
        switch self {
        case .firstly: "firstly"
        case .last: "last"
        case .debounce: "debounce"
        case .debounceMaxWait(let maxWait): "debounce(maxWait: \(maxWait))"
        case .throttle(let leading, let trailing): "throttle(leading: \(leading), trailing: \(trailing))"
        case .cooldown: "cooldown"
        }
    }
}
