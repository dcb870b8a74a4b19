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

    /// lodash `debounce(wait, {leading: true})`: the first message after
    /// quiet is performed at once; a burst that follows it is debounced as
    /// ``debounce`` (its latest message is performed once `d` has passed
    /// without a new one) when `trailing` is true, and dropped otherwise
    /// (underscore `debounce(…, immediate)`: silent until quiet). With
    /// `maxWait` a steady stream still performs its latest message at least
    /// every `maxWait` (values below `d` count as `d`); without it a burst of
    /// any length is performed twice at most: at its start and after it.
    case leadingDebounce(trailing: Bool = true, maxWait: Duration? = nil)

    /// RxSwift `throttle(_:latest: true)` and swift-async-algorithms
    /// `throttle(for:latest:)`: at most one performance per `d`, the window
    /// measured from the last *performance*, not from the last message. A
    /// message arriving `d` or more after the last performance is performed
    /// at once; one arriving sooner is held (the latest one when `latest`,
    /// else the first of the window) and performed when the window ends,
    /// which starts the next window. (RxSwift's `latest: false` drops every
    /// message inside the window: that is ``firstly``.)
    case throttleSincePerformed(latest: Bool)

    /// AXKit `ax_dispatch_cooldown(delay, cooldown, token, …)`: a message
    /// that arrives while not cooling is accepted and performed `delay`
    /// later (at once, by the caller, when `delay` is zero); accepting it
    /// starts a cooldown of `d` at its arrival. Messages arriving while
    /// cooling are rejected, as in ``cooldown``. Limiters given the same
    /// `token` share one cooldown (and must share a clock). A delay longer
    /// than `d` counts as `d`. `Limiter.cancelPending()` stops the delayed
    /// message; the cooldown goes on.
    case delayedCooldown(delay: Duration, token: CooldownToken? = nil)

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
        case .leadingDebounce(let trailing, let maxWait):
            "leadingDebounce(trailing: \(trailing)" + (maxWait.map { ", maxWait: \($0))" } ?? ")")
        case .throttleSincePerformed(let latest): "throttleSincePerformed(latest: \(latest))"
        case .delayedCooldown(let delay, let token):
            "delayedCooldown(delay: \(delay)" + (token.map { ", token: \($0))" } ?? ")")
        }
    }
}
