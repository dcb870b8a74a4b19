// Bench cases 7d, 7e: typed sends through forwardInvocation: on 8 threads at once, sharing the
// signature's spare record, while another thread replaces the handler and flips the
// forwarding target's answer (run under TSan in CI).
import TestSupport
import CDynamicRuntime
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
        let bad = sendAddsWhileChanging([f.ref, proxy.ref]) { i in
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
        XCTAssertEqual(bad, [])
    }
}
