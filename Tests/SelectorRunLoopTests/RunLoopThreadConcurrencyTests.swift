import DynamicRuntime
import Foundation
import SelectorRunLoop
import XCTest

/// Run under TSan in CI (the name contains "Concurrency").
final class RunLoopThreadConcurrencyTests: XCTestCase {
    func testRequestsFromManyThreadsRunOnTheLoopThreadInEachSendersOrder() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let worker = RunLoopThread(name: "worker")
        defer { worker.stop() }
        let senders = 8, perSender = 50
        let arguments = try (0..<senders).map { _ in try (0..<perSender).map { _ in try recorder.make() } }
        DispatchQueue.concurrentPerform(iterations: senders) { s in
            for (i, argument) in arguments[s].enumerated() {
                // Every tenth waits until done: its earlier requests must have run too.
                try! target.perform("take:", on: worker, with: argument, waitUntilDone: i % 10 == 9)
            }
        }
        try target.perform("ping", on: worker, waitUntilDone: true)
        let log = recorder.log.value
        XCTAssertEqual(log.count, senders * perSender + 1)
        XCTAssertEqual(Set(log.map(\.thread)).count, 1, "all on the worker thread")
        XCTAssertFalse(log.contains(where: \.onMainThread))
        for s in 0..<senders {
            let mine = Set(arguments[s].map(\.ref))
            XCTAssertEqual(log.map(\.argument).filter(mine.contains), arguments[s].map(\.ref), "sender \(s)'s order")
        }
    }

    func testTimersDelayedRequestsAndObserversOnAWorkerLoop() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let worker = RunLoopThread(name: "timers")
        defer { worker.stop() }
        let loop = try XCTUnwrap(worker.runLoop)
        let timer = try SelectorTimer(timeInterval: 0.001, target: target, selector: "tick:", repeats: true)
        try timer.schedule(on: loop, forModes: [.default])
        try target.perform("ping", afterDelay: 0.001, on: loop)
        let deadline = Date(timeIntervalSinceNow: 10)
        while (recorder.count < 5 || !recorder.selectors.contains("ping")) && Date() < deadline { usleep(1000) }
        timer.invalidate()
        XCTAssertTrue(recorder.selectors.contains("ping"))
        XCTAssertGreaterThanOrEqual(recorder.selectors.filter { $0 == "tick:" }.count, 4)
        XCTAssertEqual(Set(recorder.log.value.map(\.thread)).count, 1)
        XCTAssertFalse(recorder.log.value.contains(where: \.onMainThread))
    }

    func testStopJoinsReleasesPendingRequestsAndRefusesNewOnes() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let worker = RunLoopThread(name: "stopping")
        let loop = try XCTUnwrap(worker.runLoop)
        var argument: Object? = try recorder.make()
        let freed = DeallocFlag(argument!)
        try target.perform("take:", with: argument, afterDelay: 3600, on: loop)
        argument = nil
        XCTAssertFalse(freed.deallocated)
        worker.stop()
        XCTAssertTrue(worker.isFinished, "stop() joins the thread")
        XCTAssertNil(worker.runLoop)
        XCTAssertTrue(freed.deallocated, "a request that will never run is released")
        XCTAssertThrowsError(try target.perform("ping", on: worker, waitUntilDone: true)) {
            XCTAssertEqual($0 as? RunLoopError, .threadExited(name: "stopping"))
        }
        XCTAssertThrowsError(try target.perform("ping", on: worker, waitUntilDone: false)) {
            XCTAssertEqual($0 as? RunLoopError, .threadExited(name: "stopping"))
        }
        worker.stop()
        XCTAssertEqual(recorder.count, 0)
    }

    func testAWaiterIsReleasedWhenTheThreadStopsFirst() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let worker = RunLoopThread(name: "blocked")
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        try recorder.cls.addMethod("block") { (_: ObjectRef) in
            started.signal()
            gate.wait()
        }
        try target.perform("block", on: worker, waitUntilDone: false)
        started.wait()
        let outcome = Locked<Result<Void, RunLoopError>?>(nil)
        let waiter = Thread {
            do throws(RunLoopError) {
                try target.perform("ping", on: worker, waitUntilDone: true)
                outcome.mutate { $0 = .success(()) }
            } catch {
                outcome.mutate { $0 = .failure(error) }
            }
        }
        waiter.start()
        // The waiter's request is queued behind "block"; stop the loop, then let "block" end.
        let stopper = Thread { worker.stop() }
        stopper.start()
        while !worker.isStopping { usleep(1000) }
        gate.signal()
        let deadline = Date(timeIntervalSinceNow: 10)
        while outcome.value == nil && Date() < deadline { usleep(1000) }
        switch outcome.value {
        case .failure(let error)?: XCTAssertEqual(error, .threadExited(name: "blocked"))
        case .success?: XCTAssertEqual(recorder.selectors, ["ping"], "ran before the stop took effect")
        case nil: XCTFail("the waiter is still blocked")
        }
        worker.stop()
    }

    func testAThreadThatRegisteredItsLoopCanBeNamedFromAnother() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let idle = try Recorder().make()
        let loop = Locked<RunLoop?>(nil)
        let stop = Locked(false)
        let exited = DispatchSemaphore(value: 0)
        let thread = Thread {
            RunLoop.registerCurrentForSelectors()
            // A repeating timer keeps the default mode from running out of inputs.
            let keepAlive = try! SelectorTimer.scheduled(timeInterval: 0.001, target: idle, selector: "ping", repeats: true)
            loop.mutate { $0 = RunLoop.current }
            while !stop.value { _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01)) }
            keepAlive.invalidate()
            exited.signal()
        }
        thread.start()
        while loop.value == nil { usleep(100) }
        try target.perform("ping", afterDelay: 0, on: loop.value!)
        let timer = try SelectorTimer(timeInterval: 0, target: target, selector: "tick:", repeats: false)
        try timer.schedule(on: loop.value!)
        let deadline = Date(timeIntervalSinceNow: 10)
        while recorder.count < 2 && Date() < deadline { usleep(1000) }
        stop.mutate { $0 = true }
        exited.wait()
        loop.mutate { $0 = nil }
        XCTAssertEqual(recorder.selectors.sorted(), ["ping", "tick:"])
        XCTAssertEqual(Set(recorder.log.value.map(\.thread)).count, 1)
        XCTAssertFalse(recorder.log.value.contains(where: \.onMainThread))
    }

    func testRequestsOnARunLoopThreadSeeTheNameItWasGiven() throws {
        try skipUnderThreadSanitizer()
        let recorder = try Recorder()
        let names = Locked<[String?]>([])
        try recorder.cls.addMethod("recordName") { (_: ObjectRef) in names.mutate { $0.append(Thread.current.name) } }
        let target = try recorder.make()
        let worker = RunLoopThread(name: "RL worker")
        defer { worker.stop() }
        try target.perform("recordName", on: worker, waitUntilDone: true)
        try target.perform("recordName", afterDelay: 0, on: XCTUnwrap(worker.runLoop))
        // Performed blocks run in the order performed: this one comes after the delayed one.
        try target.perform("recordName", on: worker, waitUntilDone: true)
        XCTAssertEqual(names.value, ["RL worker", "RL worker", "RL worker"])
    }

    func testALongThreadNameIsCutToLinuxsLimitInsideTheThread() throws {
        try skipUnderThreadSanitizer()
        let recorder = try Recorder()
        let names = Locked<[String?]>([])
        try recorder.cls.addMethod("recordName") { (_: ObjectRef) in names.mutate { $0.append(Thread.current.name) } }
        let target = try recorder.make()
        // Linux keeps 15 bytes: "é" would be the 15th and 16th, so it is left out, not split.
        let worker = RunLoopThread(name: "SelectorRunLooé.worker")
        defer { worker.stop() }
        try target.perform("recordName", on: worker, waitUntilDone: true)
        XCTAssertEqual(names.value, ["SelectorRunLoo"])
        XCTAssertEqual(worker.name, "SelectorRunLooé.worker", "the RunLoopThread keeps the whole name")
    }

    func testCancelTouchesOnlyTheCallingThreadsRunLoop() throws {
        let recorder = try Recorder()
        let target = try recorder.make()
        let worker = RunLoopThread(name: "cancel")
        defer { worker.stop() }
        let loop = try XCTUnwrap(worker.runLoop)
        let workerPing = try target.perform("ping", afterDelay: 3600, on: loop)
        let workerTake = try target.perform("take:", afterDelay: 3600, on: loop)
        let mainPing = try target.perform("ping", afterDelay: 3600)
        let mainTake = try target.perform("take:", afterDelay: 3600)
        XCTAssertEqual(target.cancelPreviousPerformRequests(selector: "ping"), 1, "only this thread's loop, as in Cocoa")
        XCTAssertFalse(mainPing.isPending)
        XCTAssertTrue(workerPing.isPending)
        XCTAssertEqual(target.cancelPreviousPerformRequests(), 1)
        XCTAssertFalse(mainTake.isPending)
        XCTAssertTrue(workerTake.isPending)
        // On the worker's thread, its loop is the current one.
        let counts = Locked<[Int]>([])
        try recorder.cls.addMethod("cancelHere") { (me: ObjectRef) in
            counts.mutate { $0.append(me.cancelPreviousPerformRequests(selector: "ping")) }
            counts.mutate { $0.append(me.cancelPreviousPerformRequests()) }
        }
        try target.perform("cancelHere", on: worker, waitUntilDone: true)
        XCTAssertEqual(counts.value, [1, 1])
        XCTAssertFalse(workerPing.isPending)
        XCTAssertFalse(workerTake.isPending)
        XCTAssertEqual(recorder.count, 0)
    }
}

/// Under ThreadSanitizer a name a thread gives itself is read back as the process's name at
/// random (a plain program that names a thread and reads `Thread.current.name` shows it, with
/// no runtime involved), so the tests of names run in plain and ASan builds only.
private func skipUnderThreadSanitizer() throws {
    try XCTSkipIf(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil,
                  "Thread.current.name is unreliable under ThreadSanitizer")
}
