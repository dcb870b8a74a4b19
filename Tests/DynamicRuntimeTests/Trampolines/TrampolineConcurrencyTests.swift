// 8 threads call methods through their trampoline slots (closure IMPs, stack
// arguments) while another thread hooks and unhooks them, so hook slots are retired and reused
// all the time: a slot reused before its grace period would send a call to the wrong context.
import TestSupport
import CDynamicRuntime
import Foundation
import XCTest
@testable import DynamicRuntime

final class TrampolineConcurrencyTests: XCTestCase {
    typealias Sum7 = @convention(c) (sf_id?, sf_sel?, Int, Int, Int, Int, Int, Int, Int) -> Int
    typealias Sum10 = @convention(c) (sf_id?, sf_sel?, Double, Double, Double, Double, Double,
                                      Double, Double, Double, Double, Double) -> Double

    func testCallersWhileHooksComeAndGo() throws {
        sf_tramp_set_enabled(1)
        let cls = try makeClass("TrampConcurrency")
        let sum7: Selector = "a:b:c:d:e:f:g:"
        let sum10: Selector = "a:b:c:d:e:f:g:h:i:j:"
        try cls.addMethod(sum7, types: "q@:qqqqqqq", rawBody: { ret, args in
            ret.storeBytes(of: (2...8).reduce(0) { $0 + args[$1]!.load(as: Int.self) * $1 }, as: Int.self)
        })
        try cls.addMethod(sum10, types: "d@:dddddddddd", rawBody: { ret, args in
            ret.storeBytes(of: (2...11).reduce(0.0) { $0 + args[$1]!.load(as: Double.self) * Double($1) }, as: Double.self)
        })
        let o = try cls.createInstance()
        let address = UInt(bitPattern: o.raw)
        let offset = 1_000_000
        let hooked = Locked(0)
        let plain = Locked(0)
        let bad = Locked<[String]>([])
        let done = Locked(0)
        let senders = 8
        runThreads(senders + 1) { thread in
            if thread == senders {
                var toggles = 0
                while done.current < senders || toggles < 20 {
                    do {
                        let t1 = try cls.hook(sum7, .instead) { ctx in
                            try ctx.proceed()
                            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + offset)
                        }
                        let t2 = try cls.hook(sum10, .before) { _ in }
                        usleep(100)
                        t1.remove()
                        t2.remove()
                    } catch {
                        bad.append("hook: \(error)")
                    }
                    toggles += 1
                    fwdCollect()
                    usleep(100)
                }
                return
            }
            for i in 0..<3000 {
                let raw = sf_id(bitPattern: address)
                sf_rcu_enter()
                let a = thread * 10_000 + i
                let want = (2...8).reduce(0) { $0 + (a + $1) * $1 }
                let imp7 = unsafeBitCast(sf_msg_lookup(raw, sum7.raw)!, to: Sum7.self)
                let r = imp7(raw, sum7.raw, a + 2, a + 3, a + 4, a + 5, a + 6, a + 7, a + 8)
                let d = Double(a)
                let wantD = (2...11).reduce(0.0) { $0 + (d + Double($1)) * Double($1) }
                let imp10 = unsafeBitCast(sf_msg_lookup(raw, sum10.raw)!, to: Sum10.self)
                let rd = imp10(raw, sum10.raw, d + 2, d + 3, d + 4, d + 5, d + 6, d + 7, d + 8, d + 9, d + 10, d + 11)
                sf_rcu_exit()
                if r == want { plain.withLock { $0 += 1 } } else if r == want + offset { hooked.withLock { $0 += 1 } } else {
                    bad.withLock { if $0.count < 10 { $0.append("sum7(\(a)) = \(r), want \(want)") } }
                }
                if rd != wantD { bad.withLock { if $0.count < 10 { $0.append("sum10(\(a)) = \(rd), want \(wantD)") } } }
            }
            done.withLock { $0 += 1 }
        }
        withExtendedLifetime(o) {}
        XCTAssertEqual(bad.current, [])
        XCTAssertGreaterThan(plain.current, 0)
        XCTAssertEqual(plain.current + hooked.current, senders * 3000)
        fwdCollect()
        var live = 0
        sf_tramp_stats(&live, nil, nil)
        XCTAssertGreaterThanOrEqual(live, 2, "the two closure IMPs still hold their slots")
    }
}
