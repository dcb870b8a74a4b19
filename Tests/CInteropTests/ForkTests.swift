import CInteropFixtures
import CShims
import Foundation
import Synchronization
import XCTest
@testable import DynamicRuntime

/// Issue 17: fork() while other threads use the runtime. The child has only the forking
/// thread; without the runtime's atfork handlers it hung on locks other threads held.
final class ForkTests: XCTestCase {
    nonisolated(unsafe) static var shared: (cls: RuntimeClass, obj: Object)?

    /// What a child does: send, create a class, hook, use the C API and associations.
    /// Returns 0, or the step that failed.
    static let childBody: fx_child_fn = { _ in
        guard let (cls, obj) = ForkTests.shared else { return 1 }
        do {
            guard try obj.send("ping:", 1) as Int == 2 else { return 10 }
            let fresh = try RuntimeClass(name: "Fork.Child.\(getpid())")
            try fresh.addMethod(Selector("twice:")) { (_: ObjectRef, x: Int) -> Int in 2 * x }
            guard try fresh.createInstance().send("twice:", 21) as Int == 42 else { return 11 }
            nonisolated(unsafe) var seen = 0
            let token = try cls.hook("ping:", .after) { _ in seen += 1 }
            _ = try obj.send("ping:", 2) as Int
            token.remove()
            guard seen == 1 else { return 12 }
            guard sf_getClass("Fork.Child.\(getpid())") == fresh.raw,
                  sf_sel_registerName("fork.child.\(getpid()):") != nil else { return 13 }
            guard obj.setAssociatedValue(7, for: AssociationKey("fork")) else { return 14 }
            _ = try Signature("q@:{ForkChild\(getpid())=qd}")
        } catch {
            return 20
        }
        return 0
    }

    func testChildrenOfABusyProcessCanUseTheRuntime() throws {
        let cls = try RuntimeClass(name: "Fork.Busy")
        try cls.addMethod("ping:") { (_: ObjectRef, x: Int) -> Int in x + 1 }
        let obj = try cls.createInstance()
        Self.shared = (cls, obj)
        defer { Self.shared = nil }
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        let workers: [@Sendable (Int) throws -> Void] = [
            { _ in _ = try obj.send("ping:", 1) as Int },
            { i in
                let c = try RuntimeClass(name: "Fork.Hammer.\(i)")
                let sel = Selector("m\(i % 64):")
                try c.addMethod(sel) { (_: ObjectRef, x: Int) -> Int in x }
                _ = try c.createInstance().send(sel, i) as Int
                try c.dispose()
            },
            { _ in try cls.hook("ping:", .before) { _ in }.remove() },
            { i in
                _ = Selector("fork.hammer.\(i % 4096):")
                _ = try? Signature("v@:{ForkHammer\(i % 512)=q}")
                let o = try cls.createInstance()
                o.setAssociatedValue(i, for: AssociationKey("h"))
                let weak = WeakReference(o)
                _ = weak.object
            },
        ]
        for work in workers {
            group.enter()
            Thread {
                var i = 0
                while !stop.load(ordering: .relaxed) {
                    do { try work(i) } catch { XCTFail("\(error)") }
                    i += 1
                }
                group.leave()
            }.start()
        }
        var results: [Int32] = []
        for _ in 0..<20 {
            usleep(2000)
            results.append(fx_fork_and_run(Self.childBody, nil, 10))
        }
        stop.store(true, ordering: .relaxed)
        group.wait()
        XCTAssertEqual(results, Array(repeating: 0, count: 20),
                       "children's exit statuses (128 + 14: hung, killed by the alarm)")
    }
}
