import TestSupport
import XCTest
import Dispatch
import Foundation
import Synchronization
@testable import DynamicRuntime
@testable import MessageThrottle

// The run behind StressTests: its threads (senders, hooker, mutator, churn), the accounting of
// every send against the invariants the test lists, and the tear-down.
final class StressRun: @unchecked Sendable {
    let iterations: Int
    let senders: Int
    let ping = Selector("ping:")
    let echo = Selector("echo:")

    var base: RuntimeClass!
    var sub: RuntimeClass!
    var pool: TargetPool!
    let performed: AtomicCounters
    let timerQueue = DispatchQueue(label: "StressTests.timers")
    let engine = Engine(executor: DispatchQueueExecutor(queue: DispatchQueue(label: "StressTests.engine")))
    let manualClock = ManualClock()

    // Shared counters.
    let phase = Atomic<Int>(0)
    let sendsDone = Atomic<Int>(0)
    let sendersFinished = Atomic<Int>(0)
    let hooksInstalled = Atomic<Int>(0)
    let hookCalls = Atomic<Int>(0)
    let objectsChurned = Atomic<Int>(0)
    let mutatorPerforms = Atomic<Int>(0)
    let mutatorThread = Atomic<UInt>(0)

    // Written by one thread each, read after the join.
    var records: [[SendRecord]]
    var epochModes: [Int: EpochMode] = [:]
    var epochFlushPerforms: [Int: Int] = [:]
    var rulesApplied = 0
    /// Discarded rules and their applied state, kept until the end and inspected for
    /// stranded messages (KB-4).
    var keptRules: [Rule] = []
    var keptStates: [AppliedRule] = []
    var threadErrors: [String] = []
    private let errorLock = NSLock()
    private let group = DispatchGroup()

    init(iterations: Int, senders: Int) {
        self.iterations = iterations
        self.senders = senders
        performed = AtomicCounters(count: iterations * senders)
        records = Array(repeating: [], count: senders)
    }

    private static let serial = Atomic<Int>(0)

    func setUp() throws {
        let n = StressRun.serial.wrappingAdd(1, ordering: .relaxed).newValue
        let tag = "\(getpid()).\(n)"
        base = try RuntimeClass(name: "StressTarget.\(tag)", ivars: [("counter", .int64)])
        sub = try RuntimeClass(name: "StressSub.\(tag)", superclass: base)
        let performed = self.performed
        try base.addMethod(ping) { [unowned self] (_: ObjectRef, id: Int) -> Int in
            performed.increment(id)
            if pthread_self() == UInt(self.mutatorThread.load(ordering: .relaxed)) {
                self.mutatorPerforms.wrappingAdd(1, ordering: .relaxed)
            }
            return id + 1
        }
        try base.addMethod(echo) { (_: ObjectRef, x: Double) -> Double in x }
        var objects: [Object] = []
        for i in 0..<16 { objects.append(try (i % 2 == 0 ? base : sub).createInstance()) }
        pool = TargetPool(objects)
    }

    func fail(_ s: String) { errorLock.withLock { threadErrors.append(s) } }

    var done: Bool { sendersFinished.load(ordering: .sequentiallyConsistent) == senders }

    func start() {
        for t in 0..<senders { spawn("sender \(t)") { self.sender(t) } }
        spawn("mutator") { self.mutator() }
        spawn("hooker") { self.hooker() }
        spawn("churn") { self.churn() }
    }

    func wait() { group.wait() }

    private func spawn(_ name: String, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let thread = Thread { body(); self.group.leave() }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    // MARK: threads

    private func sender(_ t: Int) {
        var local: [SendRecord] = []
        local.reserveCapacity(iterations)
        let poolCount = pool.count
        for i in 0..<iterations {
            let id = t * iterations + i
            let target = pool.take((i &* 7 &+ t &* 3) % poolCount)
            let p0 = phase.load(ordering: .sequentiallyConsistent)
            var result = -1
            do {
                if id % 2 == 0 {
                    result = try target.send(ping, id, as: Int.self)
                } else {
                    result = try target.send(ping, id).intValue ?? -2
                }
            } catch {
                fail("send \(id) threw \(error)")
            }
            let p1 = phase.load(ordering: .sequentiallyConsistent)
            local.append(SendRecord(id: id, phaseBefore: p0, phaseAfter: p1, result: result, performedAtReturn: performed.load(id)))
            sendsDone.wrappingAdd(1, ordering: .relaxed)
        }
        errorLock.withLock { records[t] = local }
        sendersFinished.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    /// Applies and discards one rule per epoch, cycling through the modes.
    private func mutator() {
        mutatorThread.store(UInt(pthread_self()), ordering: .sequentiallyConsistent)
        var epoch = 0
        let modes = EpochMode.allCases
        phase.store(1, ordering: .sequentiallyConsistent)
        while !done {
            epoch += 1
            let mode = modes[epoch % modes.count]
            epochModes[epoch] = mode
            // phase is odd here: between epochs.
            var rule: Rule?
            switch mode {
            case .none:
                break
            case .passThrough:
                rule = Rule(target: base!, selector: ping, duration: .zero, mode: .firstly)
            case .firstly:
                rule = Rule(target: base!, selector: ping, duration: .seconds(3600), mode: .firstly)
            case .last:
                rule = Rule(target: base!, selector: ping, duration: .seconds(3600), mode: .last,
                            executor: ManualExecutor(clock: manualClock))
            case .debounce:
                rule = Rule(target: base!, selector: ping, duration: .milliseconds(1), mode: .debounce,
                            executor: DispatchQueueExecutor(queue: timerQueue))
            }
            if let rule {
                do {
                    try engine.apply(rule)
                    rulesApplied += 1
                } catch {
                    fail("apply \(mode) failed: \(error)")
                }
            }
            phase.store(2 * epoch, ordering: .sequentiallyConsistent)
            // Stay in the epoch for at least 2 ms and 100 sends (at most 30 ms).
            let from = sendsDone.load(ordering: .relaxed)
            let begin = DispatchTime.now().uptimeNanoseconds
            while !done {
                let elapsed = DispatchTime.now().uptimeNanoseconds - begin
                if elapsed > 30_000_000 || (elapsed > 2_000_000 && sendsDone.load(ordering: .relaxed) - from >= 100) { break }
                usleep(200)
            }
            phase.store(2 * epoch + 1, ordering: .sequentiallyConsistent)
            if let rule {
                // Keep the applied state, to look for stranded messages at the end (A8).
                if let state = rule.applied { keptStates.append(state) }
                let before = mutatorPerforms.load(ordering: .relaxed)
                if !rule.discard(pending: .flush) { fail("discard of epoch \(epoch) returned false") }
                if rule.discard(pending: .flush) { fail("second discard of epoch \(epoch) returned true") }
                epochFlushPerforms[epoch] = mutatorPerforms.load(ordering: .relaxed) - before
                keptRules.append(rule)
            }
        }
    }

    /// Installs hooks at every position, on the class, the subclass (an inherited method) and
    /// single objects, then removes them in a shuffled order.
    private func hooker() {
        var rng = SystemRandomNumberGenerator()
        var kept: Object?
        while !done {
            var tokens: [HookToken] = []
            do {
                tokens.append(try base.hook(ping, .before) { [unowned self] ctx in
                    self.hookCalls.wrappingAdd(1, ordering: .relaxed)
                    _ = try ctx.argument(at: 0, as: Int.self)
                })
                tokens.append(try sub.hook(ping, .after) { [unowned self] ctx in
                    self.hookCalls.wrappingAdd(1, ordering: .relaxed)
                    _ = try ctx.returnValue(as: Int.self)
                })
                tokens.append(try base.hook(ping, .instead) { [unowned self] ctx in
                    self.hookCalls.wrappingAdd(1, ordering: .relaxed)
                    try ctx.proceed()
                })
                tokens.append(try base.hook(echo, .after) { _ in })
                // A per-object hook (a hidden subclass). Every other round the object may be
                // deallocated while hooked (the churn thread replaces it): its hooks go with it
                // and remove() then returns false, by design.
                let o = pool.take(Int.random(in: 0..<16, using: &rng))
                tokens.append(try o.hook(ping, .before) { [unowned self] _ in
                    self.hookCalls.wrappingAdd(1, ordering: .relaxed)
                })
                kept = Bool.random(using: &rng) ? o : nil
                hooksInstalled.wrappingAdd(tokens.count, ordering: .relaxed)
                let x: Double = try o.send(echo, 2.5)
                if x != 2.5 { fail("echo: returned \(x)") }
            } catch {
                fail("hooking failed: \(error)")
            }
            usleep(UInt32.random(in: 50...400, using: &rng))
            for token in tokens.shuffled(using: &rng) {
                let objectMayBeGone = token === tokens.last && kept == nil
                if !token.remove(), !objectMayBeGone { fail("\(token) was already removed") }
                if token.remove() { fail("\(token) removed twice") }
            }
            kept = nil
        }
    }

    /// Replaces targets (the old ones are deallocated once no sender holds them) and makes
    /// short-lived objects with weak references and associated values.
    private func churn() {
        var rng = SystemRandomNumberGenerator()
        let key = AssociationKey("stress")
        while !done {
            do {
                let cls: RuntimeClass = Bool.random(using: &rng) ? base : sub
                pool.replace(Int.random(in: 0..<16, using: &rng), with: try cls.createInstance())
                let weak: WeakReference
                do {
                    let temp = try cls.createInstance()
                    temp.setAssociatedValue(try cls.createInstance(), for: key)
                    weak = try WeakReference(temp)
                    let x: Double = try temp.send(echo, 1.5)
                    if x != 1.5 { fail("echo: returned \(x)") }
                }
                if weak.object != nil { fail("weak reference not cleared") }
                objectsChurned.wrappingAdd(1, ordering: .relaxed)
            } catch {
                fail("churn failed: \(error)")
            }
            usleep(UInt32.random(in: 20...200, using: &rng))
        }
    }

    // MARK: checks

    func account() -> StressReport {
        var r = StressReport()
        r.failures = threadErrors
        var inside: [Int: [SendRecord]] = [:]
        // Per epoch, suppressed sends that began by the epoch and returned after it: a discard
        // may also flush what they deferred (KB-4).
        var late: [Int: Int] = [:]
        for rec in records.joined() {
            r.sends += 1
            let count = performed.load(rec.id)
            if count > 1 { r.failures.append("A1: id \(rec.id) performed \(count) times") }
            if count >= 1 { r.performed += 1 }
            if rec.result == rec.id + 1 {
                r.performedInline += 1
                if rec.performedAtReturn != 1 {
                    r.failures.append("A2: id \(rec.id) returned as performed but its count was \(rec.performedAtReturn) at return")
                }
            } else if rec.result == 0 {
                if count >= 1 { r.performedLater += 1 } else { r.dropped += 1 }
            } else {
                r.errors += 1
                r.failures.append("A3: id \(rec.id) returned \(rec.result)")
            }
            if rec.phaseBefore == rec.phaseAfter, rec.phaseBefore % 2 == 0, rec.phaseBefore > 0 {
                inside[rec.phaseBefore / 2, default: []].append(rec)
            }
            if rec.result == 0, rec.phaseBefore < rec.phaseAfter {
                for e in stride(from: (rec.phaseBefore + 1) / 2, through: (rec.phaseAfter - 1) / 2, by: 1) where e > 0 {
                    late[e, default: 0] += 1
                }
            }
        }
        var perMode: [EpochMode: Int] = [:]
        for (epoch, mode) in epochModes {
            perMode[mode, default: 0] += 1
            let sends = inside[epoch] ?? []
            r.insideSends += sends.count
            let inline = sends.filter { $0.result == $0.id + 1 }.count
            let flushed = epochFlushPerforms[epoch] ?? 0
            r.flushPerforms += flushed
            switch mode {
            case .none, .passThrough:
                if inline != sends.count {
                    r.failures.append("A4: epoch \(epoch) (\(mode)): \(sends.count - inline) of \(sends.count) sends inside were not performed")
                }
            case .firstly:
                if inline > 1 { r.failures.append("A5: epoch \(epoch) (firstly): \(inline) sends performed inside one window") }
            case .last, .debounce:
                if inline > 0 { r.failures.append("A6: epoch \(epoch) (\(mode)): \(inline) sends performed in-line") }
                let lateSends = late[epoch] ?? 0
                if mode == .last, !sends.isEmpty, flushed < 1 || flushed > 1 + lateSends {
                    r.failures.append("A7: epoch \(epoch) (last): discard(pending: .flush) performed \(flushed) messages, "
                                      + "expected 1 (+ up to \(lateSends) late)")
                }
                if mode == .debounce, flushed > 1 + lateSends {
                    r.failures.append("A7: epoch \(epoch) (debounce): discard(pending: .flush) performed \(flushed) messages "
                                      + "(\(lateSends) late)")
                }
            }
        }
        r.epochSummary = EpochMode.allCases.map { "\($0.rawValue):\(perMode[$0] ?? 0)" }.joined(separator: ",")
        return r
    }

    /// Discarded rules whose limiter still holds a message (KB-4).
    func strandedMessages() -> Int {
        keptStates.filter { $0.limiter.pending != nil }.count
    }

    func tearDown(baseObjects: Int, baseClosures: Int) -> (objects: Int, closures: Int, disposeError: Error?) {
        keptStates = []
        keptRules = []
        pool.removeAll()
        Runtime.state.collectGarbage()
        // Disposing frees the classes' own method closures. When it is refused (KB-1), those
        // closures are still owned by a live class: not a leak, so not counted.
        var disposeError: Error?
        var stillOwned = 0
        for cls in [sub!, base!] {
            do {
                try cls.dispose()
            } catch {
                disposeError = disposeError ?? error
                stillOwned += cls.methodList.filter { $0.implementation.isClosure }.count
            }
        }
        var objects = 0, closures = 0
        for _ in 0..<100 {
            Runtime.state.collectGarbage()
            objects = Runtime.liveObjectCount - baseObjects
            closures = Runtime.liveClosureCount - baseClosures - stillOwned
            if objects <= 0, closures <= 0 { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return (max(objects, 0), max(closures, 0), disposeError)
    }
}
