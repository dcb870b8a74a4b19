import CDynamicRuntime
import Synchronization
import TestSupport
import XCTest
@testable import DynamicRuntime

/// Counts and flags in one word, changed from many threads at once (run under TSan in CI).
final class ObjectHeaderConcurrencyTests: XCTestCase {
    func testExactCountsFromEightThreads() throws {
        let cls = try RuntimeClass(name: uniqueName(name))
        let obj = try cls.createInstance()
        nonisolated(unsafe) let raw = obj.raw
        let perThread = 20_000
        // Half the threads retain twice and release once; the others retain and release.
        runThreads(8) { t in
            for _ in 0..<perThread {
                sf_retain(raw)
                if t % 2 == 0 { sf_retain(raw) }
                sf_release(raw)
            }
        }
        XCTAssertEqual(obj.retainCount, 1 + 4 * perThread)
        for _ in 0..<(4 * perThread) { sf_release(raw) }
        XCTAssertEqual(obj.retainCount, 1)
    }

    func testFlagsSetWhileOtherThreadsCountAreKeptAndTheCountStaysExact() throws {
        let cls = try RuntimeClass(name: uniqueName(name))
        let before = Runtime.liveObjectCount
        let count = 200
        // Owning handles in separate slots: each thread of the last step empties its own.
        nonisolated(unsafe) let objects = UnsafeMutableBufferPointer<Object?>.allocate(capacity: count)
        defer { objects.deallocate() }
        for i in 0..<count { (objects.baseAddress! + i).initialize(to: try cls.createInstance()) }
        nonisolated(unsafe) let raws = objects.map { $0!.raw }
        nonisolated(unsafe) var weaks: [WeakReference?] = Array(repeating: nil, count: count)
        let key = AssociationKey("header.concurrent")
        let observed = Atomic<Int>(0)
        runThreads(8) { t in
            if t == 0 {
                // Weak references, associations and observers: flags and the side table.
                for i in 0..<count {
                    weaks[i] = try? WeakReference(ObjectRef(raws[i]))
                    _ = ObjectRef(raws[i]).setAssociatedValue(i, for: key)
                    _ = ObjectRef(raws[i]).onDeallocate { _ in observed.add(1, ordering: .relaxed) }
                }
                return
            }
            for _ in 0..<50 {
                for r in raws {
                    sf_retain(r)
                    sf_release(r)
                }
            }
        }
        for i in 0..<count {
            XCTAssertEqual(objects[i]!.retainCount, 1)
            XCTAssertNotEqual(sf_object_flags(raws[i]) & UInt32(SF_OBJ_HAS_WEAK), 0)
            XCTAssertEqual(objects[i]!.associatedValue(for: key) as? Int, i)
        }
        // The last releases, from many threads: every object goes exactly once.
        runThreads(8) { t in
            for i in stride(from: t, to: count, by: 8) { objects[i] = nil }
        }
        XCTAssertEqual(observed.load(ordering: .relaxed), count)
        XCTAssertTrue(weaks.allSatisfy { $0?.object == nil })
        XCTAssertEqual(Runtime.liveObjectCount, before)
    }
}
