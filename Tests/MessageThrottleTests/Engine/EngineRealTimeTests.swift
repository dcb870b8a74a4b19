import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// One real-time smoke test per mode through the engine, with delayed messages on a
/// DispatchQueueExecutor. Bounds are generous: timing is only checked from below, upper
/// bounds are expectation timeouts.
final class EngineRealTimeTests: XCTestCase {
    private let window = Duration.milliseconds(200)
    private let timeout: TimeInterval = 10

    private struct Delayed {
        var arg: Int
        var at: ThrottleInstant
        var onQueue: Bool
    }

    private struct Outcome {
        var returns: [Int]
        var sent: [ThrottleInstant]
        var delayed: [Delayed]
        var rejected: [Int]
        var immediate: [Int]
    }

    private func makeClass(_ log: CallLog) throws -> RuntimeClass {
        let payload = try RuntimeClass(name: uniqueClassName("RTPayload"), ivars: [("tag", .int64)])
        let cls = try RuntimeClass(name: uniqueClassName("RT"))
        try EngineFixture.defineMethods(on: cls, payloadClass: payload, log: log)
        return cls
    }

    /// Sends `tick:` 1, 2, 3 back to back to a fresh object limited in `mode`, waits for
    /// `expectDelayed` delayed performances, then checks that nothing else runs.
    private func run(_ mode: ThrottleMode, expectDelayed: Int, file: StaticString = #filePath, line: UInt = #line) throws -> Outcome {
        let queue = DispatchQueue(label: "engine.realtime.\(mode)")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 1)
        let clock = MonotonicClock()
        let log = CallLog(clock: clock)
        let cls = try makeClass(log)
        let engine = Engine(executor: DispatchQueueExecutor(queue: queue))
        addTeardownBlock(releasing: engine) { $0.discardAll() }
        let obj = try cls.createInstance()
        let rule = try obj.limit("tick:", oncePer: window, mode: mode, in: engine)
        let rejected = Locked<[Int]>([])
        rule.onReject = { inv in rejected.withLock { $0.append((try? inv.argument(at: 0, as: Int.self)) ?? -1) } }

        let done = expectation(description: "\(mode): delayed messages")
        done.expectedFulfillmentCount = max(expectDelayed, 1)
        if expectDelayed == 0 { done.fulfill() }
        let extra = expectation(description: "\(mode): nothing more")
        extra.isInverted = true
        let delayed = Locked<[Delayed]>([])
        let immediate = Locked<[Int]>([])
        log.setOnCall { h in
            let onQueue = DispatchQueue.getSpecific(key: key) == 1
            guard onQueue else { return immediate.withLock { $0.append(h.arg) } }
            let n = delayed.withLock { list -> Int in
                list.append(Delayed(arg: h.arg, at: clock.now, onQueue: onQueue))
                return list.count
            }
            if n <= expectDelayed { done.fulfill() } else { extra.fulfill() }
        }
        var returns: [Int] = []
        var sent: [ThrottleInstant] = []
        for arg in 1...3 {
            sent.append(clock.now)
            returns.append(try obj.send("tick:", arg, as: Int.self))
        }
        XCTAssertLessThan(sent[2] - sent[0], window, "the burst fits in one window", file: file, line: line)
        wait(for: [done], timeout: timeout)
        wait(for: [extra], timeout: 0.15)
        XCTAssertNil(rule.pendingInvocation, "\(mode)", file: file, line: line)
        return Outcome(returns: returns, sent: sent, delayed: delayed.current, rejected: rejected.current, immediate: immediate.current)
    }

    func testFirstly() throws {
        let r = try run(.firstly, expectDelayed: 0)
        XCTAssertEqual(r.returns, [10, 0, 0])
        XCTAssertEqual(r.immediate, [1])
        XCTAssertTrue(r.delayed.isEmpty)
    }

    func testLast() throws {
        let r = try run(.last, expectDelayed: 1)
        XCTAssertEqual(r.returns, [0, 0, 0])
        XCTAssertEqual(r.delayed.map(\.arg), [3])
        XCTAssertGreaterThanOrEqual(r.delayed[0].at - r.sent[0], window)
    }

    func testDebounce() throws {
        let r = try run(.debounce, expectDelayed: 1)
        XCTAssertEqual(r.returns, [0, 0, 0])
        XCTAssertEqual(r.delayed.map(\.arg), [3])
        XCTAssertGreaterThanOrEqual(r.delayed[0].at - r.sent[2], window)
    }

    func testDebounceMaxWait() throws {
        let r = try run(.debounceMaxWait(.milliseconds(300)), expectDelayed: 1)
        XCTAssertEqual(r.delayed.map(\.arg), [3])
        XCTAssertGreaterThanOrEqual(r.delayed[0].at - r.sent[2], window)
    }

    func testThrottle() throws {
        let r = try run(.throttle(leading: true, trailing: true), expectDelayed: 1)
        XCTAssertEqual(r.returns, [10, 0, 0])
        XCTAssertEqual(r.immediate, [1])
        XCTAssertEqual(r.delayed.map(\.arg), [3])
        XCTAssertGreaterThanOrEqual(r.delayed[0].at - r.sent[0], window)
    }

    func testThrottleTrailingOnly() throws {
        let r = try run(.throttle(leading: false, trailing: true), expectDelayed: 1)
        XCTAssertEqual(r.returns, [0, 0, 0])
        XCTAssertEqual(r.delayed.map(\.arg), [3])
    }

    func testCooldown() throws {
        let r = try run(.cooldown, expectDelayed: 0)
        XCTAssertEqual(r.returns, [10, 0, 0])
        XCTAssertEqual(r.immediate, [1])
        XCTAssertEqual(r.rejected, [2, 3])
    }

    /// The engine's own default executor (a private serial queue) runs delayed messages.
    func testTheEngineDefaultExecutor() throws {
        let log = CallLog(clock: MonotonicClock())
        let cls = try makeClass(log)
        let engine = Engine()
        addTeardownBlock(releasing: engine) { $0.discardAll() }
        let obj = try cls.createInstance()
        try obj.limit("tick:", oncePer: .milliseconds(20), mode: .debounce, in: engine)
        let done = expectation(description: "performed")
        let sender = pthread_self()
        log.setOnCall { h in
            XCTAssertEqual(h.arg, 2)
            XCTAssertTrue(pthread_equal(pthread_self(), sender) == 0, "not on the sending thread")
            done.fulfill()
        }
        XCTAssertEqual(try obj.send("tick:", 1, as: Int.self), 0)
        XCTAssertEqual(try obj.send("tick:", 2, as: Int.self), 0)
        wait(for: [done], timeout: timeout)
    }

    /// A rule's own executor wins over the engine's; flush runs on the calling thread.
    func testARulesExecutorAndFlush() throws {
        let log = CallLog(clock: MonotonicClock())
        let cls = try makeClass(log)
        let engineQueue = DispatchQueue(label: "engine.realtime.engine")
        let ruleQueue = DispatchQueue(label: "engine.realtime.rule")
        let key = DispatchSpecificKey<String>()
        engineQueue.setSpecific(key: key, value: "engine")
        ruleQueue.setSpecific(key: key, value: "rule")
        let engine = Engine(executor: DispatchQueueExecutor(queue: engineQueue))
        addTeardownBlock(releasing: engine) { $0.discardAll() }
        let obj = try cls.createInstance()
        let rule = Rule(target: obj, selector: "tick:", duration: .milliseconds(50), mode: .last,
                        executor: DispatchQueueExecutor(queue: ruleQueue))
        try rule.apply(in: engine)
        let done = expectation(description: "performed on the rule's queue")
        let where_ = Locked<[String]>([])
        log.setOnCall { h in
            where_.withLock { $0.append("\(h.arg):\(DispatchQueue.getSpecific(key: key) ?? "caller")") }
            if h.arg == 1 { done.fulfill() }
        }
        try obj.send("tick:", 1, as: Void.self)
        wait(for: [done], timeout: timeout)
        try obj.send("tick:", 2, as: Void.self)
        XCTAssertTrue(rule.flush())
        XCTAssertEqual(where_.current, ["1:rule", "2:caller"])
        let extra = expectation(description: "nothing more")
        extra.isInverted = true
        log.setOnCall { _ in extra.fulfill() }
        wait(for: [extra], timeout: 0.1)
    }
}
