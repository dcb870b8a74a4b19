import CDynamicRuntime
import Synchronization
import TestSupport
import XCTest
@testable import DynamicRuntime

/// Weak stores, copies and loads racing the object's last release (objc4 test/arr-weak.m's
/// racing threads, re-expressed; run under TSan in CI): every load gives the live object or
/// nil, never a dying one, and every slot reads nil once the object is gone.
final class WeakStoreConcurrencyTests: XCTestCase {
    func testStoresAndCopiesRacingTheLastRelease() throws {
        let cls = try RuntimeClass(name: uniqueName(name))
        let before = Runtime.liveObjectCount
        let threads = 8
        let rounds = 300
        // One shared slot per round, one private slot per thread and round.
        nonisolated(unsafe) let shared = UnsafeMutablePointer<sf_id?>.allocate(capacity: rounds)
        nonisolated(unsafe) let own = UnsafeMutablePointer<sf_id?>.allocate(capacity: rounds * threads)
        nonisolated(unsafe) let copies = UnsafeMutablePointer<sf_id?>.allocate(capacity: rounds * threads)
        defer { shared.deallocate(); own.deallocate(); copies.deallocate() }
        own.initialize(repeating: nil, count: rounds * threads)
        nonisolated(unsafe) var raws: [sf_id] = []
        for r in 0..<rounds {
            let o = try cls.createInstance()
            sf_retain(o.raw)
            raws.append(o.raw)
            sf_initWeak(shared + r, o.raw)
        }
        let wrong = Atomic<Int>(0)
        runThreads(threads) { t in
            for r in 0..<rounds {
                if t == 0 {
                    // The last strong reference goes while the others store and load.
                    sf_release(raws[r])
                    continue
                }
                let mine = own + (r * threads + t)
                if let live = sf_loadWeakRetained(shared + r) {
                    if live != raws[r] { wrong.add(1, ordering: .relaxed) }
                    // Held strongly here, so the store must keep it.
                    if sf_storeWeak(mine, live) != live { wrong.add(1, ordering: .relaxed) }
                    sf_copyWeak(copies + (r * threads + t), mine)
                    sf_release(live)
                } else {
                    sf_initWeak(copies + (r * threads + t), nil)
                }
                if let again = sf_loadWeakRetained(mine) {
                    if again != raws[r] { wrong.add(1, ordering: .relaxed) }
                    sf_release(again)
                }
            }
        }
        XCTAssertEqual(wrong.load(ordering: .relaxed), 0)
        XCTAssertEqual(Runtime.liveObjectCount, before, "every object was deallocated")
        for r in 0..<rounds {
            XCTAssertNil(sf_loadWeakRetained(shared + r))
            sf_destroyWeak(shared + r)
            for t in 0..<threads {
                XCTAssertNil(own[r * threads + t])
                if t > 0 {
                    XCTAssertNil(sf_loadWeakRetained(copies + (r * threads + t)))
                    sf_destroyWeak(copies + (r * threads + t))
                }
                sf_destroyWeak(own + (r * threads + t))
            }
        }
    }

    func testOneWeakIvarStoredFromManyThreadsWhileTheTargetsDie() throws {
        let target = try RuntimeClass(name: uniqueName(name))
        let owner = try RuntimeClass.allocate(name: uniqueName(name + "Owner"))
        try owner.addWeakIvar("delegate")
        owner.register()
        let before = Runtime.liveObjectCount
        let o = try owner.createInstance()
        let wrong = Atomic<Int>(0)
        runThreads(8) { _ in
            for _ in 0..<500 {
                do {
                    // Each thread's target dies while the others re-point the same ivar.
                    let x = try target.createInstance()
                    try o.setValue(x, forIvar: "delegate")
                    if let read = try o.value(ofIvar: "delegate") as Object?, read.runtimeClass != target {
                        wrong.add(1, ordering: .relaxed)
                    }
                } catch {
                    wrong.add(1, ordering: .relaxed)
                }
            }
        }
        XCTAssertEqual(wrong.load(ordering: .relaxed), 0)
        XCTAssertNil(try o.value(ofIvar: "delegate") as Object?, "the last target went too")
        XCTAssertEqual(Runtime.liveObjectCount, before + 1)
    }
}
