// Issue 12 (7d, 7e): typed sends through forwardInvocation: on 8 threads at once, sharing the
// signature's spare record, while another thread replaces the handler and flips the
// forwarding target's answer (run under TSan in CI).
import TestSupport
import CShims
import Dispatch
import Foundation
import XCTest
@testable import DynamicRuntime

final class ForwardingTypedStageConcurrencyTests: XCTestCase {
    func testForwardedTypedSendsWhileTheStagesChange() throws {
        let target = try makeClass("TypedStageConcTarget")
        try target.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        let t = try target.createInstance()
        let tref = t.ref
        let forwarder = try makeClass("TypedStageConcForwarder")
        let redirect = Locked(false)
        try forwarder.setForwardingTarget { _, _ in redirect.current ? tref : nil }
        try forwarder.setForwardInvocation { inv in try inv.invoke(target: tref) }
        let f = try forwarder.createInstance()
        let proxy = try Proxy.create(try makeProxyClass("TypedStageConcProxy"), wrapping: t)
        let receivers = [f.ref, proxy.ref]
        let sel = Selector("add:to:")
        let stop = Locked(false)
        let bad = Locked<[String]>([])

        let writer = Thread {
            var i = 0
            while !stop.current {
                i += 1
                switch i % 3 {
                case 0: _ = try? forwarder.setForwardInvocation { inv in try inv.invoke(target: tref) }
                case 1:
                    _ = try? forwarder.setForwardInvocation { inv in
                        try inv.invoke(target: tref)
                        try inv.setReturnValue(try inv.returnValue(as: Int.self) + 1000)
                    }
                default: redirect.set(!redirect.current)
                }
            }
        }
        writer.start()
        DispatchQueue.concurrentPerform(iterations: 8) { th in
            let ref = receivers[th % receivers.count]
            for i in 0..<300 {
                do {
                    let r: Int = try ref.send(sel, i, th)
                    if r != i + th, r != i + th + 1000 { bad.append("thread \(th): \(r) for \(i) + \(th)") }
                } catch {
                    bad.append("thread \(th): \(error)")
                }
            }
        }
        stop.set(true)
        while !writer.isFinished { usleep(1000) }
        XCTAssertEqual(bad.take(), [])
    }
}
