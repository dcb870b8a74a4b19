import XCTest
import Dispatch
import Foundation
import Glibc
import Synchronization
import CShims
@testable import DynamicRuntime

/// Threads that exit holding objects in thread-specific data: the objects are released by a
/// TSD destructor that runs after the runtime's own, and their dealloc observers send (issue 17
/// item 2). Meanwhile a writer hooks and unhooks the method they send and frees what readers
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
        // Objects of earlier tests may still be dying (a grace period, a timer queue's
        // asyncAfter): take the baseline once the process-wide count stops moving.
        var baseObjects = -1
        for _ in 0..<500 where baseObjects != Runtime.liveObjectCount {
            baseObjects = Runtime.liveObjectCount
            usleep(5_000)
            Runtime.state.collectGarbage()
        }
        let baseClosures = Runtime.liveClosureCount

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
            // Threads of a round run at once; the next round starts when their observers sent.
            let before = sent.load(ordering: .relaxed)
            for t in 0..<threadsPerRound {
                Thread {
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
                }.start()
            }
            let deadline = Date().addingTimeInterval(30)
            while sent.load(ordering: .relaxed) < before + threadsPerRound * objectsPerThread, Date() < deadline {
                usleep(500)
            }
        }
        let total = rounds * threadsPerRound * objectsPerThread
        stop.store(true, ordering: .relaxed)
        writerDone.wait()

        XCTAssertEqual(sent.load(ordering: .relaxed), total, "observers that never sent")
        XCTAssertEqual(wrong.load(ordering: .relaxed), 0, "observer sends that returned a wrong value")
        Runtime.state.collectGarbage()
        XCTAssertEqual(Runtime.liveObjectCount, baseObjects, "objects leaked")
        XCTAssertEqual(Runtime.liveClosureCount, baseClosures, "closures leaked")
        XCTAssertEqual(sf_rcu_oldest_reader(), UInt64.max, "a reader record was left inside a section")
        print("thread-exit stress: rounds=\(rounds) threads=\(rounds * threadsPerRound) observer sends=\(total)")
    }

    /// A reader parked inside a send while three writers churn (hooks, method replacement,
    /// and a hook on the parked method itself): nothing retired after it entered can be freed, but
    /// each writer's collection must cost a constant however long the waiting list grows
    /// (issue 17 item 3; counters, not clocks).
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
