import TestSupport
import Foundation
import MessageThrottle
import XCTest

/// 8 threads call `receive` concurrently while another advances the clock:
/// every payload is performed exactly once or dropped, and all are released.
final class ConcurrencyTests: XCTestCase {
    static let modes: [ThrottleMode] = [
        .firstly, .last, .debounce, .debounceMaxWait(.milliseconds(20)),
        .throttle(leading: true, trailing: true), .throttle(leading: true, trailing: false),
        .throttle(leading: false, trailing: true), .cooldown,
    ]

    func testEightThreadsOnAVirtualClock() {
        for mode in Self.modes {
            let h = Harness(mode, .milliseconds(5))
            let threads = 8
            let perThread = 400
            let running = Locked(false)
            let tickerDone = DispatchSemaphore(value: 0)
            Thread {
                while !running.current { h.clock.advance(by: .microseconds(300)) }
                tickerDone.signal()
            }.start()
            let outcomes = Tracker()
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for i in 0..<perThread {
                    let id = thread * perThread + i
                    switch h.deliver(h.probe(id)) {
                    case .now, .deferred: break
                    case .dropped: outcomes.reject(id)
                    }
                    if i % 50 == 0 { h.limiter.mode = mode } // exercise the setter under contention
                }
            }
            running.set(true)
            tickerDone.wait()
            h.clock.advance(by: .seconds(1))
            check(h, mode: mode, total: threads * perThread, reportedDropped: outcomes.rejected.count)
        }
    }

    func testEightThreadsOnADispatchQueue() {
        for mode in Self.modes {
            let tracker = Tracker()
            let queue = DispatchQueue(label: "test.concurrent")
            let clock = MonotonicClock()
            let start = clock.now
            let limiter = Limiter<Probe>(
                mode: mode, duration: .microseconds(300), executor: DispatchQueueExecutor(queue: queue),
                perform: { tracker.fire(Fire(id: $0.id, ms: milliseconds(clock.now) - milliseconds(start), via: .limiter)) },
                reject: { tracker.reject($0.id) }
            )
            let threads = 8
            let perThread = 300
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for i in 0..<perThread {
                    let id = thread * perThread + i
                    if case .performNow(let probe) = limiter.receive(Probe(id) { tracker.release($0) }) {
                        tracker.fire(Fire(id: probe.id, ms: 0, via: .caller))
                    }
                    if i % 16 == 0 { usleep(50) }
                }
            }
            // Let the last timer fire (generous), then drain the queue.
            let deadline = Date().addingTimeInterval(5)
            while limiter.pending != nil, Date() < deadline { usleep(1000) }
            queue.sync {}
            XCTAssertNil(limiter.pending, "\(mode)")
            let counts = tracker.performCounts
            XCTAssertTrue(counts.values.allSatisfy { $0 == 1 }, "\(mode): performed at most once")
            XCTAssertEqual(tracker.released.count, threads * perThread, "\(mode): all released")
            XCTAssertEqual(Set(tracker.released).count, threads * perThread)
            XCTAssertGreaterThan(counts.count, 0)
        }
    }

    private func check(_ h: Harness, mode: ThrottleMode, total: Int, reportedDropped: Int, file: StaticString = #filePath, line: UInt = #line) {
        let counts = h.tracker.performCounts
        XCTAssertTrue(counts.values.allSatisfy { $0 == 1 }, "\(mode): a payload performed twice", file: file, line: line)
        XCTAssertNil(h.limiter.pending, "\(mode)", file: file, line: line)
        let released = h.tracker.released
        XCTAssertEqual(released.count, total, "\(mode): every payload released exactly once", file: file, line: line)
        XCTAssertEqual(Set(released).count, total, file: file, line: line)
        // performed + dropped (directly or superseded) == total
        let performed = counts.count
        XCTAssertGreaterThan(performed, 0, "\(mode)", file: file, line: line)
        XCTAssertLessThanOrEqual(performed + reportedDropped, total, "\(mode)", file: file, line: line)
        if mode == .cooldown {
            XCTAssertEqual(h.tracker.rejected.count, reportedDropped, "every cooldown drop is reported", file: file, line: line)
            XCTAssertEqual(performed + reportedDropped, total, file: file, line: line)
        }
        if case .firstly = mode { XCTAssertEqual(performed + reportedDropped, total, file: file, line: line) }
    }
}
