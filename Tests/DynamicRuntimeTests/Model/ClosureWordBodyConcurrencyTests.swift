// Typed sends that call closure bodies directly, and forwarded sends, while other
// threads replace, hook and unhook the methods they reach (run under TSan in CI).
import TestSupport
import CDynamicRuntime
import Dispatch
import Foundation
import XCTest
@testable import DynamicRuntime

final class ClosureWordBodyConcurrencyTests: XCTestCase {
    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
    }

    func testDirectAndForwardedSendsWhileMethodsChange() throws {
        let cls = try makeClass("WBConcurrent")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        let o = try cls.createInstance()
        let forwarder = try makeClass("WBConcurrentForwarder")
        let target = o.ref
        try forwarder.setForwardingTarget { _, _ in target }
        let f = try forwarder.createInstance()
        let proxy = try Proxy.create(try makeProxyClass("WBConcurrentProxy"), wrapping: o)
        let sel = Selector("add:to:")
        let bad = sendAddsWhileChanging([o.ref, f.ref, proxy.ref]) { i in
            switch i % 3 {
            case 0: _ = try? cls.replaceMethod(sel) { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
            case 1: _ = try? cls.replaceMethod(sel) { (_: ObjectRef, a: Int, b: Int) -> Int in a + b + 1000 }
            default:
                if let token = try? cls.hook(sel, .instead, { ctx in try ctx.proceed() }) { token.remove() }
            }
        }
        XCTAssertEqual(bad, [])
    }
}
