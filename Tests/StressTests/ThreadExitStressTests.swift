import XCTest
import Dispatch
import Foundation
import Glibc
import Synchronization
import CDynamicRuntime
@testable import DynamicRuntime

/// Threads that exit holding objects in thread-specific data: the objects are released by a
/// TSD destructor that runs after the runtime's own, and their dealloc observers send.
/// Meanwhile a writer hooks and unhooks the method they send and frees what readers
/// no longer hold. Every observer's send must return the right value, nothing may leak, and no
/// reader record may be left inside a section.
final class ThreadExitStressTests: XCTestCase {
    /// State for the C destructor, which cannot capture.
    nonisolated(unsafe) static var key = pthread_key_t()

    final class Held {
        let objects: [Object]
        init(_ objects: [Object]) { self.objects = objects }
    }

    func testObjectsReleasedInThreadExitDestructorsSendWhileWritersChurn() throws {
        let env = ProcessInfo.processInfo.environment
        let rounds = max(Int(env["SF_STRESS_ITERATIONS"] ?? "").map { $0 / 250 } ?? 20, 1)
        let threadsPerRound = 8, objectsPerThread = 4

        let cls = try RuntimeClass(name: "Stress.ThreadExit")
        let ping = Selector("ping:")
        try cls.addMethod(ping) { (_: ObjectRef, x: Int) -> Int in x + 1 }
        let target = try cls.createInstance()
        // This test's objects are counted by their class: the process-wide count also moves
        // when an earlier test's object dies late (a grace period, a timer queue's asyncAfter),
        // which made a global baseline fail under load. Closures have no owner to count by:
        // take their baseline once nothing earlier is still being freed.
        var baseClosures = -1
        for _ in 0..<500 where baseClosures != Runtime.liveClosureCount {
            baseClosures = Runtime.liveClosureCount
            usleep(5_000)
            Runtime.state.collectGarbage()
        }

        XCTAssertEqual(pthread_key_create(&Self.key) { value in
            Unmanaged<Held>.fromOpaque(value!).release()
        }, 0)
        defer { pthread_key_delete(Self.key) }

        let sent = Atomic<Int>(0), wrong = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let writerDone = DispatchSemaphore(value: 0)
        Thread {
            while !stop.load(ordering: .relaxed) {
                if let token = try? cls.hook(ping, .after, { _ in }) { token.remove() }
                Runtime.state.collectGarbage()
            }
            writerDone.signal()
        }.start()

        for round in 0..<rounds {
            // Threads of a round run at once; the next round starts when they have exited, so
            // every destructor (and the free after each observer) has finished. Waiting for the
            // observers' count instead let the last object's free race the checks below.
            var threads: [pthread_t] = []
            for t in 0..<threadsPerRound {
                threads.append(try XCTUnwrap(joinableThread {
                    var objects: [Object] = []
                    for i in 0..<objectsPerThread {
                        guard let o = try? cls.createInstance() else { continue }
                        let x = (round * threadsPerRound + t) * objectsPerThread + i
                        o.onDeallocate { _ in
                            let r = (try? target.send(ping, x) as Int) ?? -1
                            if r != x + 1 { wrong.add(1, ordering: .relaxed) }
                            sent.add(1, ordering: .relaxed)
                        }
                        objects.append(o)
                    }
                    _ = try? target.send(ping, 0) as Int  // this thread has a reader record
                    pthread_setspecific(Self.key, Unmanaged.passRetained(Held(objects)).toOpaque())
                }))
            }
            threads.forEach { XCTAssertEqual(pthread_join($0, nil), 0) }
        }
        let total = rounds * threadsPerRound * objectsPerThread
        stop.store(true, ordering: .relaxed)
        writerDone.wait()

        XCTAssertEqual(sent.load(ordering: .relaxed), total, "observers that never sent")
        XCTAssertEqual(wrong.load(ordering: .relaxed), 0, "observer sends that returned a wrong value")
        Runtime.state.collectGarbage()
        XCTAssertEqual(sf_class_live_instances(cls.raw), 1, "objects leaked (only the target may be alive)")
        XCTAssertEqual(Runtime.liveClosureCount, baseClosures, "closures leaked")
        XCTAssertEqual(sf_rcu_oldest_reader(), UInt64.max, "a reader record was left inside a section")
        print("thread-exit stress: rounds=\(rounds) threads=\(rounds * threadsPerRound) observer sends=\(total)")
        withExtendedLifetime(target) {}
    }

    /// Starts `body` on a new joinable thread (Foundation's threads are detached).
    private func joinableThread(_ body: @escaping () -> Void) -> pthread_t? {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        let rc = pthread_create(&thread, nil, { p in
            let box = Unmanaged<ThreadBody>.fromOpaque(p!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        if rc != 0 {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            return nil
        }
        return thread
    }

    /// A reader parked inside a send while three writers churn (hooks, method replacement,
    /// and a hook on the parked method itself): nothing retired after it entered can be freed, but
    /// each writer's collection must cost a constant however long the waiting list grows
    /// (counters, not clocks).
    func testAParkedReaderWhileWritersChurn() throws {
        let cls = try RuntimeClass(name: "Stress.Parked")
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        try cls.addMethod("park") { (_: ObjectRef) -> Int in
            entered.signal()
            release.wait()
            return 1
        }
        try cls.addMethod("work:") { (_: ObjectRef, x: Int) -> Int in x + 1 }
        try cls.addMethod("swap:") { (_: ObjectRef, x: Int) -> Int in x }
        let parked = try cls.createInstance(), o = try cls.createInstance()
        Runtime.state.collectGarbage()
        let closures = Runtime.liveClosureCount
        let waiting = Runtime.state.retiredCount
        Thread {
            XCTAssertEqual(try? parked.send("park") as Int, 1)
            finished.signal()
        }.start()
        entered.wait()

        let visitsBefore = Runtime.state.lock.withLock { sf_retired_visits() }
        let cycles = 400
        let writers: [@Sendable (Int) throws -> Void] = [
            { i in
                let token = try cls.hook("work:", .before) { _ in }
                _ = try o.send("work:", i) as Int
                token.remove()
            },
            { i in try cls.replaceMethod("swap:") { (_: ObjectRef, x: Int) -> Int in x + i - i } },
            { _ in _ = try cls.hook("park", .after) { _ in }.remove() },
        ]
        let group = DispatchGroup()
        for writer in writers {
            group.enter()
            Thread {
                for i in 0..<cycles {
                    do { try writer(i) } catch { XCTFail("\(error)") }
                    Runtime.state.collectGarbage()
                }
                group.leave()
            }.start()
        }
        group.wait()
        let total = cycles * writers.count
        let kept = Runtime.state.retiredCount - waiting
        let visited = Runtime.state.lock.withLock { sf_retired_visits() } - visitsBefore
        print("parked reader, \(writers.count) writers × \(cycles) cycles: \(kept) items waiting, \(visited) entries examined")
        XCTAssertGreaterThanOrEqual(kept, total, "each cycle retires at least one item")
        XCTAssertLessThanOrEqual(kept, total * 8, "more retired per cycle than a cycle unpublishes")
        XCTAssertLessThanOrEqual(visited, UInt64(total * 4), "a collection walked the waiting list")

        release.signal()
        finished.wait()
        Runtime.state.collectGarbage()
        XCTAssertEqual(Runtime.state.retiredCount, waiting, "everything is freed once the reader leaves")
        XCTAssertEqual(Runtime.liveClosureCount, closures, "closures leaked")
    }
}

/// What a joinable thread runs (a C start routine cannot capture).
private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
