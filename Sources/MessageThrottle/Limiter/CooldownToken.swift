import DynamicRuntime

/// A cooldown shared by several limiters (AXKit's cooldown token): while one of them is
/// cooling after accepting a message, the others reject theirs too.
///
/// Used by ``ThrottleMode/delayedCooldown(delay:token:)``. Each limiter cools for its own
/// duration from the message it accepted; the token keeps the latest end. The limiters sharing
/// a token must read one clock (instants from different clocks do not compare). Thread-safe;
/// tokens are equal only to themselves.
public final class CooldownToken: Hashable, Sendable, CustomStringConvertible {
    /// The name shown in descriptions.
    public let name: String
    // The instant the shared cooldown ends; `Locked` is a leaf lock here (taken under a
    // limiter's lock, never the other way round).
    private let coolingUntil = Locked<ThrottleInstant?>(nil)

    /// Creates a token, named `name` in descriptions.
    public init(name: String = "cooldown") {
        self.name = name
    }

    /// Whether a limiter sharing this token is cooling at `now`.
    public func isCooling(at now: ThrottleInstant) -> Bool {
        coolingUntil.withLock { until in until.map { now < $0 } ?? false }
    }

    /// Starts cooling until `now + duration` unless already cooling; returns whether it started.
    func begin(at now: ThrottleInstant, for duration: Duration) -> Bool {
        coolingUntil.withLock { until in
            if let end = until, now < end { return false }
            until = now + duration
            return true
        }
    }

    /// Ends the shared cooldown at once.
    public func reset() {
        coolingUntil.withLock { $0 = nil }
    }

    /// Tokens are equal only to themselves.
    public static func == (lhs: CooldownToken, rhs: CooldownToken) -> Bool { lhs === rhs }

    /// Hashes the token's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The token's name.
    public var description: String { name }
}
