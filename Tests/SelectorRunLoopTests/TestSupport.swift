import DynamicRuntime
import Foundation
import SelectorRunLoop
import XCTest

private let counter = Locked(0)

/// A class name no other test uses.
func uniqueName(_ base: String) -> String {
    "RL\(base)_\(counter.mutate { $0 += 1; return $0 })"
}

/// A mutex-protected value.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: Value
    init(_ value: Value) { _value = value }
    var value: Value { lock.withLock { _value } }
    @discardableResult
    func mutate<T>(_ body: (inout Value) throws -> T) rethrows -> T { try lock.withLock { try body(&_value) } }
}

/// One delivery as the method saw it: which selector, with which argument, on which thread,
/// in which run-loop mode.
struct Delivery: Equatable, @unchecked Sendable {
    var selector: String
    var argument: ObjectRef
    var onMainThread: Bool
    var thread: ObjectIdentifier
    var mode: String?
}

/// A runtime class whose methods record their deliveries: `ping` (no argument), `tick:` and
/// `take:` (one object), `add:to:` (two integers, not callable by a run loop), `count:` (an
/// integer, neither).
final class Recorder: @unchecked Sendable {
    let cls: RuntimeClass
    let log = Locked<[Delivery]>([])
    /// Runs inside `tick:` with the timer's object, e.g. to invalidate it.
    let onTick = Locked<(@Sendable (ObjectRef) -> Void)?>(nil)

    init(_ base: String = "Recorder") throws {
        cls = try RuntimeClass(name: uniqueName(base))
        let log = self.log, onTick = self.onTick
        try cls.addMethod("ping") { (_: ObjectRef) in log.mutate { $0.append(.now("ping", .nil)) } }
        try cls.addMethod("tick:") { (_: ObjectRef, arg: ObjectRef) in
            log.mutate { $0.append(.now("tick:", arg)) }
            onTick.value?(arg)
        }
        try cls.addMethod("take:") { (_: ObjectRef, arg: ObjectRef) in log.mutate { $0.append(.now("take:", arg)) } }
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        try cls.addMethod("count:") { (_: ObjectRef, _: Int) in }
    }

    func make() throws -> Object { try cls.createInstance() }
    var count: Int { log.value.count }
    var selectors: [String] { log.value.map(\.selector) }
}

extension Delivery {
    static func now(_ selector: String, _ argument: ObjectRef) -> Delivery {
        Delivery(selector: selector, argument: argument, onMainThread: Thread.isMainThread,
                 thread: ObjectIdentifier(Thread.current), mode: RunLoop.current.currentMode?.rawValue)
    }
}

/// A plain object whose release a test can observe.
final class Canary: @unchecked Sendable {}

/// Whether `object` has been deallocated: it registers a dealloc observer.
final class DeallocFlag: @unchecked Sendable {
    private let flag = Locked(false)
    init(_ object: some MessageReceiver) {
        let flag = self.flag
        object.onDeallocate { _ in flag.mutate { $0 = true } }
    }
    var deallocated: Bool { flag.value }
}

/// Runs the current run loop in `mode`, in bounded passes, until `condition` holds or `limit`
/// seconds have passed (a bound for a failing test, never a measured duration). Returns the
/// condition's last value.
@discardableResult
func spin(_ mode: RunLoop.Mode = .default, limit: TimeInterval = 10, until condition: () -> Bool) -> Bool {
    let end = Date(timeIntervalSinceNow: limit)
    while !condition() && Date() < end {
        _ = RunLoop.current.run(mode: mode, before: Date(timeIntervalSinceNow: 0.01))
    }
    return condition()
}

/// Runs the current run loop in `mode` for `passes` bounded passes (to show that nothing runs).
func spin(_ mode: RunLoop.Mode = .default, passes: Int) {
    for _ in 0..<passes { _ = RunLoop.current.run(mode: mode, before: Date(timeIntervalSinceNow: 0.005)) }
}

/// Collects delivery failures for a test, restoring the default handler after.
final class FailureLog: @unchecked Sendable {
    let failures = Locked<[DeliveryFailure]>([])
    init() {
        let failures = self.failures
        MessageDelivery.errorHandler = { failure in failures.mutate { $0.append(failure) } }
    }
    func restore() { MessageDelivery.errorHandler = MessageDelivery.logToStandardError }
}

let tracking = RunLoop.Mode("SelectorRunLoopTests.tracking")
