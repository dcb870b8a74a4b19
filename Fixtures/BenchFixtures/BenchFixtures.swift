import CDynamicRuntime
import DispatchFixtures
import DynamicRuntime
import MessageThrottle

/// The shape of every measured method: `- (long)add:(long)a to:(long)b`, as a C function
/// (declared in DispatchFixtures.h).
public typealias AddIMP = sfb_add_imp

/// Classes, objects, selectors, hooks and rules the benchmark cases send to, built once before
/// anything is timed. Shared by `forwarding bench` and the package-benchmark suite, so both
/// measure exactly the same thing (docs/performance.md).
///
/// Every method is `sfb_add` (DispatchFixtures/add.c, its own translation unit) or, for the
/// closure cases, a Swift closure computing the same `a + b`.
public final class BenchFixtures: @unchecked Sendable {
    /// 9a-9c: methods in the class whose cache is probed.
    public static let selectorCounts = [10, 1_000, 100_000]
    /// 9d-9f: classes between the receiver's and the one defining the method.
    public static let depths = [1, 8, 32]

    /// The class of the plain cases, with `add:to:` (`sfb_add`) and `closureAdd:to:`.
    public let calc: RuntimeClass
    /// The instance of `calc` the plain cases send to.
    public let object: Object
    /// `object` as an unretained reference (no retain per send).
    public let ref: ObjectRef
    /// `sfb_add` on `calc`: cases 1-2, the forwarding targets of 7c-7e, and 9.
    public let add: Selector = "add:to:"
    /// 3a-3c: a Swift-closure method computing `a &+ b`.
    public let closureAdd: Selector = "closureAdd:to:"
    /// 12a: `- (long)add:b:c:d:e:f:` as a C function, summing its six arguments.
    public let sixAdd: Selector = "sixAdd:b:c:d:e:f:"
    /// 12b: the same six-argument sum as a Swift-closure method.
    public let closureSixAdd: Selector = "closureSixAdd:b:c:d:e:f:"
    /// 12a-12b: an instance of a class of its own with both six-argument methods, so that
    /// `calc`'s methods and slots stay those of the other cases.
    public private(set) var sixRef = ObjectRef(nil)
    /// 7a-7b: a selector no class implements.
    public let missing: Selector = "benchMissing:to:"
    /// `sfb_add` read back from the runtime as the IMP of `add:to:`: opaque to the optimizer.
    public let floor: AddIMP
    /// 3c: the closure IMP of `closureAdd:to:` read back (a trampoline slot where available).
    public let closureIMP: AddIMP
    /// 3d-3f and 4d: the same closure method and pass-through hook made with the trampolines
    /// turned off (libffi closures, and `ffi_call` to the original), for a side-by-side run.
    public let ffiClosureAdd: Selector = "ffiClosureAdd:to:"
    /// 3f: the IMP of `ffiClosureAdd:to:` read back (a libffi closure).
    public let ffiClosureIMP: AddIMP
    /// 4d: a pass-through hook made with the trampolines off.
    public let ffiPassHookAdd: Selector = "ffiPassHookAdd:to:"
    /// Per selector count: an instance of a class with that many methods, all of them in its
    /// cache, and 64 of its selectors spread over the table (repeated for small counts).
    public private(set) var wide: [Int: (ref: ObjectRef, selectors: [Selector])] = [:]
    /// Per hierarchy depth: an instance of the leaf class; `add:to:` is defined on the root.
    public private(set) var deep: [Int: ObjectRef] = [:]
    /// 13a-13b: a small object (tagged pointer, tag 0) of a class with `add:to:` (`sfb_add`):
    /// the same sends as 2a-2b, the class read from the pointer's tag.
    public private(set) var small = ObjectRef(nil)

    // MARK: Forwarding (cases 7c-7e): `add:to:` sent to objects that do not implement it

    /// 7c: its class names `object` as the forwarding target (fast forwarding).
    public let targetForwarder: Object
    /// 7d: its class builds an invocation and invokes it on `object` (forwardInvocation:).
    public let invocationForwarder: Object
    /// 7e: a `Proxy` (NSProxy-style) wrapping `object`.
    public let proxy: Object

    // MARK: Hooks and rules (cases 4-6 and 8)

    /// The class whose methods are hooked and throttled; one selector per case, each with the
    /// body `sfb_add`, so that the cases do not share a hook or a rule.
    public let hooked: RuntimeClass
    /// The instance of `hooked` the hook and rule cases send to.
    public let hookedObject: Object
    /// `hookedObject` as an unretained reference.
    public let hookedRef: ObjectRef
    /// 4a: an instead-hook that only calls `proceed()`.
    public let passHookAdd: Selector = "passHookAdd:to:"
    /// 4c: as 4a, over a Swift-closure method (`a &+ b`).
    public let passHookClosureAdd: Selector = "passHookClosureAdd:to:"
    /// 4b: a rule of duration zero: the limiter lets every call through at once.
    public let passRuleAdd: Selector = "passRuleAdd:to:"
    /// 5: `firstly`, window open: every call is dropped.
    public let dropAdd: Selector = "dropAdd:to:"
    /// 6a: `last`, window open: every call replaces the pending one.
    public let lastAdd: Selector = "lastAdd:to:"
    /// 6b: `debounce`, window open: every call replaces the pending one.
    public let debounceAdd: Selector = "debounceAdd:to:"
    /// 6c: `last`, window open, sent to `swapObjects` in turn: each call has another target
    /// than the pending one, so it is captured and swapped in. On a class of its own, so that
    /// `hooked`'s method cache (the other cases' probes) stays as it was; interned last, once
    /// everything else is set up, so that no other selector's address (its cache bucket) moves.
    public var lastSwapAdd: Selector { "lastSwapAdd:to:" }
    /// 6c's two receivers, instances of a class with the one method `lastSwapAdd`.
    public private(set) var swapObjects: [Object] = []
    /// 11b: an instead-hook that only calls `proceed()`, on `ownHookObject` alone.
    public let ownHookAdd: Selector = "ownHookAdd:to:"
    /// 11b: an instance of `hooked` with its own hook on `ownHookAdd`.
    public let ownHookObject: Object
    /// 8a: hooked and unhooked by the case itself.
    public let toggleHookAdd: Selector = "toggleHookAdd:to:"
    /// 8b: a rule applied and discarded by the case itself.
    public let toggleRuleAdd: Selector = "toggleRuleAdd:to:"
    /// Hooked from C: an instead-hook (sfb_hook_proceed) installed with sf_class_hookMethod.
    public let cHookAdd: Selector = "cHookAdd:to:"
    /// Limited by a rule made and applied from C (firstly, an hour, on a C manual clock).
    public let cDropAdd: Selector = "cDropAdd:to:"
    /// 8c: hooked and unhooked from C by the case itself.
    public let toggleCHookAdd: Selector = "toggleCHookAdd:to:"
    /// 8d: limited by the C rule that the case applies and discards.
    public let toggleCRuleAdd: Selector = "toggleCRuleAdd:to:"
    /// The C API's rule handle for case 8d.
    public internal(set) var toggleCRule: sf_rule_t? = nil

    /// Virtual time for every rule: it never moves, so a window opened at set-up stays open
    /// while the cases run, nothing is flushed, and no timer fires.
    public let clock = ManualClock()
    /// The engine the rules are applied to (its delayed messages run on `clock`).
    public let engine: Engine
    /// 8b's rule, applied and discarded by the case (not applied between calls).
    public let toggleRule: Rule
    /// The body of the closure methods (3a-3f, 4c): one closure for all of them. Three equal
    /// closure literals were merged by the compiler into one body and two wrappers that jump to
    /// it, so the cases measured a wrapper's extra jump and frame on top of the closure.
    static let addBody: @Sendable (ObjectRef, Int, Int) -> Int = { _, a, b in a &+ b }
    /// 12a's method: a C function of six `long` arguments.
    static let sixAddIMP: @convention(c) (OpaquePointer?, OpaquePointer?, Int, Int, Int, Int, Int, Int) -> Int = {
        _, _, a, b, c, d, e, f in a &+ b &+ c &+ d &+ e &+ f
    }
    /// 12b's method body.
    static let sixAddBody: @Sendable (ObjectRef, Int, Int, Int, Int, Int, Int) -> Int = {
        _, a, b, c, d, e, f in a &+ b &+ c &+ d &+ e &+ f
    }
    /// The body of 4a's and 8a's hooks.
    public let passThrough: @Sendable (HookContext) throws -> Void = { try $0.proceed() }
    /// Applied rules and hooks, kept for the process's lifetime.
    private var tokens: [HookToken] = []
    private var rules: [Rule] = []
    /// Owning handles for the objects above.
    private var keep: [Object] = []

    /// Builds everything (about a second: the 100,000-method class dominates).
    public init() throws {
        let imp = IMP(address: unsafeBitCast(sfb_add as sfb_add_imp, to: UnsafeRawPointer.self))!
        calc = try RuntimeClass(name: "BenchCalc")
        try calc.addMethod(add, implementation: imp, types: "q@:qq")
        try calc.addMethod(closureAdd, Self.addBody)
        let trampolines = sf_tramp_enabled()
        sf_tramp_set_enabled(0)
        try calc.addMethod(ffiClosureAdd, Self.addBody)
        sf_tramp_set_enabled(trampolines)
        object = try calc.createInstance()
        ref = object.ref
        floor = unsafeBitCast(calc.method(for: add)!.implementation.pointer, to: AddIMP.self)
        closureIMP = unsafeBitCast(calc.method(for: closureAdd)!.implementation.pointer, to: AddIMP.self)
        ffiClosureIMP = unsafeBitCast(calc.method(for: ffiClosureAdd)!.implementation.pointer, to: AddIMP.self)
        // Warm the caches: every case measures a hit.
        let _: Int = try ref.send(add, 1, 2)
        let _: Int = try ref.send(closureAdd, 1, 2)
        let _: Int = try ref.send(ffiClosureAdd, 1, 2)

        for count in Self.selectorCounts {
            let cls = try RuntimeClass(name: "BenchWide\(count)")
            var all: [Selector] = []
            all.reserveCapacity(count)
            for i in 0..<count {
                let sel = Selector("wide\(count)_\(i):to:")
                try cls.addMethod(sel, implementation: imp, types: "q@:qq")
                all.append(sel)
            }
            let obj = try cls.createInstance()
            // Every method sent once: the class's cache holds all `count` selectors.
            for sel in all { let _: Int = try obj.ref.send(sel, 1, 2) }
            wide[count] = (obj.ref, (0..<64).map { all[($0 * count / 64 + $0) % count] })
            keep.append(obj)
        }

        for depth in Self.depths {
            var cls = try RuntimeClass(name: "BenchDeep\(depth)_0")
            try cls.addMethod(add, implementation: imp, types: "q@:qq")
            for level in 1..<depth {
                cls = try RuntimeClass(name: "BenchDeep\(depth)_\(level)", superclass: cls)
            }
            let obj = try cls.createInstance()
            let _: Int = try obj.ref.send(add, 1, 2)
            deep[depth] = obj.ref
            keep.append(obj)
        }

        let smallClass = try RuntimeClass(name: "BenchSmall")
        try smallClass.addMethod(add, implementation: imp, types: "q@:qq")
        try smallClass.registerSmallObjectClass(tag: 0)
        small = try ObjectRef.tagged(tag: 0, payload: 42)
        let _: Int = try small.send(add, 1, 2)

        let target = ref
        let fastForwarding = try RuntimeClass(name: "BenchTargetForwarder")
        try fastForwarding.setForwardingTarget { _, _ in target }
        targetForwarder = try fastForwarding.createInstance()
        let fullForwarding = try RuntimeClass(name: "BenchInvocationForwarder")
        try fullForwarding.setForwardInvocation { invocation in try invocation.invoke(target: target) }
        invocationForwarder = try fullForwarding.createInstance()
        proxy = try Proxy.create(try Proxy.makeClass(name: "BenchProxy"), wrapping: object)
        for forwarder in [targetForwarder, invocationForwarder, proxy] {
            for i in 0..<4 { let _: Int = try forwarder.ref.send(add, i, 1) }
        }

        hooked = try RuntimeClass(name: "BenchHooked")
        for sel in [passHookAdd, passRuleAdd, dropAdd, lastAdd, debounceAdd, toggleHookAdd, toggleRuleAdd, ffiPassHookAdd,
                    cHookAdd, cDropAdd, toggleCHookAdd, toggleCRuleAdd, ownHookAdd] {
            try hooked.addMethod(sel, implementation: imp, types: "q@:qq")
        }
        try hooked.addMethod(passHookClosureAdd, Self.addBody)
        hookedObject = try hooked.createInstance()
        hookedRef = hookedObject.ref
        ownHookObject = try hooked.createInstance()
        engine = Engine(executor: ManualExecutor(clock: clock))
        let hour = Duration.seconds(3600)
        toggleRule = Rule(target: hooked, selector: toggleRuleAdd, duration: hour, mode: .firstly)

        tokens.append(try hooked.hook(passHookAdd, .instead, passThrough))
        tokens.append(try hooked.hook(passHookClosureAdd, .instead, passThrough))
        tokens.append(try ownHookObject.hook(ownHookAdd, .instead, passThrough))
        for i in 0..<4 { let _: Int = try ownHookObject.ref.send(ownHookAdd, i, 1) }
        sf_tramp_set_enabled(0)
        tokens.append(try hooked.hook(ffiPassHookAdd, .instead, passThrough))
        sf_tramp_set_enabled(trampolines)
        for (sel, duration, mode) in [(passRuleAdd, Duration.zero, ThrottleMode.firstly),
                                      (dropAdd, hour, .firstly), (lastAdd, hour, .last),
                                      (debounceAdd, hour, .debounce)] {
            let rule = Rule(target: hooked, selector: sel, duration: duration, mode: mode)
            try engine.apply(rule)
            rules.append(rule)
        }
        try installCHooksAndRules()
        // One call each opens the windows (5: performed, and the window starts; 6: held) and
        // warms the caches and the rules' spare records.
        for sel in [passHookAdd, passHookClosureAdd, passRuleAdd, dropAdd, lastAdd, debounceAdd, toggleHookAdd,
                    toggleRuleAdd, ffiPassHookAdd, cHookAdd, cDropAdd] {
            for i in 0..<4 { let _: Int = try hookedRef.send(sel, i, 1) }
        }
        try engine.apply(toggleRule)
        engine.discard(toggleRule)
        try hooked.hook(toggleHookAdd, .instead, passThrough).remove()
        let six = try RuntimeClass(name: "BenchSixArguments")
        try six.addMethod(sixAdd, implementation: IMP(address: unsafeBitCast(Self.sixAddIMP, to: UnsafeRawPointer.self))!,
                          types: "q@:qqqqqq")
        try six.addMethod(closureSixAdd, Self.sixAddBody)
        let sixObject = try six.createInstance()
        keep.append(sixObject)
        sixRef = sixObject.ref
        let _: Int = try sixRef.send(sixAdd, 1, 2, 3, 4, 5, 6)
        let _: Int = try sixRef.send(closureSixAdd, 1, 2, 3, 4, 5, 6)
        let swapClass = try RuntimeClass(name: "BenchSwapHooked")
        try swapClass.addMethod(lastSwapAdd, implementation: imp, types: "q@:qq")
        swapObjects = [try swapClass.createInstance(), try swapClass.createInstance()]
        let swapRule = Rule(target: swapClass, selector: lastSwapAdd, duration: .seconds(3600), mode: .last)
        try engine.apply(swapRule)
        rules.append(swapRule)
        for i in 0..<4 { let _: Int = try swapObjects[i % 2].ref.send(lastSwapAdd, i, 1) }
    }

    /// Checks that the hooks and rules still do what the cases claim (4: performed; 5, 6:
    /// suppressed, zero returned); throws otherwise. Cheap: a few sends.
    public func verify() throws {
        func check(_ sel: Selector, _ expected: Int, _ what: String) throws {
            let r: Int = try hookedRef.send(sel, 40, 2)
            guard r == expected else { throw BenchFixtureError(message: "\(sel.name) \(what): returned \(r), expected \(expected)") }
        }
        for (forwarder, what) in [(targetForwarder, "forwardingTarget"), (invocationForwarder, "forwardInvocation"),
                                  (proxy, "proxy")] {
            let r: Int = try forwarder.ref.send(add, 40, 2)
            guard r == 42 else { throw BenchFixtureError(message: "\(what): returned \(r), expected 42") }
        }
        try check(passHookAdd, 42, "pass-through hook")
        try check(passHookClosureAdd, 42, "pass-through hook over a closure")
        try check(ffiPassHookAdd, 42, "pass-through hook through libffi")
        try check(passRuleAdd, 42, "pass-through rule")
        try check(dropAdd, 0, "dropped call")
        try check(lastAdd, 0, "captured call (last)")
        try check(debounceAdd, 0, "captured call (debounce)")
        let swapped: Int = try swapObjects[0].ref.send(lastSwapAdd, 40, 2)
        guard swapped == 0 else { throw BenchFixtureError(message: "captured call swapped in (last): returned \(swapped), expected 0") }
        try check(cHookAdd, 42, "pass-through hook from C")
        let own: Int = try ownHookObject.ref.send(ownHookAdd, 40, 2)
        guard own == 42 else { throw BenchFixtureError(message: "per-object hook: returned \(own), expected 42") }
        try check(cDropAdd, 0, "dropped call, rule from C")
        for rule in rules where rule.mode != .firstly {
            guard rule.pendingInvocation != nil else {
                throw BenchFixtureError(message: "\(rule.selector.name): nothing pending; the window closed")
            }
        }
    }
}

/// Fixtures that could not be built, or a case that found them in the wrong state.
public struct BenchFixtureError: Error, CustomStringConvertible {
    /// What went wrong, naming the selector or class.
    public let message: String
    /// The message.
    public var description: String { message }
}
