import CoreFoundation
import DynamicRuntime
import Foundation
import SelectorRunLoop

// 10: run loops by selector (docs/run-loops.md), each with Foundation's own block API as its
// baseline in the same run: 10a / 10c and 10b / 10d are the ratios to read. Every iteration
// schedules one message and polls the calling thread's loop in the default mode until it has
// run, so the loop's own pass is in both sides of each ratio.

/// The target of the run-loop cases: `benchTick` and `benchTimer:` count their deliveries.
private final class RunLoopBenchTarget: @unchecked Sendable {
    static let shared = RunLoopBenchTarget()

    // Written and read on the benchmark's own thread only (the loop delivers there).
    nonisolated(unsafe) var count = 0
    let object: Object

    private init() {
        do {
            let cls = try RuntimeClass(name: "SFBRunLoopTarget")
            try cls.addMethod("benchTick") { (_: ObjectRef) in RunLoopBenchTarget.shared.count &+= 1 }
            try cls.addMethod("benchTimer:") { (_: ObjectRef, _: ObjectRef) in RunLoopBenchTarget.shared.count &+= 1 }
            object = try cls.createInstance()
        } catch {
            fatalError("run-loop bench fixtures: \(error)")
        }
    }

    // One repeating timer of each kind per run loop, made on first use and kept for the
    // process: Foundation's block Timer is never freed on Linux (docs/run-loops.md), so the
    // baseline re-arms one reachable timer instead of leaking one per call.
    private let timers = NSLock()
    nonisolated(unsafe) private var selectorTimers: [ObjectIdentifier: SelectorTimer] = [:]
    nonisolated(unsafe) private var blockTimers: [ObjectIdentifier: Timer] = [:]

    func selectorTimer() throws -> SelectorTimer {
        let loop = RunLoop.current
        return try timers.withLock {
            if let timer = selectorTimers[ObjectIdentifier(loop)] { return timer }
            let timer = try SelectorTimer(fireAt: Date(timeIntervalSinceNow: 3600), interval: 3600, target: object,
                                          selector: "benchTimer:", repeats: true)
            try timer.schedule(on: loop)
            selectorTimers[ObjectIdentifier(loop)] = timer
            return timer
        }
    }

    func blockTimer() -> Timer {
        let loop = RunLoop.current
        return timers.withLock {
            if let timer = blockTimers[ObjectIdentifier(loop)] { return timer }
            let timer = Timer(fire: Date(timeIntervalSinceNow: 3600), interval: 3600, repeats: true) { _ in
                RunLoopBenchTarget.shared.count &+= 1
            }
            loop.add(timer, forMode: .default)
            blockTimers[ObjectIdentifier(loop)] = timer
            return timer
        }
    }

    /// Runs the current loop, one polling pass at a time, until `count` has passed `before`.
    func poll(until before: Int) {
        while count == before { _ = CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, true) }
    }
}

extension BenchCase {
    /// Cases 10a-10d.
    static var runLoopCases: [BenchCase] {
        [
            BenchCase(id: "10a", name: "perform request: perform(_:afterDelay: 0) + run (÷ 10c)", slow: true) { _ in
                let t = RunLoopBenchTarget.shared
                return { n in
                    for _ in 0..<n {
                        let before = t.count
                        try t.object.perform("benchTick", afterDelay: 0)
                        t.poll(until: before)
                    }
                    return t.count
                }
            },
            BenchCase(id: "10b", name: "selector timer: a repeating SelectorTimer re-armed and fired (÷ 10d)", slow: true) { _ in
                let t = RunLoopBenchTarget.shared
                return { n in
                    let timer = try t.selectorTimer()
                    for _ in 0..<n {
                        let before = t.count
                        timer.fireDate = Date()
                        t.poll(until: before)
                    }
                    return t.count
                }
            },
            BenchCase(id: "10c", name: "Foundation: RunLoop.perform(inModes:block:) + run (baseline of 10a)", slow: true) { _ in
                let t = RunLoopBenchTarget.shared
                return { n in
                    let loop = RunLoop.current
                    for _ in 0..<n {
                        let before = t.count
                        loop.perform(inModes: [.default]) { RunLoopBenchTarget.shared.count &+= 1 }
                        t.poll(until: before)
                    }
                    return t.count
                }
            },
            BenchCase(id: "10d", name: "Foundation: a repeating block Timer re-armed and fired (baseline of 10b)", slow: true) { _ in
                let t = RunLoopBenchTarget.shared
                return { n in
                    let timer = t.blockTimer()
                    for _ in 0..<n {
                        let before = t.count
                        timer.fireDate = Date()
                        t.poll(until: before)
                    }
                    return t.count
                }
            },
        ]
    }
}
