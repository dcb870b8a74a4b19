import DynamicRuntime
import Foundation
import MessageThrottle
import SelectorRunLoop

/// The run-loop part of the demo: selector timers, a weak-target timer whose owner goes away,
/// a cancelled perform request, a stall named by its selector, and a rule delivered on a run
/// loop in the common modes. Counts and order are printed, never timings.
enum RunLoopDemo {
    /// Runs the section; returns its one-line summary.
    static func run() throws -> String {
        DemoSections.heading("run loops by selector")
        let log = Log()
        let cls = try RuntimeClass(name: "Clock")
        try cls.addMethod("tick:") { (_: ObjectRef, timer: ObjectRef) in
            let n = log.add("tick:")
            if n == 3 { try timer.send("invalidate", as: Void.self) }
        }
        try cls.addMethod("refresh") { (_: ObjectRef) in _ = log.add("refresh") }
        try cls.addMethod("save:") { (_: ObjectRef, _: ObjectRef) in _ = log.add("save:") }

        // 1. A repeating selector timer; its method invalidates it through the timer object.
        let clock = try cls.createInstance()
        let timer = try SelectorTimer.scheduled(timeInterval: 0.001, target: clock, selector: "tick:", repeats: true)
        spin { !timer.isValid }
        print("SelectorTimer -[Clock tick:] every 1 ms  -> \(log.count("tick:")) fires, then [timer invalidate] from the method")

        // 2. A weak-target timer owned by its target: the owner is freed, the timer stops.
        var owner: Object? = try cls.createInstance()
        let freed = Flag()
        owner!.onDeallocate { _ in freed.set() }
        weak var weakTimer: SelectorTimer?
        do {
            let owned = try SelectorTimer(timeInterval: 0.001, weakTarget: owner!, selector: "refresh", repeats: true)
            try owned.schedule()
            owner!.setAssociatedValue(owned, for: AssociationKey("demo.timer"))
            weakTimer = owned
        }
        spin { log.count("refresh") >= 2 }
        owner = nil
        let firesBefore = log.count("refresh")
        spin { weakTimer == nil }
        print("weak-target timer owned by its target   -> fired while the owner lived; owner freed: \(freed.value);"
              + " fires after: \(log.count("refresh") - firesBefore); timer released: \(weakTimer == nil)")

        // 3. A perform request, cancelled: the argument it retained is released.
        var document: Object? = try cls.createInstance()
        let documentFreed = Flag()
        document!.onDeallocate { _ in documentFreed.set() }
        try clock.perform("save:", with: document, afterDelay: 0.01)
        let cancelled = clock.cancelPreviousPerformRequests(selector: "save:", argument: document)
        document = nil
        spin(passes: 3)
        print("perform save: afterDelay, then cancel    -> \(cancelled) cancelled, \(log.count("save:")) sent; argument released: \(documentFreed.value)")

        let stalled = try stall(cls)
        let (whileTrackingCommon, whileTrackingDefault) = try commonModes()
        return "selector timer fired \(log.count("tick:")) times; weak-target timer released with its owner: "
            + "\(freed.value && weakTimer == nil); perform request cancelled: \(cancelled == 1 && log.count("save:") == 0); "
            + "stall named \(stalled); debounce while tracking performed \(whileTrackingCommon) in common modes, "
            + "\(whileTrackingDefault) in the default mode"
    }

    /// 4. A stall: a perform request blocks the loop until the monitor has reported it.
    private static func stall(_ cls: RuntimeClass) throws -> String {
        let reported = DispatchSemaphore(value: 0)
        let report = Box<StallReport>()
        let monitor = try StallMonitor(runLoop: .current, modes: [.default], threshold: 0.02, consecutive: 3) { r in
            if report.setIfEmpty(r) { reported.signal() }
        }
        try cls.addMethod("crunch") { (_: ObjectRef) in _ = reported.wait(timeout: .now() + 10) }
        try cls.createInstance().perform("crunch", afterDelay: 0)
        spin { report.value != nil }
        monitor.stop()
        print("StallMonitor (3 × 20 ms thresholds)      -> \(report.value.map(\.description) ?? "no report")")
        return report.value?.selector.map { "-[Clock \($0.name)]" } ?? "nothing"
    }

    /// 5. A debounced rule delivered on this loop in the common modes, while it "scrolls" in a
    /// tracking mode — and the same rule in the default mode only, which waits.
    private static func commonModes() throws -> (Int, Int) {
        let tracking = RunLoop.Mode("demo.tracking")
        try RunLoop.current.addCommonMode(tracking)
        let cls = try RuntimeClass(name: "SearchBox")
        let log = Log()
        try cls.addMethod("query:") { (_: ObjectRef, _: Int) in _ = log.add("query:") }
        try cls.addMethod("idle") { (_: ObjectRef) in }
        let keepAlive = try SelectorTimer(timeInterval: 0.001, target: try cls.createInstance(), selector: "idle", repeats: true)
        try keepAlive.schedule(forModes: [tracking])
        var whileTracking: [Int] = []
        for modes in [[RunLoop.Mode.common], [.default]] {
            let engine = Engine()
            let box = try cls.createInstance()
            log.reset()
            _ = try box.limit("query:", oncePer: .milliseconds(5), mode: .debounce,
                              executor: try RunLoopExecutor(runLoop: .current, modes: modes), in: engine)
            for q in 1...3 { try box.send("query:", q, as: Void.self) }
            let until = MonotonicClock().now + .milliseconds(50)
            spin(tracking) { MonotonicClock().now > until }
            whileTracking.append(log.count("query:"))
            spin { log.count("query:") == 1 }
            engine.discardAll()
            print("debounce on the loop in \(modes == [.common] ? "common modes" : "default mode"):   while tracking \(whileTracking.last!)"
                  + " performed, back in default \(log.count("query:"))")
        }
        keepAlive.invalidate()
        return (whileTracking[0], whileTracking[1])
    }

    private static func spin(_ mode: RunLoop.Mode = .default, until condition: () -> Bool) {
        let end = Date(timeIntervalSinceNow: 10)
        while !condition() && Date() < end { _ = RunLoop.current.run(mode: mode, before: Date(timeIntervalSinceNow: 0.01)) }
    }

    private static func spin(passes: Int) {
        for _ in 0..<passes { _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.02)) }
    }

    final class Log: Sendable {
        private let counts = Locked<[String: Int]>([:])
        func add(_ name: String) -> Int { counts.withLock { $0[name, default: 0] += 1; return $0[name]! } }
        func count(_ name: String) -> Int { counts.withLock { $0[name, default: 0] } }
        func reset() { counts.withLock { $0 = [:] } }
    }

    final class Flag: Sendable {
        private let flag = Locked(false)
        func set() { flag.withLock { $0 = true } }
        var value: Bool { flag.withLock { $0 } }
    }

    final class Box<T: Sendable>: Sendable {
        private let stored = Locked<T?>(nil)
        func setIfEmpty(_ v: T) -> Bool { stored.withLock { if $0 == nil { $0 = v; return true }; return false } }
        var value: T? { stored.withLock { $0 } }
    }
}
