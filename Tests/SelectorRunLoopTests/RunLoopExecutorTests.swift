import DynamicRuntime
import Foundation
import MessageThrottle
import SelectorRunLoop
import XCTest

/// Rules delivered on a run loop, and the "starving" throttle while a user scrolls: the loop
/// runs in a tracking mode, and work scheduled in the default mode waits.
final class RunLoopExecutorTests: XCTestCase {
    // An engine per test, emptied at teardown (as the engine tests do).
    private var engine = Engine()

    override func tearDown() {
        engine.discardAll()
        engine = Engine()
        super.tearDown()
    }

    private func searchBox() throws -> (Recorder, Object, Locked<[Int]>, Locked<[Bool]>) {
        let recorder = try Recorder("SearchBox")
        let queries = Locked<[Int]>([])
        let onMain = Locked<[Bool]>([])
        try recorder.cls.addMethod("query:") { (_: ObjectRef, q: Int) in
            queries.mutate { $0.append(q) }
            onMain.mutate { $0.append(Thread.isMainThread) }
        }
        return (recorder, try recorder.make(), queries, onMain)
    }

    /// Runs `mode` (kept alive by a timer in it) until the monotonic clock has passed `instant`.
    private func scroll(_ mode: RunLoop.Mode, past instant: ThrottleInstant) throws {
        let keepAlive = try SelectorTimer(timeInterval: 0.001, target: try Recorder().make(), selector: "ping", repeats: true)
        try keepAlive.schedule(forModes: [mode])
        spin(mode) { MonotonicClock().now > instant }
        keepAlive.invalidate()
    }

    func testADefaultModeDebounceWaitsWhileTheLoopTracksAndRunsBackInDefault() throws {
        let (_, box, queries, onMain) = try searchBox()
        let executor = try RunLoopExecutor(runLoop: .current, modes: [.default])
        let rule = try box.limit("query:", oncePer: .milliseconds(5), mode: .debounce, executor: executor, in: engine)
        for q in 1...3 { try box.send("query:", q, as: Void.self) }
        try scroll(tracking, past: MonotonicClock().now + .milliseconds(50))
        XCTAssertEqual(queries.value, [], "starved: the loop is in the tracking mode")
        XCTAssertNotNil(rule.pendingInvocation)
        XCTAssertTrue(spin(.default) { queries.value.count == 1 })
        spin(.default, passes: 5)
        XCTAssertEqual(queries.value, [3])
        XCTAssertEqual(onMain.value, [true])
    }

    func testInTheCommonModesItIsPerformedWhileTracking() throws {
        let (_, box, queries, _) = try searchBox()
        try RunLoop.current.addCommonMode(tracking)
        let executor = try RunLoopExecutor(runLoop: .current, modes: [.common])
        let rule = try box.limit("query:", oncePer: .milliseconds(5), mode: .last, executor: executor, in: engine)
        for q in 1...3 { try box.send("query:", q, as: Void.self) }
        XCTAssertTrue(spin(tracking) { queries.value.count == 1 })
        XCTAssertEqual(queries.value, [3])
    }

    func testADispatchExecutorIsNotAffectedByTheLoopsMode() throws {
        let (_, box, queries, onMain) = try searchBox()
        // The queue's timer runs on real time whatever the loop does: a window far longer than
        // three sends in a row keeps a loaded machine from splitting them into two bursts.
        let rule = try box.limit("query:", oncePer: .milliseconds(250), mode: .debounce,
                                 executor: DispatchQueueExecutor(queue: DispatchQueue(label: "RunLoopExecutorTests")), in: engine)
        for q in 1...3 { try box.send("query:", q, as: Void.self) }
        let keepAlive = try SelectorTimer(timeInterval: 0.001, target: try Recorder().make(), selector: "ping", repeats: true)
        try keepAlive.schedule(forModes: [tracking])
        XCTAssertTrue(spin(tracking) { queries.value.count == 1 })
        keepAlive.invalidate()
        XCTAssertEqual(queries.value, [3])
        XCTAssertEqual(onMain.value, [false])
    }

    func testExecuteAndCancelOnAWorkerLoop() throws {
        let worker = RunLoopThread(name: "rules")
        defer { worker.stop() }
        let executor = try RunLoopExecutor(runLoop: XCTUnwrap(worker.runLoop), modes: [.default])
        let ran = Locked<[String]>([])
        let done = DispatchSemaphore(value: 0)
        var canary: Canary? = Canary()
        weak let weakCanary = canary
        let cancelled = executor.schedule(after: .seconds(3600)) { [canary] in
            withExtendedLifetime(canary) { ran.mutate { $0.append("cancelled") } }
        }
        canary = nil
        XCTAssertNotNil(weakCanary)
        cancelled.cancel()
        XCTAssertNil(weakCanary, "cancelling releases the work")
        _ = executor.schedule(after: .milliseconds(1)) { ran.mutate { $0.append("late:\(Thread.isMainThread)") }; done.signal() }
        executor.execute { ran.mutate { $0.append("now:\(Thread.isMainThread)") } }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(ran.value, ["now:false", "late:false"])
        XCTAssertThrowsError(try RunLoopExecutor(runLoop: .current, modes: [])) { XCTAssertEqual($0 as? RunLoopError, .noModes) }
    }
}
