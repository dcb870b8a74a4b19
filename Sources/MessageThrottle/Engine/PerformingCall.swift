import CDynamicRuntime
import CMessageThrottle
import DynamicRuntime

/// The (object, selector) a rule is performing on this thread, and which rule. Another rule's
/// hook that meets such a call lets it through when the performing rule decided for it: an
/// instance rule takes precedence over a class rule, and with rules on every level a replay
/// re-sent from the top passes the levels nearer the receiver, which it passed already.
///
/// The markers live on the performing thread's stack, linked from a C thread-local (one load on
/// every throttled call; a pthread key cost a library call per read and write).
enum PerformingCall {
    struct Marker {
        let object: UnsafeMutableRawPointer?
        let selector: Selector
        /// The performing rule, unretained: it is alive while it performs.
        let performer: ObjectWord<AppliedRule>
        let previous: UnsafeMutableRawPointer?
    }

    /// Whether a rule performing `object`'s `selector` on this thread decided for `rule`.
    /// Inlined as far as the one load that finds no marker, the common case.
    @inline(__always)
    static func isActive(_ ctx: HookContext, decidedFor rule: AppliedRule) -> Bool {
        guard let top = sf_throttle_performing_top() else { return false }
        return isActive(top, ctx.target, ctx.selector, decidedFor: rule)
    }

    private static func isActive(_ top: UnsafeMutableRawPointer, _ object: ObjectRef, _ selector: Selector,
                                 decidedFor rule: AppliedRule) -> Bool {
        var m: UnsafeMutableRawPointer? = top
        while let p = m {
            let marker = p.assumingMemoryBound(to: Marker.self).pointee
            if marker.selector == selector, marker.object == object.raw.map(UnsafeMutableRawPointer.init),
               decides(marker.performer.object, for: rule) {
                return true
            }
            m = marker.previous
        }
        return false
    }

    /// Runs `body` marked as `performer`'s own performance of `object`'s `selector`.
    @inline(__always)
    static func with<T, E: Error>(_ object: ObjectRef, _ selector: Selector, by performer: AppliedRule,
                                  _ body: () throws(E) -> T) throws(E) -> T {
        var marker = Marker(object: object.raw.map(UnsafeMutableRawPointer.init), selector: selector,
                            performer: ObjectWord(unretained: performer), previous: sf_throttle_performing_top())
        // Linked from a thread-local and read only by this thread's own code: no stack protector.
        return try _withUnprotectedUnsafeMutablePointer(to: &marker) { (p) throws(E) in
            sf_throttle_set_performing_top(p)
            defer { sf_throttle_set_performing_top(p.pointee.previous) }
            return try body()
        }
    }

    /// A rule decides for itself, an instance rule for a class rule and the other way round
    /// (their hooks merge position by position), and a class rule for the rules of its
    /// superclasses' levels only when it is theirs to pass: a rule on a subclass's level lets
    /// through what a superclass's rule performs (the call passed it on the way down), while a
    /// superclass's rule still limits what the subclass's rule performs.
    private static func decides(_ performer: AppliedRule, for rule: AppliedRule) -> Bool {
        if performer === rule { return true }
        guard let mine = classLevel(rule.rule.target), let theirs = classLevel(performer.rule.target) else { return true }
        return mine !== theirs && mine.isSubclass(of: theirs)
    }

    private static func classLevel(_ target: RuleTarget) -> RuntimeClass? {
        switch target {
        case let .instances(c), let .classMethods(c): c
        case .instance: nil
        }
    }
}
