// Issue 12: typed sends that call closure bodies directly, and forwarded sends, while other
// threads replace, hook and unhook the methods they reach (run under TSan in CI).
import TestSupport
import CShims
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
        let receivers = [o.ref, f.ref, proxy.ref]
        let sel = Selector("add:to:")
        let stop = Locked<Bool>(false)
        let bad = Locked<[String]>([])

        let writer = Thread {
            var i = 0
            while !stop.current {
                i += 1
                switch i % 3 {
                case 0: _ = try? cls.replaceMethod(sel) { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
                case 1: _ = try? cls.replaceMethod(sel) { (_: ObjectRef, a: Int, b: Int) -> Int in a + b + 1000 }
                default:
                    if let token = try? cls.hook(sel, .instead, { ctx in try ctx.proceed() }) { token.remove() }
                }
            }
        }
        writer.start()
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            let ref = receivers[t % receivers.count]
            for i in 0..<300 {
                do {
                    let r: Int = try ref.send(sel, i, t)
                    if r != i + t, r != i + t + 1000 { bad.append("thread \(t): \(r) for \(i) + \(t)") }
                } catch {
                    bad.append("thread \(t): \(error)")
                }
            }
        }
        stop.set(true)
        while !writer.isFinished { usleep(1000) }
        XCTAssertEqual(bad.take(), [])
    }
}
