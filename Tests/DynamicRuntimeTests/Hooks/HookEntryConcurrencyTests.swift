// 8 threads send to methods whose hooks take the register entries (integer and
// integer+SSE) while another thread installs and removes single instead-hooks and fuller
// chains: every call sees either the plain method or a whole chain, never a torn one. Run
// under TSan in CI (the class name matches `Concurrency`).
import TestSupport
import CDynamicRuntime
import Foundation
import Synchronization
import XCTest
@testable import DynamicRuntime

final class HookEntryConcurrencyTests: XCTestCase {
    func testSendersWhileSingleInsteadHooksComeAndGo() throws {
        sf_tramp_set_enabled(1)
        let cls = try makeClass("HookEntryConcurrency")
        let isum: Selector = "isum:with:"
        let dsum: Selector = "dsum:with:"
        try cls.addMethod(isum, types: "q@:qq", rawBody: { ret, args in
            ret.storeBytes(of: args[2]!.load(as: Int.self) &* 3 &+ args[3]!.load(as: Int.self), as: Int.self)
        })
        try cls.addMethod(dsum, types: "d@:dd", rawBody: { ret, args in
            ret.storeBytes(of: args[2]!.load(as: Double.self) * 3 + args[3]!.load(as: Double.self), as: Double.self)
        })
        let o = try cls.createInstance()
        let offset = 1_000_000
        let bad = Locked<[String]>([])
        let counts = Locked((plain: 0, hooked: 0))
        let senders = 8
        let calls = 2000
        sendWhileChanging(senders: senders, calls: calls, pause: 50, bad: bad, change: {
            // A single instead-hook on each, then a fuller chain, then nothing.
            let i1 = try cls.hook(isum, .instead) { ctx in
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + offset)
            }
            let d1 = try cls.hook(dsum, .instead) { ctx in
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Double.self) + Double(offset))
            }
            XCTAssertEqual(i1.hook.entry, .integerRegisters(4))
            XCTAssertEqual(d1.hook.entry, .registers(2))
            usleep(50)
            let before = try cls.hook(isum, .before) { _ in }
            let after = try cls.hook(dsum, .after) { _ in }
            usleep(50)
            before.remove()
            after.remove()
            i1.remove()
            d1.remove()
        }, send: { thread, i in
            let a = thread * 100_000 + i
            let r: Int = try o.send(isum, a, 7)
            let d: Double = try o.send(dsum, Double(a), 7.0)
            let want = a * 3 + 7
            let plain = r == want, hooked = r == want + offset
            if !plain && !hooked { bad.withLock { if $0.count < 10 { $0.append("isum(\(a)) = \(r)") } } }
            if d != Double(want), d != Double(want + offset) {
                bad.withLock { if $0.count < 10 { $0.append("dsum(\(a)) = \(d)") } }
            }
            counts.withLock { plain ? ($0.plain += 1) : ($0.hooked += 1) }
        })
        withExtendedLifetime(o) {}
        XCTAssertEqual(bad.current, [])
        let c = counts.current
        XCTAssertEqual(c.plain + c.hooked, senders * calls)
        XCTAssertGreaterThan(c.hooked, 0, "some calls ran through the hooks")
    }
}
