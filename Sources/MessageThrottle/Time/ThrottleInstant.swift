/// A point on a throttle clock's timeline, in nanoseconds since that clock's
/// (arbitrary) origin.
///
/// Instants from different clocks are not comparable in any meaningful way;
/// a ``Limiter`` only ever compares instants read from its executor's clock.
/// Arithmetic saturates instead of trapping, so "infinitely far" durations
/// (e.g. `.seconds(Int64.max)`) are safe.
public struct ThrottleInstant: InstantProtocol, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: Int64

    /// Creates an instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The clock's origin.
    public static let zero = ThrottleInstant(nanoseconds: 0)

    /// The latest representable instant ("never").
    public static let distantFuture = ThrottleInstant(nanoseconds: .max)

    /// Orders instants by their position on the timeline.
    public static func < (lhs: ThrottleInstant, rhs: ThrottleInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// The instant `duration` after `instant` (saturating).
    public static func + (instant: ThrottleInstant, duration: Duration) -> ThrottleInstant {
        ThrottleInstant(nanoseconds: saturatingAdd(instant.nanoseconds, duration.saturatingNanoseconds))
    }

    /// The instant `duration` before `instant` (saturating).
    public static func - (instant: ThrottleInstant, duration: Duration) -> ThrottleInstant {
        let ns = duration.saturatingNanoseconds
        return ThrottleInstant(nanoseconds: saturatingAdd(instant.nanoseconds, ns == .min ? .max : -ns))
    }

    /// The signed time from `rhs` to `lhs` (`lhs - rhs`).
    public static func - (lhs: ThrottleInstant, rhs: ThrottleInstant) -> Duration {
        let (difference, overflow) = lhs.nanoseconds.subtractingReportingOverflow(rhs.nanoseconds)
        if overflow { return lhs > rhs ? .nanoseconds(Int64.max) : .nanoseconds(Int64.min) }
        return .nanoseconds(difference)
    }

    /// Moves the instant `duration` later (saturating).
    public static func += (instant: inout ThrottleInstant, duration: Duration) {
        instant = instant + duration
    }

    /// The signed time from `self` to `other`.
    public func duration(to other: ThrottleInstant) -> Duration {
        other - self
    }

    /// The instant `duration` later (saturating); what `Clock` code calls.
    public func advanced(by duration: Duration) -> ThrottleInstant {
        self + duration
    }

    /// A human-readable form, in milliseconds since the origin.
    public var description: String {
        let ms = Double(nanoseconds) / 1_000_000
        return "t=\(ms)ms"
    }

    private static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        if overflow { return b > 0 ? .max : .min }
        return sum
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`'s range.
    var saturatingNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds > 0 ? .max : .min }
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds > 0 ? .max : .min }
        return total
    }
}
