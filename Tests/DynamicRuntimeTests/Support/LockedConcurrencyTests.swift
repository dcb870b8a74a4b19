import TestSupport
import XCTest
@testable import DynamicRuntime

/// `Locked`: the state is reachable only under the lock, the lock is released on every exit,
/// and (debug builds) the owner is known to `assertHeld`.
final class LockedConcurrencyTests: XCTestCase {
    func testWithLockReturnsTheBodysResultAndKeepsMutations() {
        let box = Locked([1, 2])
        let count = box.withLock { state -> Int in
            state.append(3)
            return state.count
        }
        XCTAssertEqual(count, 3)
        XCTAssertEqual(box.withLock { $0 }, [1, 2, 3])
    }

    func testAThrowingBodyReleasesTheLockAndKeepsItsMutations() {
        struct Boom: Error {}
        let box = Locked(0)
        XCTAssertThrowsError(try box.withLock { (state: inout Int) throws(Boom) in
            state = 7
            throw Boom()
        }) { XCTAssertTrue($0 is Boom) }
        // Taken again on the same thread: a lock left held would deadlock here.
        XCTAssertEqual(box.withLock { $0 }, 7)
    }

    func testManyThreadsNeverLoseAnIncrement() {
        let box = Locked(0)
        let threads = 16, increments = 2_000
        runThreads(threads) { _ in
            for _ in 0..<increments { box.withLock { $0 += 1 } }
        }
        XCTAssertEqual(box.withLock { $0 }, threads * increments)
    }

    func testReadModifyWriteUnderTheLockIsAtomic() {
        // Two fields that must always agree; a torn update would be seen by a reader.
        struct Pair { var a = 0, b = 0 }
        let box = Locked(Pair())
        let torn = Locked(0)
        runThreads(8) { i in
            for _ in 0..<1_000 {
                if i.isMultiple(of: 2) {
                    box.withLock { $0.a += 1; $0.b += 1 }
                } else if box.withLock({ $0.a != $0.b }) {
                    torn.withLock { $0 += 1 }
                }
            }
        }
        XCTAssertEqual(torn.withLock { $0 }, 0)
        XCTAssertEqual(box.withLock { $0.a }, 4_000)
    }

    #if DEBUG
    func testOwnerIsTrackedInDebugBuilds() {
        let box = Locked(())
        XCTAssertFalse(box.isHeldByCurrentThread)
        box.withLock { _ in
            XCTAssertTrue(box.isHeldByCurrentThread)
            box.assertHeld()
        }
        XCTAssertFalse(box.isHeldByCurrentThread)
        box.assertNotHeld()
    }

    func testAnotherThreadHoldingTheLockIsNotTheCaller() {
        let box = Locked(())
        let seenInside = Locked<Bool?>(nil)
        box.withLock { _ in
            // While this thread holds it, a second thread must not count as the owner.
            runThreads(1) { _ in seenInside.withLock { $0 = box.isHeldByCurrentThread } }
        }
        XCTAssertEqual(seenInside.withLock { $0 }, false)
    }
    #endif
}
