/// A mode and a duration, with what the rules read on every message worked out when they are
/// set (the windows' spans in nanoseconds, the lodash options of the modes with edges).
extension LimiterStateMachine {
    struct Config: Equatable {
        var mode: ThrottleMode {
            didSet { derive() }
        }
        var duration: Duration {
            didSet { derive() }
        }
        /// `duration`.
        private(set) var span = Span.zero
        /// Whether `duration > .zero` (no limiting otherwise).
        private(set) var limits = false
        /// lodash `debounce` options of the modes with edges; nil for the others.
        private(set) var edges: Edges?
        /// delayedCooldown's delay, no less than zero and no more than `duration`; nil in the other
        /// modes.
        private(set) var delay: Span?

        init(mode: ThrottleMode, duration: Duration) {
            self.mode = mode
            self.duration = duration
            derive()
        }

        static func == (a: Config, b: Config) -> Bool { a.duration == b.duration && a.mode == b.mode }

        private mutating func derive() {
            span = Span(duration)
            limits = duration > .zero
            edges = Self.edgeRule(mode, duration)
            if case .delayedCooldown(let wanted, _) = mode {
                delay = Span(min(max(wanted, .zero), duration))
            } else {
                delay = nil
            }
        }

        /// lodash debounce options for the modes with edges; nil for the other modes.
        private static func edgeRule(_ mode: ThrottleMode, _ duration: Duration) -> Edges? {
            switch mode {
            case .debounce:
                Edges(leading: false, trailing: true, maxWait: nil)
            case .debounceMaxWait(let maxWait):
                Edges(leading: false, trailing: true, maxWait: Span(max(maxWait, duration)))
            case .throttle(let leading, let trailing):
                Edges(leading: leading, trailing: trailing, maxWait: Span(duration))
            case .leadingDebounce(let trailing, let maxWait):
                Edges(leading: true, trailing: trailing, maxWait: maxWait.map { Span(max($0, duration)) })
            case .firstly, .last, .cooldown, .throttleSincePerformed, .delayedCooldown:
                nil
            }
        }
    }

    /// lodash `debounce` options.
    struct Edges: Equatable {
        var leading: Bool
        var trailing: Bool
        var maxWait: Span?
    }
}
