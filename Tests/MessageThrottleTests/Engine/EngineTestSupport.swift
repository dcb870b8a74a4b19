import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

// Helpers for the engine-level tests (Engine*.swift): real runtime classes, real hooks and
// sends, on a virtual clock. Runtime classes are registered process-wide by name, so every
// fixture makes classes with unique names.

/// One real call of a method, as the method itself saw it.
struct Hit: Equatable, CustomStringConvertible {
    var arg: Int
    var ms: Int
    var description: String { "\(arg)@\(ms)" }
}

func hit(_ arg: Int, _ ms: Int) -> Hit { Hit(arg: arg, ms: ms) }

/// Thread-safe record of the real calls the fixture's methods received.
final class CallLog: @unchecked Sendable {
    private let lock = NSLock()
    private let clock: any ThrottleClock
    private let origin: ThrottleInstant
    private var _hits: [Hit] = []
    private var _threads: [pthread_t] = []
    private var _strings: [String] = []
    private var _objectTags: [Int] = []
    private var _classHits: [Hit] = []
    private var onCall: (@Sendable (Hit) -> Void)?

    init(clock: any ThrottleClock) {
        self.clock = clock
        origin = clock.now
    }

    /// Runs for every `tick:` (on the thread that performs it).
    func setOnCall(_ body: (@Sendable (Hit) -> Void)?) { lock.withLock { onCall = body } }

    var ms: Int { Int((clock.now.nanoseconds - origin.nanoseconds) / 1_000_000) }

    func tick(_ arg: Int) {
        let h = Hit(arg: arg, ms: ms)
        let callback = lock.withLock { () -> (@Sendable (Hit) -> Void)? in
            _hits.append(h)
            _threads.append(pthread_self())
            return onCall
        }
        callback?(h)
    }

    func classTick(_ arg: Int) { lock.withLock { _classHits.append(Hit(arg: arg, ms: ms)) } }
    func string(_ s: String) { lock.withLock { _strings.append(s) } }
    func objectTag(_ t: Int) { lock.withLock { _objectTags.append(t) } }

    var hits: [Hit] { lock.withLock { _hits } }
    var threads: [pthread_t] { lock.withLock { _threads } }
    var classHits: [Hit] { lock.withLock { _classHits } }
    var strings: [String] { lock.withLock { _strings } }
    var objectTags: [Int] { lock.withLock { _objectTags } }
    var count: Int { lock.withLock { _hits.count } }
}

/// A fresh class hierarchy with the methods the engine tests send, an engine whose delayed
/// messages run on a virtual clock, and a log of real calls.
///
/// `cls` (named uniquely) defines:
/// - `tick:` `q@:q` — logs the argument, returns `arg * 10`;
/// - `take:` `v@:@` — logs the argument's `tag` ivar (-1 for nil);
/// - `say:` `v@:*` — logs the C string;
/// - `make:` `@@:q` — returns a new `payloadClass` instance tagged `arg` (+1 for the caller);
/// - `+stamp:` `q@:q` (class method) — logs it in `classHits`, returns `arg * 100`.
///
/// `payloadClass` has an Int ivar `tag`; use `payload(_:)` to make one.
final class EngineFixture {
    let clock: ManualClock
    let executor: ManualExecutor
    let engine: Engine
    let cls: RuntimeClass
    let payloadClass: RuntimeClass
    let log: CallLog

    init(_ base: String = #function, superclass: RuntimeClass? = nil, defineMethods: Bool = true) throws {
        // Objects of earlier tests may still wait for a grace period (held by retired hook
        // chains): free them now, so live-object baselines taken after this are stable.
        collectRuntimeGarbage()
        clock = ManualClock()
        executor = ManualExecutor(clock: clock)
        engine = Engine(executor: executor)
        let log = CallLog(clock: clock)
        self.log = log
        payloadClass = try RuntimeClass(name: uniqueClassName(base + "Payload"), ivars: [("tag", .int64)])
        cls = try RuntimeClass(name: uniqueClassName(base), superclass: superclass)
        if defineMethods { try Self.defineMethods(on: cls, payloadClass: payloadClass, log: log) }
    }

    static func defineMethods(on cls: RuntimeClass, payloadClass: RuntimeClass, log: CallLog) throws {
        try cls.addMethod("tick:") { (_: ObjectRef, n: Int) -> Int in
            log.tick(n)
            return n * 10
        }
        try cls.addMethod("take:") { (_: ObjectRef, o: ObjectRef) in
            log.objectTag(o.isNil ? -1 : try o.value(ofIvar: "tag", as: Int.self))
        }
        try cls.addMethod("say:") { (_: ObjectRef, s: CString) in
            log.string(s.string ?? "<NULL>")
        }
        try cls.addMethod("make:") { (_: ObjectRef, n: Int) -> Object? in
            let o = try payloadClass.createInstance()
            try o.setValue(n, forIvar: "tag")
            return o
        }
        try cls.metaclass.addMethod("stamp:") { (_: ObjectRef, n: Int) -> Int in
            log.classTick(n)
            return n * 100
        }
    }

    /// An instance of `cls`.
    func instance() throws -> Object { try cls.createInstance() }

    /// An instance the test owns alone: deallocated when the test drops it.
    func mortalInstance() throws -> Object { try cls.createInstance() }

    func payload(_ tag: Int) throws -> Object {
        let o = try payloadClass.createInstance()
        try o.setValue(tag, forIvar: "tag")
        return o
    }

    /// Advances the virtual clock to `ms` (running due work first), then sends `tick:`.
    @discardableResult
    func tick(_ receiver: some MessageReceiver, _ arg: Int, at ms: Int) throws -> Int {
        advance(to: ms)
        return try receiver.send("tick:", arg, as: Int.self)
    }

    /// Sends `take:` with `arg`, which stays alive at least until the send returns.
    func take(_ receiver: some MessageReceiver, _ arg: Object?) throws {
        try withExtendedLifetime(arg) { try receiver.send("take:", arg?.ref ?? .nil, as: Void.self) }
    }

    /// Sends `take:` with a new payload tagged `tag`, owned by nobody but the call.
    func take(_ receiver: some MessageReceiver, payloadTagged tag: Int) throws {
        try take(receiver, try payload(tag))
    }

    func advance(to ms: Int) { clock.advance(to: instant(ms: ms)) }

    var hits: [Hit] { log.hits }

    /// Discards every rule the fixture's engine still has.
    func tearDown() { engine.discardAll() }
}

extension XCTestCase {
    /// A fixture whose rules are discarded when the test ends.
    func makeFixture(_ base: String = #function, superclass: RuntimeClass? = nil) throws -> EngineFixture {
        let fx = try EngineFixture(base, superclass: superclass)
        addTeardownBlock(releasing: fx) { $0.tearDown() }
        return fx
    }

    /// `addTeardownBlock` that lets go of `value` once the block has run.
    ///
    /// swift-corelibs-xctest keeps every test case, and the teardown blocks it was given, until
    /// the process exits; a block that captures an engine keeps it (and everything it holds)
    /// alive for the whole run. LeakSanitizer then reports the Swift weak-reference side table
    /// of such an object: the object points to it only through its refcount field, in a form
    /// LSan does not recognise. Releasing after teardown avoids that without a suppression (a
    /// suppressed side table would also hide its object if that really leaked).
    func addTeardownBlock<T: AnyObject>(releasing value: T, _ body: @escaping (T) -> Void) {
        let box = Locked<T?>(value)
        addTeardownBlock {
            let taken = box.withLock { held -> T? in
                defer { held = nil }
                return held
            }
            if let taken { body(taken) }
        }
    }
}

/// Every mode, for loops over modes.
let allEngineModes: [ThrottleMode] = [
    .firstly, .last, .debounce, .debounceMaxWait(.milliseconds(150)),
    .throttle(leading: true, trailing: true), .throttle(leading: true, trailing: false),
    .throttle(leading: false, trailing: true), .cooldown,
    .leadingDebounce(), .leadingDebounce(trailing: false), .leadingDebounce(maxWait: .milliseconds(150)),
    .throttleSincePerformed(latest: true), .throttleSincePerformed(latest: false),
    // A delay longer than the duration counts as the duration: held to the window's end.
    .delayedCooldown(delay: .zero), .delayedCooldown(delay: .seconds(3600)),
]

/// Whether a lone message is performed at once in `mode` (leading edge) rather than later.
func performsLoneMessageAtOnce(_ mode: ThrottleMode) -> Bool {
    switch mode {
    case .firstly, .cooldown, .leadingDebounce, .throttleSincePerformed: true
    case let .throttle(leading, _): leading
    case let .delayedCooldown(delay, _): delay <= .zero
    case .last, .debounce, .debounceMaxWait: false
    }
}

/// Lets the runtime free what hook removals retired (closures, chains), for leak counts.
func collectRuntimeGarbage() {
    Runtime.state.collectGarbage()
}

/// The record behind an invocation handle, compared with `===` without holding a strong
/// reference that would stop the engine from reusing it.
func recordIdentity(_ inv: Invocation) -> ObjectIdentifier { ObjectIdentifier(inv.storage) }
