import TestSupport
import CDynamicRuntime
import Dispatch
import XCTest
@testable import DynamicRuntime

/// Memory comes back: objects, closure IMPs, retired IMPs after their grace period, and the
/// closures of disposed classes. Counts are compared with their starting values because other
/// tests' classes (never disposed) keep their own closures.
final class LeakTests: XCTestCase {
    func testHundredThousandObjectsAreFreed() throws {
        let cls = try RuntimeClass(name: uniqueName())
        try cls.addMethod("touch:") { (_: ObjectRef, o: Object?) in o != nil }
        try cls.addMethod("copy") { (self_: ObjectRef) -> Object? in self_.retained() }
        let key = AssociationKey()
        let start = Runtime.liveObjectCount
        nonisolated(unsafe) var observed = 0
        for i in 0..<100_000 {
            let obj = try cls.createInstance()
            switch i % 5 {
            case 0: obj.setAssociatedValue(try cls.createInstance(), for: key)
            case 1: XCTAssertNotNil(try WeakReference(obj).object)
            case 2: obj.onDeallocate { _ in observed += 1 }
            case 3: XCTAssertTrue(try obj.send("touch:", obj as Object?) as Bool)
            default: XCTAssertEqual(try obj.send("copy").objectValue, obj)
            }
        }
        XCTAssertEqual(observed, 20_000)
        XCTAssertEqual(Runtime.liveObjectCount, start)
        XCTAssertEqual(sf_class_live_instances(cls.raw), 0)
        try cls.dispose()
    }

    func testTenThousandClosureMethodsAreFreedWithTheirClass() throws {
        Runtime.state.collectGarbage()
        let start = Runtime.liveClosureCount
        let cls = try RuntimeClass(name: uniqueName())
        for i in 0..<10_000 { try cls.addMethod(Selector("leak\(i)")) { (_: ObjectRef) in i } }
        XCTAssertEqual(Runtime.liveClosureCount, start + 10_000)
        do {
            let obj = try cls.createInstance()
            for i in stride(from: 0, to: 10_000, by: 97) { XCTAssertEqual(try obj.send(Selector("leak\(i)")) as Int, i) }
            assertThrows(.classInUse(.init(className: cls.name, reason: "1 instance(s) still alive"))) { try cls.dispose() }
            XCTAssertEqual(Runtime.liveClosureCount, start + 10_000, "a refused dispose frees nothing")
        }
        try cls.dispose()
        XCTAssertEqual(Runtime.liveClosureCount, start, "dispose frees the class's closures")
        XCTAssertEqual(Runtime.state.retiredCount, 0)
    }

    func testReplacedClosuresAreFreedWhenNoReaderRemains() throws {
        let cls = try RuntimeClass(name: uniqueName())
        try cls.addMethod("v") { (_: ObjectRef) in -1 }
        Runtime.state.collectGarbage()
        let start = Runtime.liveClosureCount
        for i in 0..<10_000 { try cls.replaceMethod("v") { (_: ObjectRef) in i } }
        // Each replacement was retired and, with no reader inside a section, freed by the
        // collection the next install ran.
        Runtime.state.collectGarbage()
        XCTAssertEqual(Runtime.liveClosureCount, start)
        XCTAssertEqual(Runtime.state.retiredCount, 0)
        XCTAssertEqual(try cls.createInstance().send("v") as Int, 9_999)
    }

    /// The grace period in action: while this thread is inside a read-side section, nothing it
    /// could still be calling is freed, and an IMP replaced meanwhile stays callable.
    func testReplacedClosuresSurviveWhileThisThreadReads() throws {
        let cls = try RuntimeClass(name: uniqueName())
        try cls.addMethod("v") { (_: ObjectRef) in 0 }
        let obj = try cls.createInstance()
        Runtime.state.collectGarbage()
        let start = Runtime.liveClosureCount
        let sel = Selector("v")

        sf_rcu_enter()
        let first = sf_msg_lookup(obj.raw, sel.raw)!
        for i in 1...100 { try cls.replaceMethod("v") { (_: ObjectRef) in i } }
        XCTAssertEqual(Runtime.liveClosureCount, start + 100, "retired, not freed: a reader may hold them")
        XCTAssertEqual(Runtime.state.retiredCount, 100)
        XCTAssertEqual(unsafeBitCast(first, to: (@convention(c) (sf_id, sf_sel) -> Int).self)(obj.raw, sel.raw), 0,
                       "the IMP loaded before the replacements still runs")
        sf_rcu_exit()

        Runtime.state.collectGarbage()
        XCTAssertEqual(Runtime.liveClosureCount, start)
        XCTAssertEqual(Runtime.state.retiredCount, 0)
        XCTAssertEqual(try obj.send("v") as Int, 100)
    }

    /// The same with the reader on another thread: its section holds back the frees until it
    /// leaves, whatever the writer does meanwhile.
    func testAReaderOnAnotherThreadHoldsBackFrees() throws {
        let cls = try RuntimeClass(name: uniqueName())
        try cls.addMethod("v") { (_: ObjectRef) in 0 }
        let obj = try cls.createInstance()
        Runtime.state.collectGarbage()
        let start = Runtime.liveClosureCount
        let entered = DispatchSemaphore(value: 0)
        let leave = DispatchSemaphore(value: 0)
        let left = DispatchSemaphore(value: 0)
        let raw = UInt(bitPattern: obj.raw)
        let reader = Thread {
            sf_rcu_enter()
            let o = sf_id(bitPattern: raw)!
            let imp = sf_msg_lookup(o, Selector("v").raw)!
            entered.signal()
            leave.wait()
            // Called after the writer replaced (and tried to free) it.
            let r = unsafeBitCast(imp, to: (@convention(c) (sf_id, sf_sel) -> Int).self)(o, Selector("v").raw)
            sf_rcu_exit()
            if r == 0 { left.signal() }
        }
        reader.start()
        entered.wait()
        for i in 1...50 { try cls.replaceMethod("v") { (_: ObjectRef) in i } }
        Runtime.state.collectGarbage()
        XCTAssertEqual(Runtime.liveClosureCount, start + 50)
        leave.signal()
        XCTAssertEqual(left.wait(timeout: .now() + 30), .success, "the reader's old IMP returned its own value")
        Runtime.state.collectGarbage()
        XCTAssertEqual(Runtime.liveClosureCount, start)
    }

    func testRemovedAndDisposedMethodsAreFreed() throws {
        Runtime.state.collectGarbage()
        let start = Runtime.liveClosureCount
        let base = try RuntimeClass(name: uniqueName("Base"))
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: base)
        for i in 0..<100 {
            try base.addMethod(Selector("r\(i)")) { (_: ObjectRef) in i }
            try sub.addMethod(Selector("r\(i)")) { (_: ObjectRef) in -i }
        }
        try base.metaclass.addMethod("classSide") { (_: ObjectRef) in 1 }
        XCTAssertEqual(Runtime.liveClosureCount, start + 201)
        for i in 0..<100 { try sub.removeMethod(Selector("r\(i)")) }
        XCTAssertEqual(Runtime.liveClosureCount, start + 101)
        try sub.dispose()
        try base.dispose()
        XCTAssertEqual(Runtime.liveClosureCount, start, "metaclass closures go with the class too")
    }

    /// A class object can carry associations like any object; disposing the class must
    /// release them, as deallocating an instance does.
    func testDisposeReleasesAClassObjectsAssociations() throws {
        let holder = try RuntimeClass(name: uniqueName("Holder"))
        let cls = try RuntimeClass(name: uniqueName())
        nonisolated(unsafe) var released = false
        do {
            let value = try holder.createInstance()
            value.onDeallocate { _ in released = true }
            cls.setAssociatedValue(value, for: AssociationKey())
            cls.metaclass.setAssociatedValue(value, for: AssociationKey())
        }
        XCTAssertFalse(released)
        try cls.dispose()
        XCTAssertTrue(released, "the associated object outlived its disposed class")
    }

    /// Resident memory does not grow with repeated create/release and replace cycles.
    /// Under AddressSanitizer, which quarantines freed memory on purpose (RSS says nothing
    /// there), the live heap is measured instead (`fwdLiveHeapBytes`).
    func testResidentMemoryStaysBounded() throws {
        let cls = try RuntimeClass(name: uniqueName())
        try cls.addMethod("v") { (_: ObjectRef) in 0 }
        let key = AssociationKey()
        func cycle() throws {
            for i in 0..<50_000 {
                let obj = try cls.createInstance()
                if i % 4 == 0 { obj.setAssociatedValue(i, for: key) }
                if i % 25 == 0 { try cls.replaceMethod("v") { (_: ObjectRef) in i } }
                _ = try obj.send("v") as Int
            }
            Runtime.state.collectGarbage()
        }
        try cycle()  // warm up the allocator and the tables
        if let heapBefore = fwdLiveHeapBytes() {
            for _ in 0..<4 { try cycle() }
            let growth = fwdLiveHeapBytes()! - heapBefore
            print("live heap growth over 200k objects and 8k replacements: \(growth >> 10) KiB")
            XCTAssertLessThan(growth, 1 << 20, "live heap grew by \(growth >> 10) KiB over 200k objects and 8k replacements")
            return
        }
        let before = residentBytes()
        XCTAssertGreaterThan(before, 0, "/proc/self/statm is readable")
        for _ in 0..<4 { try cycle() }
        let growth = residentBytes() - before
        print("RSS growth over 200k objects and 8k replacements: \(growth >> 10) KiB")
        XCTAssertLessThan(growth, 16 << 20, "RSS grew by \(growth >> 10) KiB over 200k objects and 8k replacements")
    }
}
