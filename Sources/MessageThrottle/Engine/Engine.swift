import Dispatch
import DynamicRuntime

/// Applies and discards rules. Thread-safe; one rule per selector per class hierarchy across
/// all engines, as in MessageThrottle, unless the engines involved opt in to rules on every
/// level (``allowsRulesOnEveryLevel``). An instance rule takes precedence over a class rule
/// for its instance.
public final class Engine: @unchecked Sendable {
    /// The shared engine.
    public static let shared = Engine()

    /// Runs delayed messages of rules that name no executor.
    public let defaultExecutor: any ThrottleExecutor

    /// This engine's rules.
    private struct Rules {
        var applied: [ObjectIdentifier: Rule] = [:]
        /// The same rules by selector: `rule(for:selector:)` looks at the few for one selector.
        var bySelector: [Selector: [Rule]] = [:]
    }

    private let local = Locked(Rules())
    private let everyLevel = Locked(false)

    /// Whether this engine's class rules for a selector may sit on a class and on its
    /// superclasses or subclasses at once (default false: refused, as MessageThrottle does).
    ///
    /// Each level then limits its own calls: a message to an instance of the subclass passes
    /// the subclass's rule first and, when it reaches the superclass's implementation (the
    /// inherited method, or a `super` send from the override), the superclass's rule too, each
    /// with its own window. Both rules must belong to engines that allow it; two rules on the
    /// same class are still refused. Set it before applying rules.
    public var allowsRulesOnEveryLevel: Bool {
        get { everyLevel.withLock { $0 } }
        set { everyLevel.withLock { $0 = newValue } }
    }

    /// All rules applied anywhere, for the one-rule-per-hierarchy check. Applying and
    /// discarding hold it throughout (taken before a rule's or an engine's own lock).
    static let registry = Locked<[ObjectIdentifier: Rule]>([:])

    /// An engine whose delayed messages run on `executor` (default: its own serial queue).
    public init(executor: (any ThrottleExecutor)? = nil) {
        defaultExecutor = executor ?? DispatchQueueExecutor(queue: DispatchQueue(label: "MessageThrottle.Engine"))
    }

    /// The rules applied to this engine.
    public var rules: [Rule] { local.withLock { Array($0.applied.values) } }

    /// The rule that limits `selector` for `receiver`: its instance rule, else the class rule
    /// of its class or a superclass (for a class object: its class-method rule).
    public func rule(for receiver: some MessageReceiver, selector: Selector) -> Rule? {
        guard let all = local.withLock({ $0.bySelector[selector] }) else { return nil }
        if let cls = receiver as? RuntimeClass {
            return all.filter { r in
                if case let .classMethods(c) = r.target { return cls.instanceClass.isSubclass(of: c) }
                return false
            }.max { a, b in Engine.depth(a) < Engine.depth(b) }
        }
        let raw = receiver.receiver.raw.map(UnsafeMutableRawPointer.init)
        if let instance = all.first(where: { r in
            if case let .instance(_, id, _) = r.target { return id == raw }
            return false
        }) { return instance }
        guard let cls = receiver.runtimeClass else { return nil }
        // With rules on every level, the nearest class's rule is the one a send meets first.
        return all.filter { r in
            if case let .instances(c) = r.target { return cls.isSubclass(of: c) }
            return false
        }.max { a, b in Engine.depth(a) < Engine.depth(b) }
    }

    /// How far below its root a class rule's class is (0 for other targets).
    private static func depth(_ rule: Rule) -> Int {
        var cls: RuntimeClass?
        switch rule.target {
        case let .instances(c), let .classMethods(c): cls = c
        case .instance: return 0
        }
        var n = 0
        while let c = cls?.superclass {
            n += 1
            cls = c
        }
        return n
    }

    /// Whether some engine has an instance rule for `selector` on `receiver`.
    static func hasInstanceRule(_ receiver: ObjectRef, _ selector: Selector) -> Bool {
        let raw = receiver.raw.map(UnsafeMutableRawPointer.init)
        return registry.withLock { rules in
            rules.values.contains { r in
                if case let .instance(_, id, _) = r.target { return id == raw && r.selector == selector }
                return false
            }
        }
    }

    /// Applies `rule`: hooks its selector on its target and starts limiting.
    ///
    /// - Throws: `conflictingRule` naming the class that already has a rule for the selector,
    ///   `alreadyApplied`, `targetDeallocated`, or `runtime` when the hook is refused.
    public func apply(_ rule: Rule) throws(ThrottleError) {
        // The target instance, held while hooking it. Declared out here so that it is released
        // after the registry lock: it may be the last reference (the object's pending message
        // having just run on another thread), and its dealloc observers discard rules, which
        // takes that lock.
        var object: Object?
        defer { object = nil }
        try Engine.registry.withLock { (registry) throws(ThrottleError) in
            guard rule.applied == nil, registry[ObjectIdentifier(rule)] == nil else {
                throw .alreadyApplied(selector: rule.selector.name, target: rule.target.description)
            }
            let everyLevel = allowsRulesOnEveryLevel
            if let conflict = registry.values.first(where: { existing in
                Engine.conflicts(existing, rule, everyLevel: everyLevel && existing.applied?.engine.allowsRulesOnEveryLevel == true)
            }) {
                throw .conflictingRule(selector: rule.selector.name, target: rule.target.description,
                                       existingOn: conflict.target.description)
            }
            let state = AppliedRule(rule: rule, engine: self, executor: rule.executor ?? defaultExecutor)
            let hookState = AppliedRule.Hooked(state)
            let body: @Sendable (HookContext) throws -> Void = { ctx in try hookState.state.handle(ctx) }
            if case let .instance(weak, _, _) = rule.target {
                object = weak.object
                if object == nil { throw .targetDeallocated(selector: rule.selector.name) }
            }
            do throws(RuntimeError) {
                switch rule.target {
                case .instance:
                    guard let object else { return }
                    state.hook = try object.hook(rule.selector, .instead, body)
                    state.deallocToken = object.onDeallocate { [weak self, weak rule] _ in
                        if let rule { self?.discard(rule, pending: .cancel) }
                    }
                case let .instances(cls):
                    state.hook = try cls.hook(rule.selector, .instead, body)
                case let .classMethods(cls):
                    state.hook = try cls.hookClassMethod(rule.selector, .instead, body)
                }
            } catch {
                throw .runtime(error)
            }
            registry[ObjectIdentifier(rule)] = rule
            rule.setApplied(state)
            local.withLock {
                $0.applied[ObjectIdentifier(rule)] = rule
                $0.bySelector[rule.selector, default: []].append(rule)
            }
        }
    }

    /// Discards `rule`: its hook is removed (the method is restored when no other hook needs
    /// it) and a pending delayed message is cancelled or flushed. Returns false if the rule
    /// was not applied here; discarding twice is harmless.
    @discardableResult
    public func discard(_ rule: Rule, pending: PendingPolicy = .cancel) -> Bool {
        let state: AppliedRule? = Engine.registry.withLock { registry in
            guard let state = rule.applied, state.engine === self else { return nil }
            registry[ObjectIdentifier(rule)] = nil
            rule.setApplied(nil)
            local.withLock {
                $0.applied[ObjectIdentifier(rule)] = nil
                $0.bySelector[rule.selector]?.removeAll { $0 === rule }
                if $0.bySelector[rule.selector]?.isEmpty == true { $0.bySelector[rule.selector] = nil }
            }
            return state
        }
        guard let state else { return false }
        state.beginDiscard(pending)
        state.hook?.remove()
        if let token = state.deallocToken, case let .instance(weak, _, _) = rule.target {
            weak.object?.removeDeallocObserver(token)
        }
        state.finishDiscard(pending)
        return true
    }

    /// Discards every rule of this engine.
    public func discardAll(pending: PendingPolicy = .cancel) {
        for r in rules { discard(r, pending: pending) }
    }

    /// One rule per selector per class hierarchy (per class when `everyLevel`); instance rules
    /// only clash on one object.
    static func conflicts(_ a: Rule, _ b: Rule, everyLevel: Bool = false) -> Bool {
        guard a.selector == b.selector else { return false }
        switch (a.target, b.target) {
        case let (.instance(_, x, _), .instance(_, y, _)):
            return x == y
        case let (.instances(x), .instances(y)), let (.classMethods(x), .classMethods(y)):
            if everyLevel { return x === y }
            return x.isSubclass(of: y) || y.isSubclass(of: x)
        default:
            return false
        }
    }
}
