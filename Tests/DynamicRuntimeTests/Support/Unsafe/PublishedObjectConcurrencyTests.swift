import CDynamicRuntime
import Synchronization
import TestSupport
import XCTest
@testable import DynamicRuntime

/// `PublishedObject` under readers without the lock: a reader inside a read section always
/// finds a whole, live object (never one freed under it), while a writer replaces it; every
/// replaced object is freed once the readers have left, and the last with the slot.
final class PublishedObjectConcurrencyTests: XCTestCase {
    private final class Payload: @unchecked Sendable {
        static let alive = Atomic<Int>(0)
        let a: Int
        let b: Int
        init(_ n: Int) {
            a = n
            b = n &* 31
            Payload.alive.add(1, ordering: .relaxed)
        }
        deinit { Payload.alive.subtract(1, ordering: .relaxed) }
    }

    private final class Holder: @unchecked Sendable {
        let slot = PublishedObject(Payload(0))
        let done = Atomic<Bool>(false)
        let torn = Atomic<Int>(0)
    }

    func testReadersSeeWholeObjectsWhileAWriterReplacesThem() {
        Runtime.state.collectGarbage()
        let baseline = Payload.alive.load(ordering: .relaxed)
        do {
            let shared = Holder()
            run(shared, baseline)
        }
        XCTAssertEqual(Payload.alive.load(ordering: .relaxed) - baseline, 0, "the slot released the last one")
    }

    private func run(_ shared: Holder, _ baseline: Int) {
        let readers = 6, publishes = 4_000
        runThreads(readers + 1) { index in
            if index == 0 {
                for n in 1...publishes {
                    Runtime.state.lock.withLock { shared.slot.publish(Payload(n)) }
                    if n % 64 == 0 { Runtime.state.collectGarbage() }
                }
                shared.done.store(true, ordering: .releasing)
                return
            }
            while !shared.done.load(ordering: .acquiring) {
                sf_rcu_enter()
                let ok = shared.slot.loadNonNil().withObject { $0.b == $0.a &* 31 }
                sf_rcu_exit()
                if !ok { shared.torn.add(1, ordering: .relaxed) }
            }
        }
        XCTAssertEqual(shared.torn.load(ordering: .relaxed), 0, "a reader saw a torn or freed object")
        XCTAssertEqual(shared.slot.object?.a, publishes)
        Runtime.state.collectGarbage()
        XCTAssertEqual(Payload.alive.load(ordering: .relaxed) - baseline, 1, "only the published one is left")
    }
}
