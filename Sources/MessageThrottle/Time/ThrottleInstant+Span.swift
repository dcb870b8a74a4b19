/// A duration as the whole nanoseconds the limiter's arithmetic needs, worked out once when the
/// duration is set: `Duration` keeps attoseconds in 128 bits, and converting it on every message
/// cost a captured call more than the rest of its decision.
struct Span: Equatable {
    /// Truncated toward zero, saturated: what `ThrottleInstant + Duration` adds.
    let whole: Int64
    /// Rounded up, saturated: an elapsed whole number of nanoseconds `e` is `>= duration`
    /// exactly when `e >= atLeast` (and `< duration` when `e < atLeast`).
    let atLeast: Int64

    init(_ duration: Duration) {
        whole = duration.saturatingNanoseconds
        let (_, attoseconds) = duration.components
        let fraction = attoseconds % 1_000_000_000
        atLeast = fraction > 0 && whole < .max ? whole + 1 : whole
    }

    static let zero = Span(.zero)
}

extension ThrottleInstant {
    /// The instant `span` later (saturating), as `self + duration` for the span's duration.
    @inline(__always)
    func adding(_ nanoseconds: Int64) -> ThrottleInstant {
        let (sum, overflow) = self.nanoseconds.addingReportingOverflow(nanoseconds)
        if overflow { return ThrottleInstant(nanoseconds: nanoseconds > 0 ? .max : .min) }
        return ThrottleInstant(nanoseconds: sum)
    }

    /// Whole nanoseconds from `earlier` to `self` (saturating), as `self - earlier`.
    @inline(__always)
    func nanoseconds(since earlier: ThrottleInstant) -> Int64 {
        let (difference, overflow) = nanoseconds.subtractingReportingOverflow(earlier.nanoseconds)
        if overflow { return self > earlier ? .max : .min }
        return difference
    }

    /// Whether at least `span` has passed from `earlier` to `self` (`self - earlier >= d`).
    @inline(__always)
    func isAtLeast(_ span: Span, after earlier: ThrottleInstant) -> Bool {
        nanoseconds(since: earlier) >= span.atLeast
    }
}
