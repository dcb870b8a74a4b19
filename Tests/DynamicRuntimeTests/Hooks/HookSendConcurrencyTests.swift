// Typed sends reach a hooked method's chain from its method record. 8 threads send
// while another installs and removes instead hooks (one-shot ones too), adds before/after
// hooks and replaces the original with each kind of implementation: every call sees the plain
// method or a whole chain over a valid original. Run under TSan in CI (`Concurrency`).
import TestSupport
import CDynamicRuntime
import Foundation
import Synchronization
import XCTest
@testable import DynamicRuntime

final class HookSendConcurrencyTests: XCTestCase {
    func testTypedSendsWhileHooksAndOriginalsChange() throws {
        sf_tramp_set_enabled(1)
        let cls = try makeClass("HookSendConcurrency")
        let sel: Selector = "mix:with:"
        try cls.addMethod(sel) { (_: ObjectRef, a: Int, b: Int) in a &* 3 &+ b }
        let owner = try makeClass("HookSendConcurrencyOwner")
        let plainIMP = IMP(try owner.addMethod(sel) { (_: ObjectRef, a: Int, b: Int) in a &* 3 &+ b }.implementation.pointer)
        let o = try cls.createInstance()
        let offset = 1_000_000
        let bad = Locked<[String]>([])
        let hooked = Atomic<Int>(0)
        sendWhileChanging(calls: 1500, pause: 30, bad: bad, change: {
            let instead = try cls.hook(sel, .instead) { ctx in
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + offset)
            }
            // The original changes kind under the hook: a C function, a vector body, an `Int` body.
            try cls.replaceMethod(sel, implementation: plainIMP, types: "q@:qq")
            usleep(30)
            try cls.replaceMethod(sel, implementation: try IMP(types: "q@:qq", rawBody: { ret, args in
                ret.storeBytes(of: args[2]!.load(as: Int.self) &* 3 &+ args[3]!.load(as: Int.self), as: Int.self)
            }), types: "q@:qq")
            let before = try cls.hook(sel, .before) { _ in }
            let once = try cls.hook(sel, .instead, options: .removeAfterFirstCall) { ctx in try ctx.proceed() }
            usleep(30)
            try cls.replaceMethod(sel) { (_: ObjectRef, a: Int, b: Int) in a &* 3 &+ b }
            before.remove()
            once.remove()
            instead.remove()
        }, send: { thread, i in
            let a = thread * 100_000 + i
            let r: Int = try o.send(sel, a, 7)
            let want = a * 3 + 7
            if r == want + offset { hooked.add(1, ordering: .relaxed) } else if r != want {
                bad.withLock { if $0.count < 10 { $0.append("mix(\(a)) = \(r)") } }
            }
        })
        XCTAssertEqual(bad.current, [])
        XCTAssertEqual(try o.send(sel, 1, 2) as Int, 5, "every hook removed")
        XCTAssertTrue(cls.ownMethod(for: sel)!.implementation.owner?.hasDirectIntBody ?? false)
        withExtendedLifetime(owner) {}
        // Not asserted: whether a round of the writer overlapped any send depends on scheduling.
        _ = hooked.load(ordering: .relaxed)
    }
}
