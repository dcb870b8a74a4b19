import TestSupport
import Foundation
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// Concurrent sends, applies, edits and discards through the engine, on real threads with
/// delayed messages on a Dispatch queue. Run under `swift test --sanitize=thread` by the CI
/// (its filter is 'Concurrency|Stress').
final class EngineConcurrencyTests: XCTestCase {
    private let timeout: DispatchTimeInterval = .seconds(120)

    /// Runs `body(i)` on `count` new threads released together; waits for all of them.
    private func onThreads(_ count: Int, file: StaticString = #filePath, line: UInt = #line,
                           _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        for i in 0..<count {
            group.enter()
            let t = Thread {
                ready.signal()
                go.wait()
                body(i)
                group.leave()
            }
            t.stackSize = 1 << 20
            t.start()
        }
        for _ in 0..<count { ready.wait() }
        for _ in 0..<count { go.signal() }
        XCTAssertEqual(group.wait(timeout: .now() + timeout), .success, "threads finished (no deadlock)", file: file, line: line)
    }

    private func makeClasses(_ log: CallLog, _ base: String = #function) throws -> (cls: RuntimeClass, payload: RuntimeClass) {
        let payload = try RuntimeClass(name: uniqueClassName(base + "Payload"), ivars: [("tag", .int64)])
        let cls = try RuntimeClass(name: uniqueClassName(base))
        try EngineFixture.defineMethods(on: cls, payloadClass: payload, log: log)
        return (cls, payload)
    }

    private static let modes: [ThrottleMode] = allEngineModes

    /// 8 senders hammer `tick:` on shared objects while 2 threads apply class and instance
    /// rules, edit them, flush, cancel and discard them. No call is performed twice, nothing
    /// deadlocks or crashes, and at the end the method is restored and nothing leaked.
    func testEightSendersWhileRulesAreAppliedEditedAndDiscarded() throws {
        let log = CallLog(clock: MonotonicClock())
        let (cls, payload) = try makeClasses(log)
        let queue = DispatchQueue(label: "engine.concurrency.timers")
        let engine = Engine(executor: DispatchQueueExecutor(queue: queue))
        let objects = try (0..<4).map { _ in try cls.createInstance() }
        let original = try XCTUnwrap(cls.ownMethod(for: "tick:")?.implementation)
        let baseline = settledLiveObjectCount()
        // No hook of the test's own: the class's trampoline comes and goes with the class rules,
        // so instance rules replay calls captured through trampolines that were since removed.

        let senders = 8
        let perSender = 1500
        let stop = Locked(false)
        let sendersLeft = Locked(senders)
        let atOnce = Locked<[Int]>([])
        let wrongReturns = Locked<[String]>([])
        let errors = Locked<[String]>([])
        let applied = Locked(0)

        onThreads(senders + 2) { t in
            var rng = SystemRandomNumberGenerator()
            if t < senders {
                // A sender: unique arguments, so a double performance would show.
                for i in 0..<perSender {
                    let id = t * perSender + i + 1
                    let obj = objects[Int.random(in: 0..<objects.count, using: &rng)]
                    do {
                        let r = try obj.send("tick:", id, as: Int.self)
                        if r == id * 10 { atOnce.withLock { $0.append(id) } } else if r != 0 {
                            wrongReturns.withLock { $0.append("\(id) -> \(r)") }
                        }
                        if i % 8 == 0 {
                            let arg = try payload.createInstance()
                            try withExtendedLifetime(arg) { try obj.send("take:", arg.ref, as: Void.self) }
                        }
                    } catch {
                        errors.withLock { $0.append("\(error)") }
                    }
                }
                // The last sender to finish stops the appliers.
                if sendersLeft.withLock({ n -> Int in n -= 1; return n }) == 0 { stop.withLock { $0 = true } }
                return
            }
            // An applier / editor / discarder.
            while !stop.current {
                let rules = engine.rules
                switch Int.random(in: 0..<10, using: &rng) {
                case 0, 1:
                    let mode = Self.modes.randomElement(using: &rng)!
                    let d = Duration.microseconds(Int.random(in: -100...2000, using: &rng))
                    if (try? cls.limit("tick:", oncePer: d, mode: mode, in: engine)) != nil { applied.withLock { $0 += 1 } }
                case 2, 3:
                    let mode = Self.modes.randomElement(using: &rng)!
                    let obj = objects.randomElement(using: &rng)!
                    let d = Duration.microseconds(Int.random(in: 0...2000, using: &rng))
                    if (try? obj.limit("tick:", oncePer: d, mode: mode, in: engine)) != nil { applied.withLock { $0 += 1 } }
                case 4:
                    if let obj = objects.randomElement(using: &rng) {
                        _ = try? obj.limit("take:", oncePer: .microseconds(500), mode: .debounce, in: engine)
                    }
                case 5:
                    rules.randomElement(using: &rng)?.mode = Self.modes.randomElement(using: &rng)!
                case 6:
                    rules.randomElement(using: &rng)?.duration = .microseconds(Int.random(in: 0...2000, using: &rng))
                case 7:
                    if Bool.random(using: &rng) { rules.randomElement(using: &rng)?.flush() } else { rules.randomElement(using: &rng)?.cancel() }
                default:
                    rules.randomElement(using: &rng)?.discard(pending: Bool.random(using: &rng) ? .flush : .cancel)
                }
                _ = rules.first.flatMap { _ in engine.rule(for: objects[0], selector: "tick:") }
            }
        }
        XCTAssertTrue(errors.current.isEmpty, "\(errors.current.prefix(5))")
        XCTAssertTrue(wrongReturns.current.isEmpty, "\(wrongReturns.current.prefix(5))")
        XCTAssertGreaterThan(applied.current, 0)
        finish(engine: engine, queue: queue, log: log, original: original, cls: cls, atOnce: atOnce.current,
               total: senders * perSender, baseline: baseline)
    }

    /// The live-object count once earlier tests' objects have stopped dying: they may wait for a
    /// grace period or for an uncancellable asyncAfter on their own timer queue.
    private func settledLiveObjectCount() -> Int {
        var count = -1
        for _ in 0..<500 where count != Runtime.liveObjectCount {
            count = Runtime.liveObjectCount
            usleep(5_000)
            collectRuntimeGarbage()
        }
        return count
    }

    private func finish(engine: Engine, queue: DispatchQueue, log: CallLog, original: IMP, cls: RuntimeClass,
                        atOnce: [Int], total: Int, baseline: Int, file: StaticString = #filePath, line: UInt = #line) {
        engine.discardAll(pending: .flush)
        queue.sync {}   // a timer that was already running has finished
        XCTAssertTrue(engine.rules.isEmpty, file: file, line: line)
        let performed = log.hits.map(\.arg)
        XCTAssertEqual(Set(performed).count, performed.count, "no call performed twice", file: file, line: line)
        XCTAssertTrue(performed.allSatisfy { (1...total).contains($0) }, file: file, line: line)
        XCTAssertTrue(Set(atOnce).isSubset(of: Set(performed)), file: file, line: line)
        XCTAssertGreaterThan(performed.count, 0, file: file, line: line)
        XCTAssertEqual(cls.ownMethod(for: "tick:")?.implementation, original, "the original IMP is back", file: file, line: line)
        collectRuntimeGarbage()
        XCTAssertEqual(Runtime.liveObjectCount, baseline, "every argument and record released", file: file, line: line)
    }

    /// Threads race to apply rules for one selector in one class hierarchy (a chain of
    /// subclasses), and to put instance rules on one object: exactly one wins each round, the
    /// others get conflictingRule.
    func testConcurrentConflictingAppliesLetExactlyOneRuleWin() throws {
        let log = CallLog(clock: MonotonicClock())
        let engine = Engine(executor: ManualExecutor(clock: ManualClock()))
        for round in 0..<20 {
            var chain = [try makeClasses(log, "ConflictRound\(round)").cls]
            for _ in 1..<8 { chain.append(try RuntimeClass(name: uniqueClassName("ConflictSub"), superclass: chain.last!)) }
            let classes = chain
            let obj = try chain[0].createInstance()
            let classWins = Locked(0)
            let objectWins = Locked(0)
            let otherErrors = Locked<[String]>([])
            onThreads(8) { t in
                for (target, wins) in [(classes[t] as any MessageReceiver, classWins), (obj as any MessageReceiver, objectWins)] {
                    do {
                        _ = try target.limit("tick:", oncePer: .milliseconds(10), mode: .firstly, executor: nil, in: engine)
                        wins.withLock { $0 += 1 }
                    } catch ThrottleError.conflictingRule {
                    } catch {
                        otherErrors.withLock { $0.append("\(error)") }
                    }
                }
            }
            XCTAssertEqual(classWins.current, 1, "round \(round)")
            XCTAssertEqual(objectWins.current, 1, "round \(round)")
            XCTAssertEqual(otherErrors.current, [], "round \(round)")
            XCTAssertEqual(engine.rules.count, 2)
            engine.discardAll()
        }
    }

    /// Threads make objects, limit them, send with object arguments and drop them; pending
    /// messages run on a queue, where the objects die and their rules are auto-discarded.
    func testObjectsDyingOnTheTimerQueueDiscardTheirRules() throws {
        let log = CallLog(clock: MonotonicClock())
        let (cls, payload) = try makeClasses(log)
        let queue = DispatchQueue(label: "engine.concurrency.dealloc")
        let engine = Engine(executor: DispatchQueueExecutor(queue: queue))
        // Count this test's own objects: earlier tests' objects may still die meanwhile (on
        // their queues or after a grace period), so the global live count is no baseline.
        let created = Locked(0)
        let died = Locked(0)
        @Sendable func tracked<T: MessageReceiver>(_ obj: T) -> T {
            created.withLock { $0 += 1 }
            _ = obj.onDeallocate { _ in died.withLock { $0 += 1 } }
            return obj
        }
        let perThread = 150
        let errors = Locked<[String]>([])
        onThreads(8) { t in
            var rng = SystemRandomNumberGenerator()
            for i in 0..<perThread {
                do {
                    let obj = tracked(try cls.createInstance())
                    let mode = Self.modes.randomElement(using: &rng)!
                    try obj.limit("take:", oncePer: .microseconds(Int.random(in: 50...1500, using: &rng)), mode: mode, in: engine)
                    for _ in 0..<Int.random(in: 1...4, using: &rng) {
                        let arg = tracked(try payload.createInstance())
                        try arg.setValue(t * perThread + i, forIvar: "tag")
                        try withExtendedLifetime(arg) { try obj.send("take:", arg.ref, as: Void.self) }
                    }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        XCTAssertEqual(errors.current, [])
        // Every object dies once its pending message has run; give the queue time.
        let deadline = Date().addingTimeInterval(30)
        while !engine.rules.isEmpty, Date() < deadline { queue.sync {}; usleep(2000) }
        queue.sync {}
        XCTAssertEqual(engine.rules.count, 0, "every rule went with its object")
        collectRuntimeGarbage()
        while died.current < created.current, Date() < deadline { queue.sync {}; collectRuntimeGarbage(); usleep(2000) }
        XCTAssertGreaterThan(created.current, 0)
        XCTAssertEqual(died.current, created.current, "objects, arguments and records all released")
    }

    /// A rule is applied to an object whose last other reference is released at the same
    /// moment on the timer queue (its pending message under another rule has just run):
    /// the applying thread may then hold the last reference, and must not release it while
    /// it holds the engine's locks (the object's dealloc observers discard rules).
    func testApplyingWhileTheTargetsLastReferenceGoesAwayOnAnotherThread() throws {
        let log = CallLog(clock: MonotonicClock())
        let (cls, _) = try makeClasses(log)
        let queue = DispatchQueue(label: "engine.concurrency.lastref")
        let engine = Engine(executor: DispatchQueueExecutor(queue: queue))
        let outcomes = Locked<[String: Int]>([:])
        onThreads(2) { t in
            var rng = SystemRandomNumberGenerator()
            let clock = MonotonicClock()
            for i in 0..<300 {
                do {
                    var obj: Object? = try cls.createInstance()
                    let delay = Int.random(in: 100...400, using: &rng)
                    try obj!.limit("tick:", oncePer: .microseconds(delay), mode: .debounce, in: engine)
                    try obj!.send("tick:", t * 1000 + i, as: Void.self)   // the pending message retains obj
                    let later = Rule(target: obj!, selector: "say:", duration: .milliseconds(1))
                    obj = nil
                    // Apply around the time the pending message runs and releases obj.
                    let until = clock.now + .microseconds(Int.random(in: 0...delay, using: &rng))
                    while clock.now < until {}
                    do {
                        try later.apply(in: engine)
                        outcomes.withLock { $0["applied", default: 0] += 1 }
                    } catch ThrottleError.targetDeallocated {
                        outcomes.withLock { $0["gone", default: 0] += 1 }
                    }
                } catch {
                    outcomes.withLock { $0["\(error)", default: 0] += 1 }
                }
            }
        }
        let deadline = Date().addingTimeInterval(30)
        while !engine.rules.isEmpty, Date() < deadline { queue.sync {}; usleep(2000) }
        XCTAssertEqual(engine.rules.count, 0, "every rule went with its object")
        XCTAssertEqual(outcomes.current.values.reduce(0, +), 600)
        XCTAssertEqual(Set(outcomes.current.keys).subtracting(["applied", "gone"]), [], "\(outcomes.current)")
    }

    /// Two threads edit a rule's mode and duration while a third applies and discards it; a
    /// fourth checks after each round that the applied limiter runs what the rule says (no
    /// edit lost between the rule and its limiter).
    func testConcurrentEditsAreNotLostAcrossApplyAndDiscard() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = Rule(target: obj, selector: "tick:", duration: .milliseconds(1), mode: .firstly)
        let rounds = 3000
        let mismatches = Locked<[String]>([])
        let go = (0..<3).map { _ in DispatchSemaphore(value: 0) }
        let done = DispatchSemaphore(value: 0)
        let modes = Self.modes
        let engine = fx.engine
        onThreads(4) { t in
            if t == 3 {
                for round in 0..<rounds {
                    go.forEach { $0.signal() }
                    for _ in 0..<3 { done.wait() }
                    if let limiter = rule.applied?.limiter {
                        let (mode, duration) = (rule.mode, rule.duration)
                        if limiter.mode != mode || limiter.duration != duration {
                            mismatches.withLock {
                                $0.append("round \(round): rule \(mode) \(duration), limiter \(limiter.mode) \(limiter.duration)")
                            }
                        }
                    }
                }
                return
            }
            for round in 0..<rounds {
                go[t].wait()
                switch t {
                case 0:
                    if round % 2 == 0 { try? rule.apply(in: engine) } else { rule.discard() }
                default:
                    rule.mode = modes[(round + t) % modes.count]
                    rule.duration = .microseconds(round * 10 + t)
                }
                done.signal()
            }
        }
        XCTAssertEqual(mismatches.current.count, 0, "\(mismatches.current.prefix(5))")
        rule.discard()
    }

    /// 8 senders are inside a `last` rule's hook while it is discarded (KB-4). Whatever a
    /// sender's message meets — the hook gone, a limiter already flushed or cancelled — no
    /// discarded rule may still hold a message afterwards; with `.flush` the message deferred
    /// last is performed, and nothing is performed twice. The window never closes (virtual
    /// clock never advanced), so only the discard can perform a deferred message.
    func testDiscardWhileSendersAreInsideTheHookStrandsNothing() throws {
        let log = CallLog(clock: MonotonicClock())
        let (cls, _) = try makeClasses(log)
        let engine = Engine(executor: ManualExecutor(clock: ManualClock()))
        let obj = try cls.createInstance()
        let senders = 8
        var stranded: [String] = []
        var deferredButLost: [String] = []
        for round in 0..<200 {
            let policy: PendingPolicy = round % 4 == 3 ? .cancel : .flush
            let rule = Rule(target: cls, selector: "tick:", duration: .seconds(3600), mode: .last)
            try engine.apply(rule)
            let state = try XCTUnwrap(rule.applied)
            let deferred = Locked<[Int]>([])
            let discarded = Locked(false)
            onThreads(senders + 1) { t in
                if t == senders {
                    // Discard while the senders are mid-stream.
                    while deferred.current.count < 8 {}
                    rule.discard(pending: policy)
                    discarded.withLock { $0 = true }
                    return
                }
                for i in 0..<200 {
                    let id = round * 100_000 + t * 1000 + i + 1
                    if (try? obj.send("tick:", id, as: Int.self)) == 0 { deferred.withLock { $0.append(id) } }
                    if discarded.current { break }
                }
            }
            if state.limiter.pending != nil { stranded.append("round \(round) (\(policy))") }
            let performed = Set(log.hits.map(\.arg))
            if policy == .flush, !deferred.current.isEmpty, !deferred.current.contains(where: performed.contains) {
                deferredButLost.append("round \(round): \(deferred.current.count) deferred, none performed")
            }
        }
        XCTAssertEqual(stranded, [], "deferred messages left in discarded rules")
        XCTAssertEqual(deferredButLost, [])
        let ids = log.hits.map(\.arg)
        XCTAssertEqual(ids.count, Set(ids).count, "a message was performed twice")
    }
}
